-- http.server: a small HTTP/1.1 server loop over http.httpd (an addition:
-- the reference leaves the accept loop to each script).
--
--   local server = require "http.server"
--   local id, addr, port = server.listen {
--       address = "127.0.0.1", port = 8080,
--       handler = function(req) return 200, "hello", { ["content-type"] = "text/plain" } end,
--   }
--
-- Every connection is served in a coroutine of the calling service, one
-- request at a time (pipelined requests wait in the socket buffer, which
-- skynet.socket pauses past 128 KB). req = { id, addr, method, url, path,
-- query (raw), header, body, version, read, write }. The handler returns
-- code, body (string, function or nil) and header; it may instead take the
-- connection over (e.g. websocket.accept with options.upgrade) and return
-- nothing: the loop then leaves the socket alone.
--
-- Bounds (options, defaults): bodylimit (1 MiB) and the 8192-byte header
-- limit of http.internal (413 beyond), timeout (1000 cs) for each request
-- from the moment the server waits for it until its body has been read
-- (a slow or silent client is disconnected: slowloris), max_connections
-- (1024; more are closed at once), keepalive (true). A malformed request
-- line gets 400 and a close; an error raised by the handler a 500.
--
-- Tracing: a request with a valid W3C traceparent header runs its handler
-- in a span of that trace (child of the caller's span); without one (or with
-- a malformed one, ignored) a share of requests begins a new trace
-- (config trace_sample). The span ends when the handler returns; a 5xx
-- status or an error is its error outcome. See skynet.tracing.
--
-- Log: the lines clients can cause once per connection or request (a failed
-- TLS handshake, a handler error, a refused connection, a failed
-- connection) go through one skynet.loglimit limiter per listener: at most
-- 10 a second, then one line with the count.
local socket = require "skynet.socket"
local httpd = require "http.httpd"
local url = require "http.url"
local sockethelper = require "http.sockethelper"
local loglimit = require "skynet.loglimit"
local tracing = require "skynet.tracing"

local server = {}

local DEFAULTS <const> = {
	address = "127.0.0.1", bodylimit = 1024 * 1024, timeout = 1000, max_connections = 1024,
	keepalive = true, protocol = "http",
}

local function keep_alive(opt, header, version)
	if not opt.keepalive then
		return false
	end
	local c = header.connection
	if type(c) == "table" then
		c = table.concat(c, ",")
	end
	c = c and c:lower() or ""
	if c:find("close", 1, true) then
		return false
	end
	if version and version < 1.1 then
		return c:find("keep-alive", 1, true) ~= nil
	end
	return true
end

local function interface(fd, opt)
	if opt.protocol == "https" then
		local tlshelper = require "http.tlshelper"
		local tls = tlshelper.newtls("server", opt.tls_ctx)
		return {
			init = tlshelper.init_responsefunc(fd, tls),
			read = tlshelper.readfunc(fd, tls),
			write = tlshelper.writefunc(fd, tls),
			close = tlshelper.closefunc(tls),
		}
	end
	return { read = sockethelper.readfunc(fd), write = sockethelper.writefunc(fd) }
end

-- Serves fd until it closes; returns true when the handler took it over.
local function serve(fd, addr, opt, ifc, log)
	if ifc.init then
		local cancel = sockethelper.deadline(fd, opt.timeout, "tls handshake with " .. addr)
		local ok, err = pcall(ifc.init)
		cancel()
		if not ok then
			log("http.server: tls handshake with %s failed: %s", addr, tostring(err))
			return false
		end
	end
	local read, write = ifc.read, ifc.write
	while true do
		-- an idle keep-alive connection is closed quietly at the deadline
		local cancel = sockethelper.deadline(fd, opt.timeout)
		local code, target, method, header, body, version = httpd.read_request(read, opt.bodylimit)
		if cancel() and target == sockethelper.socket_error then
			return false
		end
		if code == nil then
			if target ~= sockethelper.socket_error then
				httpd.write_response(write, 400, "bad request line\n", { connection = "close" })
			end
			return false
		end
		if code ~= 200 then
			httpd.write_response(write, code, "", { connection = "close" })
			return false
		end
		local keep = keep_alive(opt, header, version)
		local okp, path, query = pcall(url.parse, target)
		if not okp then
			httpd.write_response(write, 400, "bad escape in the url\n", { connection = "close" })
			return false
		end
		local req = {
			id = fd, addr = addr, method = method, url = target, path = path, query = query,
			header = header, body = body, version = version, read = read, write = write,
			interface = ifc,
		}
		-- A request with a W3C traceparent joins that trace; others may be sampled.
		local traced = tracing.adopt(header.traceparent, method .. " " .. path)
		local ok, rcode, rbody, rheader = xpcall(opt.handler, debug.traceback, req)
		if traced then
			tracing.finish(not ok or (math.type(rcode) == "integer" and rcode >= 500))
		end
		if not ok then
			log("http.server: handler failed for %s %s: %s", method, target, rcode)
			httpd.write_response(write, 500, "internal error\n", { connection = "close" })
			return false
		end
		if rcode == nil then
			return true
		end
		rheader = rheader or {}
		if not keep then
			rheader.connection = "close"
		end
		if not httpd.write_response(write, rcode, rbody, rheader) or not keep then
			return false
		end
	end
end

local listeners = {} -- listen id -> { count = open connections }

-- Starts listening; returns the listen id, the bound address and port.
function server.listen(options)
	assert(type(options) == "table" and type(options.handler) == "function",
		"http.server.listen: options.handler is required")
	local opt = {}
	for k, v in pairs(DEFAULTS) do
		opt[k] = v
	end
	for k, v in pairs(options) do
		opt[k] = v
	end
	if opt.protocol == "https" and opt.tls_ctx == nil then
		local tlshelper = require "http.tlshelper"
		local ctx = tlshelper.newctx()
		ctx:set_cert(assert(opt.certfile, "http.server.listen: https needs certfile"),
			assert(opt.keyfile, "http.server.listen: https needs keyfile"))
		opt.tls_ctx = ctx
	end
	local id, addr, port = socket.listen(opt.address, opt.port or 0)
	local state = { count = 0 }
	listeners[id] = state
	local log = loglimit.new()
	socket.start(id, function(fd, peer)
		if state.count >= opt.max_connections then
			log("http.server: %d connections open, refusing %s", state.count, peer)
			socket.close_fd(fd)
			return
		end
		state.count = state.count + 1
		local started = socket.start(fd)
		local taken = false
		if started then
			local ifc = interface(fd, opt)
			local ok, r = pcall(serve, fd, peer, opt, ifc, log)
			if not (ok and r) and ifc.close then
				ifc.close()
			end
			if not ok then
				log("http.server: connection %s failed: %s", peer, tostring(r))
			end
			taken = ok and r
		end
		state.count = state.count - 1
		if not taken then
			socket.close(fd)
		end
	end)
	return id, addr, port
end

function server.close(id)
	listeners[id] = nil
	socket.close(id)
end

-- Open connections of listener id (for tests).
function server.connections(id)
	local s = listeners[id]
	return s and s.count or 0
end

return server
