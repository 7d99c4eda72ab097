-- The demo's web front door: serves the browser arena (the files in
-- examples/web/) and bridges WebSocket clients to the game.
--
--   skynet.newservice("webgate") then
--   skynet.call(webgate, "lua", "start", { web_address, web_port, gate_address, gate_port,
--       max_request, maxclient, web_maxclient, root }) -> address, port
--
-- GET / serves index.html, GET /<file> the other files of the web folder
-- (names of letters, digits, "-", "_" and "." only; nothing else is
-- reachable); at most maxclient (1024) HTTP connections. GET /ws upgrades
-- to a WebSocket (strict RFC 6455: masked frames, UTF-8 text). Each
-- WebSocket gets its own TCP connection to the game gate, so a browser
-- player is a client like any terminal client: one text message per
-- request, one message per answer or push, the same world. The gate
-- connection is opened only once the handshake is accepted (a refused
-- request never costs the game an agent; an unreachable gate closes the
-- WebSocket with 1011), and at most web_maxclient (256) WebSockets are
-- open: one more is answered 503 before touching the gate, so that the
-- browsers cannot take every slot of the gate (keep web_maxclient below
-- the gate's maxclient). Messages longer than max_request + 64 bytes close
-- the WebSocket with 1009; what the gate sends is relayed as it comes.
-- While the gate connection has unsent data past the socket warning mark,
-- the browser's WebSocket is not read.
local skynet = require "skynet"
local socket = require "skynet.socket"
local server = require "http.server"
local websocket = require "http.websocket"
local httpd = require "http.httpd"

local spack = string.pack
local sunpack = string.unpack

local DEFAULT_WEB_MAXCLIENT <const> = 256

local conf
local open_ws = 0 -- WebSockets open or being accepted: at most conf.web_maxclient
local files = {} -- name -> { body, type } (read once at start)

local TYPES <const> = {
	html = "text/html; charset=utf-8",
	js = "text/javascript; charset=utf-8",
	css = "text/css; charset=utf-8",
	png = "image/png",
	ico = "image/x-icon",
}

local function load_files(root)
	local p = io.popen("ls " .. root)
	for name in p:lines() do
		if name:match "^[%w_%-%.]+$" then
			local f = io.open(root .. "/" .. name, "rb")
			if f then
				local ext = name:match "%.(%w+)$"
				files[name] = { body = f:read("a"), type = TYPES[ext] or "application/octet-stream" }
				f:close()
			end
		end
	end
	p:close()
end

-- Relays frames from the gate connection fd to the websocket id.
local function relay_from_gate(fd, id)
	local buf = ""
	while true do
		local data = socket.read(fd)
		if not data then
			break
		end
		buf = buf .. data
		while #buf >= 2 do
			local n = sunpack(">I2", buf)
			if #buf < 2 + n then
				break
			end
			local msg = buf:sub(3, 2 + n)
			buf = buf:sub(3 + n)
			if websocket.is_close(id) then
				return
			end
			local ok = pcall(websocket.write, id, msg, "text")
			if not ok then
				return
			end
		end
	end
	if not websocket.is_close(id) then
		websocket.close(id, 1000, "the game closed the connection")
	end
end

-- Answers a /ws request the web will not take, and closes the connection.
local function refuse(req, code, text)
	httpd.write_response(req.write, code, text,
		{ ["content-type"] = "text/plain", connection = "close" })
	socket.close(req.id)
end

local function bridge(req)
	if open_ws >= conf.web_maxclient then
		return refuse(req, 503, "too many WebSockets open, try again later\n")
	end
	open_ws = open_ws + 1
	local fd -- the gate connection: opened once the handshake is accepted
	-- Back-pressure: while the gate has not taken what was written to it
	-- (socket.warning), the session stops reading the browser, whose bytes
	-- then wait in its socket (paused at 128 KB) and in the kernel.
	local held, waiting = false, nil
	local function on_warning(_, kb)
		held = kb > 0
		if not held and waiting then
			local co = waiting
			waiting = nil
			skynet.wakeup(co)
		end
	end
	local handle = {
		-- after the 101 and before any frame is read: what the browser sent
		-- behind its handshake waits in the socket meanwhile
		handshake = function(id)
			fd = socket.open(conf.gate_address, conf.gate_port)
			if not fd then
				websocket.close(id, 1011, "the game server is not reachable")
				return
			end
			socket.warning(fd, on_warning)
			skynet.fork(relay_from_gate, fd, id)
		end,
		message = function(_, data)
			if #data > 0xffff then
				return
			end
			socket.write(fd, spack(">s2", data))
			while held and not socket.disconnected(fd) do
				waiting = coroutine.running()
				skynet.wait(waiting)
			end
		end,
		close = function()
			if fd then
				socket.close(fd)
			end
		end,
		error = function()
			if fd then
				socket.close(fd)
			end
		end,
	}
	websocket.accept(req.id, handle, "ws", req.addr, {
		upgrade = { header = req.header, method = req.method, url = req.url, version = req.version,
			interface = req.interface },
		max_size = conf.max_request + 64, strict = true,
	})
	open_ws = open_ws - 1
	if fd then
		socket.close(fd)
	end
end

local function handler(req)
	if req.path == "/ws" then
		return bridge(req)
	end
	if req.method ~= "GET" and req.method ~= "HEAD" then
		return 405, "GET only\n"
	end
	local name = req.path == "/" and "index.html" or req.path:match "^/([%w_%-%.]+)$"
	local f = name and files[name]
	if not f then
		return 404, "not found\n", { ["content-type"] = "text/plain" }
	end
	return 200, req.method == "HEAD" and "" or f.body,
		{ ["content-type"] = f.type, ["cache-control"] = "no-cache" }
end

local CMD = {}

function CMD.start(c)
	conf = c
	conf.web_maxclient = c.web_maxclient or DEFAULT_WEB_MAXCLIENT
	load_files(c.root or "examples/web")
	local _, addr, port = server.listen { address = c.web_address, port = c.web_port,
		handler = handler, max_connections = c.maxclient or 1024, bodylimit = 0, timeout = 1000 }
	return addr, port
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = assert(CMD[cmd], cmd)
		skynet.retpack(f(...))
	end)
end)
