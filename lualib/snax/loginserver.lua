-- snax.loginserver: the login half of skynet's login pair (snax.msgserver is
-- the other). `require "snax.loginserver"` returns one function, login(conf),
-- which a login service's main chunk calls instead of skynet.start.
--
-- Services. The first service to run the script finds no local name
-- "." .. conf.name (default "login"), registers it and becomes the master:
-- it starts conf.instance (default 8) copies of its own script, which find
-- the name and become slaves, then listens. The master owns the listening
-- socket, the uid locks of multilogin and the game's login_handler and
-- command_handler; a slave owns the connections handed to it and runs
-- auth_handler. An accepted connection goes to the slaves round-robin:
--
--   master                               slave (owns fd from "auth" on)
--   accept fd ---- call "auth" fd ---->  challenge, key exchange, token,
--                                        auth_handler(token)
--              <-- "ok", server, uid --  (or "401", or "closed": no reply)
--   uid lock, login_handler
--   ------------- send "reply" ------->  writes the line if fd is still its
--
-- Line protocol (every line ends with LF; fields are base64): S challenge,
-- C client DH public, S server DH public, C hmac64(challenge, secret),
-- C DES token, S "200 <b64 subid>" | "401 Unauthorized" | "403 Forbidden" |
-- "406 Not Acceptable". At most one reply line per connection.
--
-- What skynet clients can see is kept: the server never closes a
-- connection after its reply (the client does; what it sends meanwhile is
-- read and dropped), and closes without a reply only when more than
-- INPUT_LIMIT bytes wait unread before the token. Two limits skynet does
-- not have, on by default (false turns one off): conf.timeout (seconds from
-- accept until the reply is written, else the connection is closed without
-- one; DEFAULT_TIMEOUT) and conf.linger (seconds the connection may stay
-- open after the reply; DEFAULT_LINGER).
--
-- Log: the lines a client can cause once per connection go through one
-- skynet.loglimit limiter per service (10 a second, then a count).
local skynet = require "skynet"
local socket = require "skynet.socket"
local crypt = require "skynet.crypt"
local loglimit = require "skynet.loglimit"
local deadlines = require "snax.deadline"

local sformat = string.format
local b64encode = crypt.base64encode
local b64decode = crypt.base64decode

local DEFAULT_INSTANCE <const> = 8
local DEFAULT_TIMEOUT <const> = 30 -- s: a client that behaves logs in within a second
local DEFAULT_LINGER <const> = 10 -- s: a client closes once it read its reply
local INPUT_LIMIT <const> = 8192 -- unread bytes before the token is processed
local SOCKET_CLOSED <const> = setmetatable({}, {
	__tostring = function()
		return "socket error"
	end,
})

local log = loglimit.new()

-- Each connection's one pending deadline (c.timer).
local cancel_deadline = deadlines.cancel
local deadline = deadlines.arm

local function check_seconds(conf, key, default)
	local v = conf[key]
	if v == false then
		return nil
	elseif v == nil then
		v = default
	end
	if type(v) ~= "number" or not (v > 0 and v < math.huge) then
		error(sformat("loginserver: conf.%s must be a number of seconds > 0 or false (%s)", key,
			tostring(v)), 3)
	end
	return math.ceil(v * 100)
end

---------------------------------------------------------------- slave

-- conns[fd] = { replied = bool } while the slave owns fd.
local function launch_slave(conf)
	local auth_handler = assert(conf.auth_handler, "loginserver: conf.auth_handler is required")
	local timeout_cs = check_seconds(conf, "timeout", DEFAULT_TIMEOUT)
	local linger_cs = check_seconds(conf, "linger", DEFAULT_LINGER)
	local conns = {}

	local function readline(fd)
		local line = not socket.invalid(fd) and socket.readline(fd)
		if not line then
			error(SOCKET_CLOSED)
		end
		return line
	end

	local function writeline(fd, text)
		if not socket.write(fd, text .. "\n") then
			error(SOCKET_CLOSED)
		end
	end

	local function decode(line)
		local ok, bytes = pcall(b64decode, line)
		if not ok then
			error("invalid base64 text", 0)
		end
		return bytes
	end

	-- The exchange of one connection: the lines, then auth_handler.
	-- Returns server, uid, secret; raises SOCKET_CLOSED or a reason (401).
	local function exchange(fd)
		local challenge = crypt.randomkey()
		writeline(fd, b64encode(challenge))
		local client_key = decode(readline(fd))
		if #client_key ~= 8 then
			error("invalid client key", 0)
		end
		local server_private = crypt.randomkey()
		writeline(fd, b64encode(crypt.dhexchange(server_private)))
		local secret = crypt.dhsecret(client_key, server_private)
		local answer = decode(readline(fd))
		if crypt.hmac64(challenge, secret) ~= answer then
			error("challenge failed", 0)
		end
		local token = crypt.desdecode(secret, decode(readline(fd)))
		local server, uid = auth_handler(token)
		return server, uid, secret
	end

	-- Closes fd if it is still the connection c.
	local function close_if(fd, c)
		if conns[fd] == c then
			socket.close(fd)
		end
	end

	-- Reads and drops what the client sends after the exchange, until the
	-- connection closes; then forgets it.
	local function drain(fd, c)
		if not socket.invalid(fd) then
			socket.limit(fd, nil)
			while socket.read(fd) do
			end
			socket.close(fd)
		end
		if conns[fd] == c then
			conns[fd] = nil
		end
		cancel_deadline(c)
	end

	local CMD = {}

	function CMD.auth(fd, addr)
		log("connect from %s (fd = %d)", addr, fd)
		local c = { replied = false }
		conns[fd] = c
		if not socket.start(fd) then
			conns[fd] = nil
			log("auth failed: socket (fd = %d) closed", fd)
			return "closed"
		end
		socket.limit(fd, INPUT_LIMIT)
		if timeout_cs then
			deadline(c, timeout_cs, function()
				if not c.replied then
					close_if(fd, c)
				end
			end)
		end
		local ok, server, uid, secret = pcall(exchange, fd)
		skynet.fork(drain, fd, c)
		if ok then
			return "ok", server, uid, secret
		elseif server == SOCKET_CLOSED then
			log("auth failed: socket (fd = %d) closed", fd)
			return "closed"
		end
		return "401", tostring(server)
	end

	-- Writes the master's reply line for fd, if fd is still open here.
	function CMD.reply(fd, line, what)
		local c = conns[fd]
		if c == nil or c.replied or not socket.write(fd, line .. "\n") then
			log("%s failed: socket (fd = %d) closed", what, fd)
			return
		end
		c.replied = true
		cancel_deadline(c)
		if linger_cs and conns[fd] == c then
			deadline(c, linger_cs, function()
				close_if(fd, c)
			end)
		end
	end

	skynet.dispatch("lua", function(session, _, cmd, ...)
		local f = assert(CMD[cmd], "loginserver: unknown slave command")
		if session == 0 then
			f(...)
		else
			skynet.ret(skynet.pack(f(...)))
		end
	end)
