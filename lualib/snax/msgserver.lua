-- snax.msgserver: the message half of skynet's login pair, a gate built on
-- snax.gateserver. The login server hands a player's secret to the gate
-- (the `login` command); the client then connects here with a handshake
-- frame and exchanges session-tagged requests and responses.
--
-- Frames are netpack's (u16be length + payload):
--   handshake  C->S  "<username>:<index>:<b64 hmac>"   reply: "200 OK" or
--                    "404 User Not Found", "400 Bad Request",
--                    "403 Index Expired", "401 Unauthorized" (then close)
--   request    C->S  content .. u32be session
--   response   S->C  content .. u8 ok .. u32be session
--
-- State (all of it owned here, per gate service):
--   users[username] = user: secret, index (last accepted handshake index),
--     fd/ip (current connection), cache (session -> entry), seq (next
--     entry number), bytes (bytes of the ready responses in cache)
--   conns[fd] = conn from connect to close: addr, user/username once the
--     handshake passed, closing (we closed it), logged_out (closed by
--     msgserver.logout: no disconnect_handler)
--   entry: fd (reply target), response (frame payload, nil while pending),
--     mark (the user's index when produced or last re-sent), seq
--
-- Response cache: a request whose session has an entry marked with an
-- older index (a client that reconnected) gets the stored response again
-- and the handler does not run; see request(). After each response, once
-- seq reaches 2 * expired_number, the ready entries numbered below
-- expired_number are dropped and the rest renumbered, so at most
-- 2 * expired_number ready responses stay per user; conf.cache_bytes (off
-- by default) also drops the oldest ready responses while their bytes
-- exceed it. Pending entries stay until their handler returns.
--
-- Handshake deadline: conf.timeout (default DEFAULT_TIMEOUT, false: none)
-- closes a connection that has not completed its handshake within that
-- many seconds (skynet has no such limit).
--
-- Log: the lines a client can cause (bad handshakes, bad requests,
-- conflicts, handler errors) go through one skynet.loglimit limiter.
local skynet = require "skynet"
local gateserver = require "snax.gateserver"
local deadlines = require "snax.deadline"
local driver = require "skynet.socketdriver"
local crypt = require "skynet.crypt"
local loglimit = require "skynet.loglimit"

local sformat = string.format
local spack = string.pack
local sunpack = string.unpack
local ssub = string.sub
local b64encode = crypt.base64encode
local b64decode = crypt.base64decode

local DEFAULT_EXPIRED <const> = 128
local DEFAULT_TIMEOUT <const> = 30 -- s: a client that behaves sends its handshake at once
local MAX_PAYLOAD <const> = 65535
local MAX_CONTENT <const> = MAX_PAYLOAD - 5 -- a response's u8 ok and u32be session

skynet.register_protocol {
	name = "client",
	id = skynet.PTYPE_CLIENT,
}

local msgserver = {}

local users = {}
local conns = {}
local log = loglimit.new()

function msgserver.username(uid, subid, server)
	return sformat("%s@%s#%s", b64encode(uid), b64encode(server), b64encode(tostring(subid)))
end

function msgserver.userid(username)
	local uid, server, subid = username:match "^([^@]*)@([^#]*)#(.*)$"
	if uid == nil then
		error(sformat("msgserver.userid: bad username (%s)", tostring(username)), 2)
	end
	return b64decode(uid), b64decode(subid), b64decode(server)
end

function msgserver.login(username, secret)
	assert(users[username] == nil)
	users[username] = {
		username = username,
		secret = secret,
		index = 0,
		cache = {},
		seq = 0,
		bytes = 0,
	}
end

-- Each connection's one pending deadline (c.timer).
local cancel_deadline = deadlines.cancel
local deadline = deadlines.arm

-- Closes fd from the server side (pending output is written first).
local function close(fd)
	local c = conns[fd]
	if c and not c.closing then
		c.closing = true
		gateserver.closeclient(fd)
	end
end

function msgserver.logout(username)
	local u = users[username]
	users[username] = nil
	local fd = u.fd
	local c = fd and conns[fd]
	if c and c.user == u then
		c.logged_out = true
		close(fd)
	end
end

function msgserver.ip(username)
	local u = users[username]
	if u and u.fd then
		return u.ip
	end
end

-- Sends a frame payload to fd if it is open and not closing (and, given
-- u, still a connection of that user).
local function send(fd, payload, u)
	local c = conns[fd]
	if c and not c.closing and (u == nil or c.user == u) then
		driver.send(fd, spack(">s2", payload))
	end
end

---------------------------------------------------------------- handshake

-- Returns the user a handshake payload names, or nil and the reply text.
local function check_handshake(payload)
	local username, index_text, hmac_text = payload:match "^([^:]*):([^:]*):([^:]*)"
	if username == nil then
		return nil, "404 User Not Found"
	end
	local u = users[username]
	if u == nil then
		return nil, "404 User Not Found"
	end
	local index = tonumber(index_text)
	if index == nil then
		return nil, "400 Bad Request", "bad index"
	end
	local ok, hmac = pcall(b64decode, hmac_text)
	if not ok then
		return nil, "400 Bad Request", "bad hmac"
	end
	if index <= u.index then
		return nil, "403 Index Expired"
	end
	if crypt.hmac_hash(u.secret, username .. ":" .. index_text) ~= hmac then
		return nil, "401 Unauthorized"
	end
	return u, index
end

local function handshake(fd, c, payload)
	local u, index, why = check_handshake(payload)
	if u == nil then
		if why then
			log("msgserver: bad handshake from %s: %s", c.addr, why)
		end
		send(fd, index)
		return close(fd)
	end
	u.index = index
	u.fd = fd
	u.ip = c.addr
	c.user = u
	c.username = u.username
	cancel_deadline(c) -- the handshake came in time
	send(fd, "200 OK")
end

---------------------------------------------------------------- requests

local function drop(u, session, e)
	if u.cache[session] == e then
		u.cache[session] = nil
		if e.response then
			u.bytes = u.bytes - #e.response
		end
	end
end

-- Bounds u's cache after a response was stored or sent again.
local function retire(u, expired, cap)
	if u.seq >= 2 * expired then
		local top = -1
		for session, e in pairs(u.cache) do
			if e.seq then
				if e.seq < expired then
					drop(u, session, e)
				else
					e.seq = e.seq - expired
					if e.seq > top then
						top = e.seq
					end
				end
			end
		end
		u.seq = top + 1
	end
	if cap == nil or u.bytes <= cap then
		return
	end
	local ready = {}
	for session, e in pairs(u.cache) do
		if e.seq then
			ready[#ready + 1] = { session, e }
		end
	end
	table.sort(ready, function(a, b)
		return a[2].seq < b[2].seq
	end)
	for i = 1, #ready - 1 do -- the newest response always stays
		if u.bytes <= cap then
			break
		end
		drop(u, ready[i][1], ready[i][2])
	end
end

-- Sends a ready entry to fd (its reply target), numbering it.
local function deliver(u, e, expired, cap)
	e.mark = u.index
	e.seq = u.seq
	u.seq = u.seq + 1
	send(e.fd, e.response, u)
	retire(u, expired, cap)
end

local function response_text(ok, result)
	if not ok then
		return nil, tostring(result)
	end
	local t = type(result)
	if t == "string" then
		return result
	elseif t == "number" then
		return tostring(result)
	elseif result == nil then
		return ""
	end
	return nil, sformat("response of type %s", t)
end

local function new_request(conf, c, fd, session, content)
	local u = c.user
	local e = { fd = fd }
	u.cache[session] = e
	local text, err = response_text(pcall(conf.request_handler, c.username, content))
	local tail = spack(">I4", session)
	if text == nil then
		log("msgserver: request of %s failed: %s", c.username, err)
		e.response = "\0" .. tail
	elseif #text > MAX_CONTENT then
		log("msgserver: response too long (%d bytes) for %s", #text, c.username)
		drop(u, session, e)
		return close(e.fd)
	else
		e.response = text .. "\1" .. tail
	end
	if u.cache[session] == e then
		u.bytes = u.bytes + #e.response
	end
	deliver(u, e, conf.expired_number, conf.cache_bytes)
end

local function request(conf, fd, c, payload)
	local n = #payload
	if n < 4 then
		log("Invalid package %s : %s", "short request", crypt.hexencode(payload))
		return close(fd)
	end
	local session = sunpack(">I4", payload, n - 3)
	local u = c.user
	local e = u.cache[session]
	if e == nil then
		return new_request(conf, c, fd, session, ssub(payload, 1, n - 4))
	elseif e.mark ~= u.index then -- sent again, typically after a reconnect
		e.fd = fd
		if e.response then
			return deliver(u, e, conf.expired_number, conf.cache_bytes)
		end
		e.mark = u.index
	elseif e.response then -- the session is used again
		drop(u, session, e)
		return new_request(conf, c, fd, session, ssub(payload, 1, n - 4))
	else
		log("Conflict session %s", crypt.hexencode(tostring(session)))
		return close(fd)
	end
end

---------------------------------------------------------------- gate

local function check_conf(conf)
	assert(conf.login_handler, "msgserver.start: conf.login_handler is required")
	assert(conf.logout_handler, "msgserver.start: conf.logout_handler is required")
	assert(conf.kick_handler, "msgserver.start: conf.kick_handler is required")
	assert(conf.request_handler, "msgserver.start: conf.request_handler is required")
	local expired = conf.expired_number or DEFAULT_EXPIRED
	assert(math.type(expired) == "integer" and expired > 0,
		"msgserver.start: conf.expired_number must be an integer > 0")
	local settings = {
		request_handler = conf.request_handler,
		expired_number = expired,
		cache_bytes = conf.cache_bytes,
	}
	local timeout = conf.timeout
	if timeout == nil then
		timeout = DEFAULT_TIMEOUT
	end
	assert(timeout == false or (type(timeout) == "number" and timeout > 0 and timeout < math.huge),
		"msgserver.start: conf.timeout must be a number of seconds > 0 or false")
	settings.timeout_cs = timeout and math.ceil(timeout * 100)
	return settings
end

function msgserver.start(conf)
	local settings = check_conf(conf)
	local CMD = {
		login = conf.login_handler,
		logout = conf.logout_handler,
		kick = conf.kick_handler,
	}
	local handler = {}

	function handler.command(cmd, _, ...)
		local f = assert(CMD[cmd], "msgserver: unknown command")
		return f(...)
	end

	function handler.open(_, gate_conf)
		local servername = assert(gate_conf.servername, "msgserver.open: conf.servername is required")
		skynet.error(sformat("msgserver listen at : %s %d (%s)", gate_conf.address, gate_conf.port,
			servername))
		return conf.register_handler(servername)
	end

	function handler.connect(fd, addr)
		local c = { addr = addr }
		conns[fd] = c
		gateserver.openclient(fd)
		local timeout_cs = settings.timeout_cs
		if timeout_cs then
			deadline(c, timeout_cs, function()
				if conns[fd] == c and c.user == nil then
					close(fd)
				end
			end)
		end
	end

	function handler.message(fd, msg, sz)
		local payload = skynet.tostring(msg, sz)
		skynet.trash(msg, sz)
		local c = conns[fd]
		if c == nil or c.closing then
			return
		elseif c.user == nil then
			handshake(fd, c, payload)
		else
			request(settings, fd, c, payload)
		end
	end

	function handler.disconnect(fd)
		local c = conns[fd]
		if c == nil then
			return
		end
		conns[fd] = nil
		cancel_deadline(c)
		local u = c.user
		if u == nil or c.logged_out then
			return
		end
		if conf.disconnect_handler then
			local ok, err = pcall(conf.disconnect_handler, c.username)
			if not ok then
				skynet.error(sformat("msgserver: disconnect_handler: %s", tostring(err)))
			end
		end
		u.fd = nil
		u.ip = nil
	end

	function handler.error(fd)
		handler.disconnect(fd)
	end

	return gateserver.start(handler)
end

return msgserver
