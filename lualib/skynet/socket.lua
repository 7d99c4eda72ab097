-- skynet.socket: the Lua TCP/UDP API over skynet.socketdriver.
--
-- Every socket this service opened, listened on, accepted-and-started or
-- bound has a state table in `sockets` (id -> state), created when the id
-- is handed to the socket thread and forgotten by close/abandon. Events
-- arrive as PTYPE_SOCKET messages (skynet_socket.h) and update that state; each
-- is dispatched in its own coroutine like any request, so an accept
-- callback may block.
--
-- State fields:
--   id          the socket id
--   connecting  an open/listen/start/bind waits for the CONNECT confirmation
--   opened      the confirmation arrived (even if the socket closed since)
--   connected   alive: confirmed and no CLOSE/ERROR seen
--   closed      a CLOSE or ERROR arrived
--   err         error text of a failed connect/start
--   listening   a listener made by socket.listen (addr, port: bound address;
--               accepting: start was called)
--   udp         a UDP socket (no CONNECT event: alive from creation)
--   callback    accept_cb (listener) or the UDP receive callback
--   waiting     a coroutine blocks on the state (skynet.wait(state))
--   need        what the blocked reader needs: integer n (read(n)), true
--               (any data), false (readall: the close), a string (readline
--               separator)
--   paused      reading is paused (socket.pause or auto-pause)
--   closers     tokens of coroutines blocked in close(), woken when the
--               close is complete and no reader is left
--   limit, on_close, on_warning   set by limit/onclose/warning
--   overflow    the limit was passed: the socket is closing, data is dropped
--
-- Receive buffer: a FIFO of Lua strings q[qh..qt], `off` bytes of q[qh]
-- already consumed, `size` unread bytes in all. DATA buffers are copied
-- into strings and freed at once. Small chunks are merged on arrival, so the
-- number of chunks stays below size / MERGE_BELOW plus the big ones.
-- `scanned` counts leading unread bytes where no line separator starts (a
-- readline waiting for more data searches only what is new). The buffer is
-- Lua rather than socketdriver's C helpers for that resumable search, and
-- so that unread input counts in the service's own heap (and memlimit).
--
-- Names: socket.open resolves a host name with skynet.dns (hosts file, then
-- DNS queries on a UDP socket of this service), so the lookup only suspends
-- the calling coroutine; the driver gets IP addresses and tries them in order.
--
-- Back pressure: while nobody is blocked reading, a socket holding more
-- than PAUSE_LIMIT unread bytes is paused; reading resumes as soon as a
-- coroutine blocks on it again. Sends never block: the socket thread
-- queues them and warns through socket.warning.
--
-- Log: the lines socket events cause (peers decide how often: data after a
-- close, overflows, pauses, errors, send warnings, refused accepts) go
-- through one skynet.loglimit limiter per service: at most 10 a second,
-- then one line with the count.
local skynet = require "skynet"
local driver = require "skynet.socketdriver"
local loglimit = require "skynet.loglimit"

local type = type
local sformat = string.format
local ssub = string.sub
local sfind = string.find
local tconcat = table.concat
local skynet_tostring = skynet.tostring
local skynet_trash = skynet.trash
local skynet_wakeup = skynet.wakeup
local skynet_wait = skynet.wait

local PAUSE_LIMIT <const> = 128 * 1024
local MERGE_BELOW <const> = 4096
local NAME_RETRY_CS <const> = 1000 -- an IPv4 lookup slower than this is not followed by IPv6

local socket = {}
local sockets = {} -- id -> state

---------------------------------------------------------------- receive buffer

local function new_state(id)
	return { id = id, q = {}, qh = 1, qt = 0, off = 0, size = 0, scanned = 0 }
end

local function buf_push(s, str)
	local n = #str
	if n == 0 then
		return s.size
	end
	local q, qt = s.q, s.qt
	local last = q[qt]
	if qt >= s.qh and n < MERGE_BELOW and #last < MERGE_BELOW then
		if qt == s.qh and s.off > 0 then
			last = ssub(last, s.off + 1)
			s.off = 0
		end
		q[qt] = last .. str
	else
		qt = qt + 1
		q[qt] = str
		s.qt = qt
	end
	s.size = s.size + n
	return s.size
