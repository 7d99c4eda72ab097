-- skynet.socketchannel: a request/response channel over one TCP connection
-- that (re)connects on demand, logs in through an optional auth function
-- after every connect, and hands each answer to the coroutine that asked.
--
-- Connections. Each TCP connection gets its own `conn` table: the socket
-- id, the `sock` object given to response functions, the callers waiting
-- on it, and its dispatcher coroutine (the only coroutine that reads the
-- socket). A caller's record belongs to the connection its request was
-- written on, so bytes of a dead connection can never answer a request of
-- a newer one. `drop(self, conn, err)` is the single way a connection
-- ends: it marks it dead, detaches it from the channel, wakes EVERY caller
-- still waiting on it with `err` and closes the socket; whoever notices
-- the end first (a failed read, a response that raised, a failed write,
-- a peer close seen while idle, close, changehost, a request timeout)
-- calls it, and later calls are no-ops. No caller can be left waiting.
--
-- Modes. Order mode (no desc.response): conn.queue is a FIFO of records
-- {fn = response function, ...} in write order; the dispatcher runs them
-- one after another. Session mode: conn.sessions maps a session key to
-- its record; the dispatcher loops on desc.response(sock). A record is
-- woken with rec.done = true and rec.ok / rec.data set.
--
-- Connecting. One coroutine connects at a time (self.connecting holds
-- it); others queue in self.connect_waiters and re-check afterwards. The
-- connection is published as self.conn at once, but is `ready` only after
-- auth returned: meanwhile only the auth coroutine (self.auth_co) may use
-- it. Reconnection is lazy: nothing reconnects until the next call.
--
-- Units: timeouts and backoff delays in centiseconds.
local skynet = require "skynet"
local socket = require "skynet.socket"
local driver = require "skynet.socketdriver"

local coroutine_running = coroutine.running
local sformat = string.format
local tostring = tostring
local type = type
local pcall = pcall
local skynet_wait = skynet.wait
local skynet_wakeup = skynet.wakeup

local socket_error = setmetatable({}, {
	__tostring = function()
		return "[Error: socket]"
	end,
})

local sc = { error = socket_error }

local channel = {}
local channel_meta = { __index = channel, __name = "socketchannel" }

local RETRY_CAP_CS <const> = 1000 -- endless retry: backoff doubles up to 10 s

---------------------------------------------------------------- sock object

local sock_methods = {}
local sock_meta = { __index = sock_methods }

local function raw_read(sock, n)
	local data = socket.read(sock[1], n)
	if not data then
		error(socket_error)
	end
	return data
end

local function raw_readline(sock, sep)
	local data = socket.readline(sock[1], sep)
	if not data then
		error(socket_error)
	end
	return data
end

function sock_methods:read(n)
	return self.read_fn(self, n)
end

function sock_methods:readline(sep)
	return self.readline_fn(self, sep)
end

---------------------------------------------------------------- dropping

local function wake(rec, ok, data)
	if not rec.done then
		rec.done, rec.ok, rec.data = true, ok, data
		skynet_wakeup(rec)
	end
end

local function drop(self, conn, err)
	if conn.dead then
		return
	end
	conn.dead = true
	if self.conn == conn then
		self.conn = nil
	end
	local queue = conn.queue
	for i = conn.head, conn.tail do
		wake(queue[i], false, err)
		queue[i] = nil
	end
	conn.head, conn.tail = 1, 0
	for k, rec in pairs(conn.sessions) do
		conn.sessions[k] = nil
		wake(rec, false, err)
	end
	local idle = conn.idle
	if idle then
		conn.idle = nil
		skynet_wakeup(idle)
	end
	socket.close(conn.id)
end

---------------------------------------------------------------- dispatchers

