-- http.sockethelper: read/write closures over a socket id, and a connect
-- with a timeout, for the HTTP and WebSocket libraries.
--
-- Every failure raises the module's one shared error object `socket_error`
-- (compare with ==). Calling it stores a text that the next tostring
-- returns once; the text of connect failures and timeouts is also logged
-- where it happens, since a concurrent failure may overwrite it. The close
-- a deadline logs (a client that stalls, e.g. in a TLS handshake: outsiders
-- decide how often) goes through one skynet.loglimit limiter per service.
--
-- A read closure made by readfunc keeps a pushback buffer: unread(read, s)
-- puts bytes read too far back in front of the stream, so a parser that
-- read past the end of one request leaves the next one for the next call
-- (keep-alive and pipelining in http.httpd).
local skynet = require "skynet"
local socket = require "skynet.socket"
local loglimit = require "skynet.loglimit"

local sformat = string.format
local ssub = string.sub

local M = {}

local deadline_log = loglimit.new()

local socket_error = setmetatable({}, {
	__call = function(self, info)
		rawset(self, "text", "[Socket Error] : " .. tostring(info))
		return self
	end,
	__tostring = function(self)
		local text = rawget(self, "text")
		if text then
			rawset(self, "text", nil)
			return text
		end
		return "[Socket Error]"
	end,
})
M.socket_error = socket_error

local pushback = setmetatable({}, { __mode = "k" }) -- read closure -> unread function

local function read_failed(fd)
	error(socket_error(sformat("read failed fd = %s", tostring(fd))))
end

function M.readfunc(fd, pre)
	if pre == "" then
		pre = nil
	end
	local function read(sz)
		if pre then
			local p = pre
			if sz == nil or #p >= sz then
				if sz == nil or #p == sz then
					pre = nil
					return p
				end
				pre = ssub(p, sz + 1)
				return ssub(p, 1, sz)
			end
			pre = nil
			if socket.invalid(fd) then
				read_failed(fd)
			end
			local more = socket.read(fd, sz - #p)
			if more then
				return p .. more
			end
			read_failed(fd)
		end
		if socket.invalid(fd) then
			read_failed(fd)
		end
		local r = socket.read(fd, sz)
		if r then
			return r
		end
		read_failed(fd)
	end
	pushback[read] = function(s)
		if s and s ~= "" then
			pre = pre and s .. pre or s
		end
	end
	return read
end

-- Puts s back in front of what read returns next. True when read keeps a
-- pushback buffer (it came from readfunc or another helper that registered
-- one with M.register_unread).
function M.unread(read, s)
	local f = pushback[read]
	if f then
		f(s)
		return true
	end
	return false
end

function M.register_unread(read, f)
	pushback[read] = f
end

function M.writefunc(fd)
	return function(s)
		if not socket.write(fd, s) then
			error(socket_error(sformat("write failed fd = %s", tostring(fd))))
		end
	end
end

function M.readall(fd)
	return socket.readall(fd)
end

M.close = socket.close
M.shutdown = socket.shutdown

local function connect_failed(host, port, timeout, err, timed_out)
	local info = sformat("connect failed host = %s port = %s timeout = %s err = %s is_time_out = %s",
		tostring(host), tostring(port), tostring(timeout), tostring(err), tostring(timed_out))
	skynet.error("http.sockethelper: " .. info)
	error(socket_error(info))
end

function M.connect(host, port, timeout)
	if timeout == nil then
		local fd, err = socket.open(host, port)
		if not fd then
			connect_failed(host, port, timeout, err, false)
		end
		return fd
	end
	local co = coroutine.running()
	local state = { done = false, gave_up = false }
	skynet.fork(function()
		local fd, err = socket.open(host, port)
		if state.gave_up then
			if fd then
				socket.close(fd)
			end
			return
		end
		state.done, state.fd, state.err = true, fd, err
		skynet.wakeup(co)
	end)
	skynet.sleep(timeout)
	if not state.done then
		state.gave_up = true
		connect_failed(host, port, timeout, "timeout", true)
	end
	if not state.fd then
		connect_failed(host, port, timeout, state.err, false)
	end
	return state.fd
end

-- Arms a timer that closes fd after cs centiseconds unless the returned
-- cancel function is called first: a blocked read then raises
-- socket_error. cancel() returns true when the deadline had passed. With
-- `what` (a text) the close is logged naming it.
function M.deadline(fd, cs, what)
	local fired = false
	local obj = skynet.timeout(cs, function()
		fired = true
		if what then
			deadline_log("http.sockethelper: %s: no progress in %d cs, closing fd = %d", what, cs, fd)
		end
		socket.close(fd)
	end)
	return function()
		if not fired then
			skynet.killthread(obj)
		end
		return fired
	end
end

return M