end

local function buf_reset(s)
	s.q, s.qh, s.qt, s.off, s.size, s.scanned = {}, 1, 0, 0, 0, 0
end

-- Removes and returns the first n unread bytes (n <= s.size).
local function buf_take(s, n)
	s.scanned = 0
	if n == 0 then
		return ""
	end
	local q, qh, off = s.q, s.qh, s.off
	local first = q[qh]
	local avail = #first - off
	if avail > n then
		s.off = off + n
		s.size = s.size - n
		return ssub(first, off + 1, off + n)
	end
	local parts, np = {}, 0
	local need = n
	while need > 0 do
		local chunk = q[qh]
		avail = #chunk - off
		np = np + 1
		if avail <= need then
			parts[np] = off == 0 and chunk or ssub(chunk, off + 1)
			q[qh] = nil
			qh = qh + 1
			off = 0
			need = need - avail
		else
			parts[np] = ssub(chunk, off + 1, off + need)
			off = off + need
			need = 0
		end
	end
	s.qh, s.off = qh, off
	s.size = s.size - n
	if qh > s.qt then
		s.q, s.qh, s.qt = {}, 1, 0
	end
	return np == 1 and parts[1] or tconcat(parts)
end

local function buf_pop(s, n)
	if s.size < n then
		return nil
	end
	return buf_take(s, n)
end

local function buf_all(s)
	return buf_take(s, s.size)
end

-- Unread bytes from unread position `from` (1-based) to the end.
local function buf_tail(s, from)
	local q, qh = s.q, s.qh
	local skip = s.size - from + 1 -- bytes wanted, collected from the back
	local parts, np = {}, 0
	local i = s.qt
	while skip > 0 do
		local chunk = q[i]
		local avail = i == qh and #chunk - s.off or #chunk
		np = np + 1
		if avail <= skip then
			parts[np] = i == qh and ssub(chunk, s.off + 1) or chunk
			skip = skip - avail
		else
			parts[np] = ssub(chunk, -skip)
			skip = 0
		end
		i = i - 1
	end
	if np == 1 then
		return parts[1]
	end
	for a = 1, np // 2 do -- collected back to front
		local b = np - a + 1
		parts[a], parts[b] = parts[b], parts[a]
	end
	return tconcat(parts)
end

-- The next line without its separator, or nil when none is complete.
-- With check set, only reports (true) whether one is complete.
local function buf_line(s, sep, check)
	local seplen = #sep
	local size = s.size
	if size < seplen or seplen == 0 then
		return nil
	end
	local from = s.scanned + 1
	local i
	-- Search the head chunk in place first: a line that ends there costs
	-- its own length, not the length of everything buffered behind it.
	local head, off = s.q[s.qh], s.off
	if off + from + seplen - 1 <= #head then
		local at = sfind(head, sep, off + from, true)
		if at then
			i = at - off - from + 1
		end
	end
	if i == nil then
		i = sfind(buf_tail(s, from), sep, 1, true)
	end
	if i == nil then
		s.scanned = size - seplen + 1
		return nil
	end
	local len = from + i - 2 -- bytes before the separator
	if check then
		s.scanned = len
		return true
	end
	local line = buf_take(s, len)
	buf_take(s, seplen)
	return line
end

---------------------------------------------------------------- blocking

local function wake_closers(s)
	local closers = s.closers
	if closers then
		s.closers = nil
		for i = 1, #closers do
			skynet_wakeup(closers[i])
		end
	end
end

-- Blocks the calling coroutine until an event satisfies `need`.
local function suspend(s, need, fname)
	if s.waiting then
		error(sformat("socket.%s: socket %d is already being read by another coroutine", fname,
			s.id), 3)
	end
	if s.paused then
		s.paused = nil
		driver.start(s.id)
	end
	s.need = need
	s.waiting = true
	skynet_wait(s)
	s.waiting = nil
	s.need = nil
	if not s.connected then
		wake_closers(s) -- close() waits for the last reader
	end
end

local function wake(s)
	if s.waiting then
		s.need = nil
		skynet_wakeup(s)
	end
end

---------------------------------------------------------------- events

local EVENT = {}
local log = loglimit.new() -- the lines peers can cause once per event