-- Runs fn(sock) once, then again while it reports padding; returns ok, data
-- (an array of parts when there were several). Raises what fn raises.
local function read_answer(sock, fn)
	local ok, data, padding = fn(sock)
	if not (ok and padding) then
		return ok, data
	end
	local parts = { data }
	while padding do
		ok, data, padding = fn(sock)
		if not ok then
			return false, data
		end
		parts[#parts + 1] = data
	end
	return true, parts
end

local function dispatch_order(self, conn)
	local sock = conn.sock
	while not conn.dead do
		if conn.head > conn.tail then
			local token = {}
			conn.idle = token
			skynet_wait(token)
			conn.idle = nil
		else
			local rec = conn.queue[conn.head]
			local ok, rok, data = pcall(read_answer, sock, rec.fn)
			if conn.dead then
				return
			end
			if not ok then
				return drop(self, conn, rok)
			end
			conn.queue[conn.head] = nil
			conn.head = conn.head + 1
			wake(rec, rok, data)
		end
	end
end

local function session_part(conn, session, ok, data, padding)
	local rec = conn.sessions[session]
	if rec == nil then
		skynet.error("socket: unknown session : " .. tostring(session))
		return
	end
	if not ok then
		conn.sessions[session] = nil
		return wake(rec, false, data)
	end
	if padding or rec.parts then
		local parts = rec.parts or {}
		rec.parts = parts
		parts[#parts + 1] = data
		if padding then
			return
		end
		data = parts
	end
	conn.sessions[session] = nil
	wake(rec, true, data)
end

local function dispatch_session(self, conn)
	local sock, response = conn.sock, self.desc_response
	while not conn.dead do
		local ok, session, rok, data, padding = pcall(response, sock)
		if conn.dead then
			return
		end
		if not ok then
			return drop(self, conn, session)
		end
		session_part(conn, session, rok, data, padding)
	end
end

---------------------------------------------------------------- connecting

local function on_warning(self, conn)
	return function(id, kb)
		local notify = self.overload_notify
		if kb == 0 then
			if conn.overloaded then
				conn.overloaded = false
				if notify then
					notify(false)
				end
			end
		elseif not conn.overloaded then
			conn.overloaded = true
			if notify then
				notify(true)
			end
		else
			skynet.error(sformat("WARNING: %d K bytes need to send out (fd = %d) %s %s", kb, id,
				tostring(self.host), tostring(self.port)))
		end
	end
end

local function new_conn(self, id)
	local conn = { id = id, queue = {}, head = 1, tail = 0, sessions = {} }
	conn.sock = setmetatable({ id, read_fn = self.socket_read or raw_read,
		readline_fn = self.socket_readline or raw_readline }, sock_meta)
	if self.nodelay then
		socket.nodelay(id)
	end
	socket.warning(id, on_warning(self, conn))
	local host, port = self.host, self.port
	socket.onclose(id, function()
		-- Order mode reads only while callers wait: a close seen while idle
		-- ends the connection here; otherwise the dispatcher's read fails.
		if not conn.dead and conn.head > conn.tail and next(conn.sessions) == nil then
			skynet.error(sformat("socket closed by peer : %s %s", tostring(host), tostring(port)))
			drop(self, conn, socket_error)
		end
	end)
	local dispatch = self.desc_response and dispatch_session or dispatch_order
	skynet.fork(dispatch, self, conn)
	return conn
end

local function address_list(self)
	local list = { { self.host, self.port } }
	local seen = {}
	for _, b in ipairs(self.backup or {}) do
		local host, port
		if type(b) == "table" then
			host, port = b.host, b.port or self.port
		else
			host, port = b, self.port
		end
		local key = tostring(host) .. ":" .. tostring(port)
		if not seen[key] then
			seen[key] = true
			list[#list + 1] = { host, port, backup = true }
		end
	end
	return list
end

-- Runs auth on a fresh connection. Returns true, "restart" (the connection
-- went away during auth, start the pass again) or false, err.
local function run_auth(self, conn)
	local auth = self.auth
	if auth == nil then
		return true
	end
	self.auth_co = coroutine_running()
	local ok, err = pcall(auth, self)
	self.auth_co = nil
	if ok then
		if conn.dead or self.conn ~= conn then
			return true, "restart"
		end
		return true
	end
	drop(self, conn, socket_error)
	if err ~= socket_error then
		skynet.error("socket: auth failed " .. tostring(err))
	end
	return false, err
end

-- One pass over the address list. Returns the ready conn, or nil, reason.
local function connect_pass(self)
	local list = address_list(self)
	local i, reason = 1, nil
	while i <= #list do
		local host, port = list[i][1], list[i][2]
		if list[i].backup then
			skynet.error(sformat("socket: connect to backup host %s %s", tostring(host),
				tostring(port)))
		end
		local id, err = socket.open(host, port)
		if id then
			if self.closed then
				socket.close(id)
				return nil, "closed"
			end
			self.host, self.port = host, port
			local conn = new_conn(self, id)
			self.conn = conn
			local ok, why = run_auth(self, conn)
			if ok and why == "restart" then
				list, i = address_list(self), 0
			elseif ok then
				conn.ready = true
				return conn
			else
				reason = "no more backup host"
				-- auth may have changed the backups: keep the place, re-read them
				local rest = address_list(self)
				for j = 1, i do
					rest[j] = list[j]
				end
				list = rest
			end
		else
			reason = err
		end
		i = i + 1
	end
	return nil, reason or "no more backup host"
end

local function connect_loop(self, once)
	local delay = 0
	while true do
		local conn, err = connect_pass(self)
		if conn then
			if not once then
				skynet.error(sformat("socket: connect to %s %s", tostring(self.host),
					tostring(self.port)))
			end
			return conn
		end
		if once or self.closed then
			return nil, err
		end
		skynet.error("socket: connect " .. tostring(err))
		if delay > 0 then
			skynet.error(sformat("socket: try to reconnect %s %s", tostring(self.host),
				tostring(self.port)))
		end
		skynet.sleep(delay)
		if self.closed then
			return nil, "closed"
		end
		delay = delay == 0 and 100 or math.min(delay * 2, RETRY_CAP_CS)
	end
end

-- Returns a usable conn or raises socket_error; nil when close() ended an
-- endless retry.
local function block_connect(self, once)
	local conn = self.conn
	if conn and (conn.ready or self.auth_co == coroutine_running()) then
		return conn
	end
	if self.connecting then
		local token = {}
		local waiters = self.connect_waiters
		waiters[#waiters + 1] = token
		skynet_wait(token)
		conn = self.conn
		if conn and conn.ready then
			return conn
		end
		error(socket_error)
	end
	self.connecting = coroutine_running()
	local ok, c, err = pcall(connect_loop, self, once)
	self.connecting = nil
	local waiters = self.connect_waiters
	self.connect_waiters = {}
	for i = 1, #waiters do
		skynet_wakeup(waiters[i])
	end
	if not ok then
		error(c, 0)
	end
	if c == nil then
		if err == "closed" and not once then
			return nil -- close() stopped the endless retry
		end
		skynet.error(sformat("Connect failed %s %s %s", tostring(err), tostring(self.host),
			tostring(self.port)))
		error(socket_error)
	end
	return c
end

---------------------------------------------------------------- waiting

local function finish(rec)
	if rec.ok then
		return rec.data
	end
	error(rec.data)
end

local function wait_record(self, conn, rec)
	local ti = self.timeout
	if ti then
		skynet.sleep(ti, rec)
		if not rec.done then
			skynet.error(sformat("socket: request timeout %s %s", tostring(self.host),
				tostring(self.port)))
			drop(self, conn, socket_error)
		end
	else
		skynet_wait(rec)
	end
	return finish(rec)
end

local function push(self, conn, rec, response)
	if self.desc_response then
		conn.sessions[response] = rec
	else
		rec.fn = response
		local t = conn.tail + 1
		conn.tail = t
		conn.queue[t] = rec
		local idle = conn.idle
		if idle then
			conn.idle = nil
			skynet_wakeup(idle)
		end
	end
end

---------------------------------------------------------------- methods

function sc.channel(desc)
	assert(desc.host)
	local self = {
		host = desc.host,
		port = desc.port,
		backup = desc.backup,
		auth = desc.auth,
		desc_response = desc.response,
		nodelay = desc.nodelay,
		overload_notify = desc.overload,
		socket_read = desc.socket_read,
		socket_readline = desc.socket_readline,
		timeout = desc.timeout,
		closed = false,
		connect_waiters = {},
	}
	return setmetatable(self, channel_meta)
end

function channel:connect(once)
	self.closed = false
	return block_connect(self, once) ~= nil
end

function channel:request(req, response, padding)
	assert(not self.closed)
	local conn = block_connect(self, true)
	local rec
	if response ~= nil then
		rec = {}
		push(self, conn, rec, response)
	end
	local sent
	if padding then
		sent = socket.lwrite(conn.id, req)
		for i = 1, #padding do
			sent = sent and socket.lwrite(conn.id, padding[i])
		end
	else
		sent = socket.write(conn.id, req)
	end
	if not sent then
		drop(self, conn, socket_error)
		error(socket_error)
	end
	if rec == nil then
		return
	end
	return wait_record(self, conn, rec)
end

function channel:response(response)
	local conn = block_connect(self, false)
	if conn == nil then
		error(socket_error)
	end
	local rec = {}
	push(self, conn, rec, response)
	return wait_record(self, conn, rec)
end

function channel:close()
	if not self.closed then
		self.closed = true
		local conn = self.conn
		if conn then
			drop(self, conn, socket_error)
		end
	end
end

function channel:changehost(host, port)
	self.host = host
	if port then
		self.port = port
	end
	local conn = self.conn
	if not self.closed and conn then
		drop(self, conn, socket_error)
	end
end

function channel:changebackup(list)
	self.backup = list
end

-- Collection cannot yield: close the socket without waiting for it.
channel_meta.__gc = function(self)
	local conn = rawget(self, "conn")
	if conn and not conn.dead then
		conn.dead = true
		driver.close(conn.id)
	end
end

return sc