end

---------------------------------------------------------------- master

local REPLY <const> = {
	[401] = "401 Unauthorized",
	[403] = "403 Forbidden",
	[406] = "406 Not Acceptable",
}

-- The subid as login_handler returned it, as text; nil for a type that
-- cannot be sent (then there is no reply).
local function subid_text(subid)
	local t = type(subid)
	if t == "string" then
		return subid
	elseif t == "number" then
		return tostring(subid)
	elseif not subid then
		return ""
	end
end

local function launch_master(conf, name)
	local login_handler = assert(conf.login_handler, "loginserver: conf.login_handler is required")
	local command_handler = assert(conf.command_handler,
		"loginserver: conf.command_handler is required")
	local port = assert(tonumber(conf.port), "loginserver: conf.port must be a number")
	local host = conf.host or "0.0.0.0"
	local instance = conf.instance or DEFAULT_INSTANCE
	assert(math.type(instance) == "integer" and instance > 0,
		"loginserver: conf.instance must be an integer > 0")
	local multilogin = conf.multilogin
	local slaves = {}
	local next_slave = 1
	local logging_in = {} -- uid -> true while its login_handler runs (multilogin off)

	skynet.register(name)
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.ret(skynet.pack(command_handler(cmd, ...)))
	end)
	for i = 1, instance do
		slaves[i] = skynet.newservice(SERVICE_NAME)
	end

	local function reply(slave, fd, code, line)
		skynet.send(slave, "lua", "reply", fd, line or REPLY[code], "response " .. code)
	end

	-- The master's half of one login, after the slave's exchange passed.
	local function login(slave, fd, server, uid, secret)
		if not multilogin then
			if logging_in[uid] then
				return reply(slave, fd, 406)
			end
			logging_in[uid] = true -- a nil uid raises here: no reply
		end
		local ok, subid = pcall(login_handler, server, uid, secret)
		if not multilogin then
			logging_in[uid] = nil
		end
		if not ok then
			log("invalid client (fd = %d) error = %s", fd, tostring(subid))
			return reply(slave, fd, 403)
		end
		local text = subid_text(subid)
		if text == nil then
			error(sformat("subid of type %s cannot be sent", type(subid)))
		end
		reply(slave, fd, 200, "200 " .. b64encode(text))
	end

	local function accept(fd, addr)
		local slave = slaves[next_slave]
		next_slave = next_slave % #slaves + 1
		local status, server, uid, secret = skynet.call(slave, "lua", "auth", fd, addr)
		if status == "closed" then
			return log("invalid client (fd = %d) error = %s", fd, tostring(SOCKET_CLOSED))
		elseif status ~= "ok" then
			log("invalid client (fd = %d) error = %s", fd, server)
			return reply(slave, fd, 401)
		end
		local ok, err = pcall(login, slave, fd, server, uid, secret)
		if not ok then
			log("invalid client (fd = %d) error = %s", fd, tostring(err))
		end
	end

	local id, bound_host, bound_port = socket.listen(host, port)
	skynet.error(sformat("login server listen at : %s %d", bound_host or host, bound_port or port))
	socket.start(id, accept)
end

---------------------------------------------------------------- entry

return function(conf)
	if type(conf) ~= "table" then
		error("loginserver: conf must be a table", 2)
	end
	local name = "." .. (conf.name or "login")
	skynet.start(function()
		if skynet.localname(name) then
			launch_slave(conf)
		else
			launch_master(conf, name)
		end
	end)
end