local function default_warning(id, kb)
	log("WARNING: %d K bytes need to send out (fd = %d)", kb, id)
end

local function overflow(s, size)
	log("socket buffer overflow: fd=%d size=%d", s.id, size)
	s.overflow = true -- what still arrives is dropped
	buf_reset(s)
	driver.close(s.id)
end

local function data_arrived(s, size)
	local need = s.need
	if type(need) == "number" then
		if size >= need then
			wake(s)
		end
		return
	end
	local limit = s.limit
	if limit and size > limit then
		return overflow(s, size)
	end
	if need == true then
		wake(s)
	elseif type(need) == "string" then
		if buf_line(s, need, true) then
			wake(s)
		end
	elseif need == nil and size > PAUSE_LIMIT and not s.paused and s.connected then
		-- nobody reads: stop until someone blocks on it again
		s.paused = true
		driver.pause(s.id)
		log("Pause socket (%d) size : %d", s.id, size)
	end
end

EVENT[1] = function(id, size, data) -- DATA
	local s = sockets[id]
	if s == nil then
		skynet_trash(data, size)
		log("socket: drop package from %d", id)
		return
	end
	if s.overflow then
		skynet_trash(data, size)
		return
	end
	local str = skynet_tostring(data, size)
	skynet_trash(data, size)
	return data_arrived(s, buf_push(s, str))
end

EVENT[2] = function(id, port, addr) -- CONNECT
	local s = sockets[id]
	if s == nil then
		return
	end
	if s.listening and port ~= 0 then
		s.addr, s.port = addr, port
	end
	s.opened = true
	if s.connecting then
		s.connecting = nil
		s.connected = true
		wake(s)
	elseif s.err == nil and not s.closed then
		s.connected = true
	end
end

local function gone(s)
	s.connected = false
	s.connecting = nil
	s.closed = true
	if s.waiting then
		wake(s) -- the reader wakes the closers when it resumes
	else
		wake_closers(s)
	end
	local cb = s.on_close
	if cb then
		s.on_close = nil
		cb(s.id)
	end
end

EVENT[3] = function(id) -- CLOSE
	local s = sockets[id]
	if s then
		return gone(s)
	end
end

EVENT[4] = function(id, newid, addr) -- ACCEPT
	local s = sockets[id]
	local cb = s and s.callback
	if cb == nil then
		log("socket: no accept callback on %d, close %d (%s)", id, newid, addr)
		driver.close(newid)
		return
	end
	cb(newid, addr)
end

EVENT[5] = function(id, _, err) -- ERROR
	local s = sockets[id]
	if s == nil then
		log("socket: error on unknown %d %s", id, tostring(err))
		return
	end
	if s.listening and s.connected and not s.connecting then
		log("socket: accept error on %d %s", id, tostring(err))
		return -- the listener itself stays open
	end
	if s.connecting then
		s.err = err
	elseif s.connected then
		log("socket: error on %d %s", id, tostring(err))
	end
	return gone(s)
end

EVENT[6] = function(id, size, data, from) -- UDP
	local s = sockets[id]
	local cb = s and s.callback
	if cb == nil then
		skynet_trash(data, size)
		log("socket: drop udp package from %d", id)
		return
	end
	local str = skynet_tostring(data, size)
	skynet_trash(data, size)
	cb(str, from)
end

EVENT[7] = function(id, kb) -- WARNING
	local s = sockets[id]
	local cb = s and s.on_warning or default_warning
	cb(id, kb)
end

skynet.register_protocol {
	name = "socket",
	id = skynet.PTYPE_SOCKET,
	unpack = driver.unpack,
	dispatch = function(_, _, event, ...)
		local f = EVENT[event]
		if f then
			f(...)
		end
	end,
}

---------------------------------------------------------------- helpers

-- "host:port" or "[v6]:port" when port is nil.
local function address(fname, host, port)
	if port ~= nil then
		return host, tonumber(port) or port
	end
	if type(host) ~= "string" then
		error(sformat("socket.%s: bad address (%s)", fname, tostring(host)), 3)
	end
	local h, p = host:match "^%[(.*)%]:(%d+)$"
	if h == nil then
		h, p = host:match "^([^:]*):(%d+)$"
	end
	if h == nil then
		error(sformat("socket.%s: bad address (%s)", fname, host), 3)
	end
	return h, tonumber(p)
end

local function get(fname, id)
	local s = sockets[id]
	if s == nil then
		error(sformat("socket.%s: unknown socket (%s)", fname, tostring(id)), 3)
	end
	return s
end

-- Registers state s for a new id and blocks until the socket thread
-- confirms it (or fails). Returns id, or nil, err.
local function confirm(s)
	sockets[s.id] = s
	s.connecting = true
	suspend(s, nil, "open")
	if s.opened then
		return s.id
	end
	if sockets[s.id] == s then
		sockets[s.id] = nil
	end
	return nil, s.err or "closed"
end

---------------------------------------------------------------- TCP

local function connect_ip(ip, port)
	local id, err = driver.connect(ip, port)
	if not id then
		return nil, err or "connect failed"
	end
	return confirm(new_state(id))
end

-- A host name is resolved by skynet.dns (hosts file, then DNS over UDP
-- through the socket thread: this coroutine yields, no thread blocks),
-- IPv4 addresses first, then IPv6; each address is tried in order.
local function connect_name(host, port)
	local dns = require "skynet.dns" -- here: skynet.dns itself uses this module
	local lists = {}
	local why
	local started = skynet.now()
	for _, ipv6 in ipairs { false, true } do
		local ok, ip, ips = pcall(dns.resolve, host, ipv6)
		if ok and ip then
			lists[#lists + 1] = ips or { ip }
			break
		end
		why = why or (ok and ips or ip)
		if skynet.now() - started >= NAME_RETRY_CS then
			break -- the servers do not answer: asking for IPv6 would only wait again
		end
	end
	if #lists == 0 then
		return nil, sformat("resolve %s: %s", host, tostring(why))
	end
	local err
	for _, ip in ipairs(lists[1]) do
		local id
		id, err = connect_ip(ip, port)
		if id then
			return id
		end
	end
	return nil, err
end

local function is_literal(host)
	return type(host) ~= "string" or host == "" or host:match "^[%d%.]+$" or
		host:find(":", 1, true)
end

function socket.open(host, port)
	host, port = address("open", host, port)
	if is_literal(host) then
		return connect_ip(host, port)
	end
	return connect_name(host, port)
end

socket.connect = socket.open

function socket.listen(host, port, backlog)
	if port == nil then
		host, port = address("listen", host)
	end
	local ok, id = pcall(driver.listen, host, port, backlog)
	if not ok then
		error(id, 0) -- "cannot listen on host:port: reason": the cause is not the caller's line
	end
	local s = new_state(id)
	s.listening = true
	if not confirm(s) then
		error("Listen error", 2)
	end
	return id, s.addr, s.port
end

function socket.start(id, accept_cb)
	local s = sockets[id]
	if s and s.listening then
		s.callback = accept_cb or s.callback
		if s.accepting or not s.connected then
			return s.connected and id or nil, s.connected and nil or "closed"
		end
		s.accepting = true
		s.connecting = true
		driver.start(id)
		suspend(s, nil, "start")
		if s.connected then
			return id
		end
		return nil, s.err or "closed"
	elseif s then
		if s.paused then
			s.paused = nil
			driver.start(id)
		end
		return id
	end
	s = new_state(id)
	s.callback = accept_cb
	driver.start(id)
	return confirm(s)
end

function socket.bind(os_fd)
	return confirm(new_state(driver.bind(os_fd)))
end

function socket.stdin()
	return socket.bind(0)
end

-- read(id, n): exactly n bytes, or false, rest on close.
-- read(id): what is buffered (waits for some), or false, "" on close.
function socket.read(id, n)
	local s = get("read", id)
	if n == nil then
		if s.size > 0 then
			return buf_all(s)
		end
		if not s.connected then
			return false, ""
		end
		suspend(s, true, "read")
		if s.size > 0 then
			return buf_all(s)
		end
		return false, ""
	end
	if math.type(n) ~= "integer" or n < 0 then
		error(sformat("socket.read: bad size (%s)", tostring(n)), 2)
	end
	local r = buf_pop(s, n)
	if r then
		return r
	end
	if not s.connected then
		return false, buf_all(s)
	end
	suspend(s, n, "read")
	r = buf_pop(s, n)
	if r then
		return r
	end
	return false, buf_all(s)
end

function socket.readall(id)
	local s = get("readall", id)
	if not s.connected then
		if s.size == 0 then
			return false
		end
		return buf_all(s)
	end
	suspend(s, false, "readall")
	return buf_all(s)
end

function socket.readline(id, sep)
	sep = sep or "\n"
	local s = get("readline", id)
	if type(sep) ~= "string" or sep == "" then
		error(sformat("socket.readline: bad separator (%s)", tostring(sep)), 2)
	end
	local line = buf_line(s, sep)
	if line then
		return line
	end
	if not s.connected then
		return false, buf_all(s)
	end
	suspend(s, sep, "readline")
	line = buf_line(s, sep)
	if line then
		return line
	end
	return false, buf_all(s)
end

function socket.block(id)
	local s = sockets[id]
	if s == nil or not s.connected then
		return false
	end
	if s.size == 0 then
		suspend(s, true, "block")
	end
	return s.connected
end

local driver_send = driver.send
local driver_lsend = driver.lsend

function socket.write(id, data, sz)
	return driver_send(id, data, sz) and true or false
end

function socket.lwrite(id, data, sz)
	return driver_lsend(id, data, sz) and true or false
end

function socket.close(id)
	local s = sockets[id]
	if s == nil then
		return
	end
	if s.connected or s.connecting then
		driver.close(id)
	end
	if s.connected or s.connecting or s.waiting then
		-- woken by the close event, or by the last reader once it resumes
		local token = {}
		local closers = s.closers
		if closers then
			closers[#closers + 1] = token
		else
			s.closers = { token }
		end
		skynet_wait(token)
	end
	buf_reset(s)
	if sockets[id] == s then
		sockets[id] = nil
	end
end

function socket.shutdown(id)
	local s = sockets[id]
	if s then
		buf_reset(s)
	end
	driver.shutdown(id)
end

function socket.close_fd(id)
	assert(sockets[id] == nil, "socket.close_fd: the socket is started here, use socket.close")
	driver.close(id)
end

function socket.abandon(id)
	local s = sockets[id]
	if s then
		sockets[id] = nil
		s.connected = false
		s.on_close = nil
		buf_reset(s)
		wake(s)
		wake_closers(s)
	end
end

function socket.pause(id)
	local s = sockets[id]
	if s and not s.paused and s.connected then
		s.paused = true
		driver.pause(id)
	end
end

function socket.limit(id, bytes)
	get("limit", id).limit = bytes
end

function socket.warning(id, cb)
	get("warning", id).on_warning = cb
end

function socket.onclose(id, cb)
	get("onclose", id).on_close = cb
end

function socket.invalid(id)
	return sockets[id] == nil
end

function socket.disconnected(id)
	local s = sockets[id]
	if s then
		return not (s.connected or s.connecting)
	end
end

function socket.header(str)
	local n = #str
	if n < 1 or n > 4 then
		error(sformat("socket.header: bad header length (%d)", n), 2)
	end
	return (string.unpack(">I" .. n, str))
end

function socket.nodelay(id)
	driver.nodelay(id)
end

function socket.netstat()
	return driver.info()
end

function socket.resolve(host)
	return driver.resolve(host)
end

---------------------------------------------------------------- UDP

local function udp_state(id, cb)
	local s = new_state(id)
	s.connected, s.opened, s.udp, s.callback = true, true, true, cb
	sockets[id] = s
	return id
end

function socket.udp(cb, host, port)
	local id = driver.udp(host, port)
	return udp_state(id, cb)
end

function socket.udp_connect(id, host, port, cb)
	local s = sockets[id]
	if s then
		assert(s.udp, "socket.udp_connect: not a udp socket")
		if cb then
			s.callback = cb
		end
	else
		udp_state(id, cb)
	end
	driver.udp_connect(id, host, port)
end

function socket.udp_listen(host, port, cb)
	return udp_state(driver.udp_listen(host, port), cb)
end

function socket.udp_dial(host, port, cb)
	return udp_state(driver.udp_dial(host, port), cb)
end

socket.sendto = driver.udp_send
socket.udp_address = driver.udp_address

return socket
