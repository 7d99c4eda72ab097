-- Web benchmarks (bench/config.web: real time, two workers). Prints
--   BENCH name=web.http.req_per_s          50 keep-alive connections, each
--                                          GETting a 13-byte body and
--                                          waiting for it (closed loop)
--   BENCH name=web.ws.echo_per_s           100 WebSocket connections, each
--                                          sending a 64-byte message and
--                                          waiting for its echo
--   BENCH name=web.gate.ping_50conn_per_s  the same loads against the demo
--   BENCH name=web.gate.ping_100conn_per_s game's TCP gate: 64-byte "ping"
--                                          requests answered by the agents
--   BENCH name=web.ws_gate.ping_100conn_per_s  the browser's path: 100
--                                          WebSockets through examples/
--                                          webgate to the same game
-- then aborts the node. Everything binds 127.0.0.1 on ephemeral ports.
-- One file, several roles (the first launch argument): the driver (none),
-- "http" and "ws" servers, and "clients" (the load of one figure).
local skynet = require "skynet"
local report = require "bench_report"
require "skynet.manager"

local role = ...

local SECONDS <const> = 3
local WATCHDOG_CS <const> = 9000

local function serve(cmd)
	skynet.start(function()
		skynet.dispatch("lua", function(_, _, name, ...)
			skynet.retpack(cmd[name](...))
		end)
	end)
end

if role == "http" then
	local server = require "http.server"
	serve { start = function()
		local _, _, port = server.listen { port = 0, handler = function()
			return 200, "hello, world\n", { ["content-type"] = "text/plain" }
		end, max_connections = 4096 }
		return port
	end }
	return
elseif role == "ws" then
	local socket = require "skynet.socket"
	local websocket = require "http.websocket"
	serve { start = function()
		local id, _, port = socket.listen("127.0.0.1", 0, 256)
		socket.start(id, function(fd, addr)
			websocket.accept(fd, { message = function(wid, data, op)
				websocket.write(wid, data, op)
			end }, "ws", addr)
		end)
		return port
	end }
	return
elseif role == "clients" then
	local socket = require "skynet.socket"
	local websocket = require "http.websocket"
	local spack, sunpack = string.pack, string.unpack
	local LOAD = {}

	-- Each load: connect(port) -> conn, roundtrip(conn) (one closed-loop exchange).
	LOAD.http = {
		connect = function(port)
			local fd = assert(socket.open("127.0.0.1", port))
			local req = "GET /hello HTTP/1.1\r\nHost: bench\r\n\r\n"
			socket.write(fd, req)
			local head = ""
			while not head:find("\r\n\r\n", 1, true) do
				head = head .. assert(socket.read(fd))
			end
			local e = head:find("\r\n\r\n", 1, true)
			local len = tonumber(head:match "content%-length: (%d+)")
			local total = e + 3 + len
			assert(#head == total, "one response")
			return { fd = fd, req = req, total = total }
		end,
		roundtrip = function(c)
			socket.write(c.fd, c.req)
			return assert(socket.read(c.fd, c.total))
		end,
	}
	local PAYLOAD = string.rep("x", 64)
	LOAD.ws = {
		connect = function(port)
			return websocket.connect("ws://127.0.0.1:" .. port .. "/")
		end,
		roundtrip = function(id)
			websocket.write(id, PAYLOAD)
			return assert(websocket.read(id))
		end,
	}
	local PING = "ping" .. string.rep(" ", 60)
	LOAD.gate = {
		connect = function(port)
			local fd = assert(socket.open("127.0.0.1", port))
			local n = sunpack(">I2", assert(socket.read(fd, 2)))
			assert(socket.read(fd, n)) -- hello
			return fd
		end,
		roundtrip = function(fd)
			socket.write(fd, spack(">s2", PING))
			local n = sunpack(">I2", assert(socket.read(fd, 2)))
			return assert(socket.read(fd, n))
		end,
	}
	LOAD.ws_gate = {
		connect = function(port)
			local id = websocket.connect("ws://127.0.0.1:" .. port .. "/ws")
			assert(websocket.read(id)) -- hello
			return id
		end,
		roundtrip = function(id)
			websocket.write(id, PING)
			return assert(websocket.read(id))
		end,
	}

	serve { run = function(kind, port, conns)
		local load = LOAD[kind]
		local list = {}
		for i = 1, conns do
			list[i] = load.connect(port)
		end
		local count, stop, done = 0, false, 0
		local token = {}
		local t0 = skynet.now()
		for i = 1, conns do
			skynet.fork(function()
				while not stop do
					load.roundtrip(list[i])
					count = count + 1
				end
				done = done + 1
				if done == conns then
					skynet.wakeup(token)
				end
			end)
		end
		skynet.sleep(SECONDS * 100)
		stop = true
		local n = count
		local secs = (skynet.now() - t0) / 100
		skynet.wait(token)
		return n / secs
	end }
	return
end

skynet.start(function()
	skynet.timeout(WATCHDOG_CS, function()
		print("bench_web: timeout, aborting")
		skynet.abort()
	end)
	local function figure(name, kind, port, conns)
		local c = skynet.newservice("bench_web", "clients")
		report(name, skynet.call(c, "lua", "run", kind, port, conns), "req/s")
		skynet.kill(c)
	end
	local http = skynet.newservice("bench_web", "http")
	figure("web.http.req_per_s", "http", skynet.call(http, "lua", "start"), 50)
	local ws = skynet.newservice("bench_web", "ws")
	figure("web.ws.echo_per_s", "ws", skynet.call(ws, "lua", "start"), 100)

	-- the demo game, its gate, and the webgate in front of it
	local settings = require "settings"
	local s = settings.make { gate_port = 0, debug_console_port = 0, monster_count = 0,
		idle_kick_cs = 360000, reward_cs = 360000, seed = 1 }
	local world = skynet.newservice("world")
	skynet.call(world, "lua", "init", s)
	local watchdog = skynet.newservice("watchdog")
	local _, gport = skynet.call(watchdog, "lua", "start", s, world)
	figure("web.gate.ping_50conn_per_s", "gate", gport, 50)
	figure("web.gate.ping_100conn_per_s", "gate", gport, 100)
	local web = skynet.newservice("webgate")
	local _, wport = skynet.call(web, "lua", "start", { web_address = "127.0.0.1", web_port = 0,
		gate_address = "127.0.0.1", gate_port = gport, max_request = 256 })
	figure("web.ws_gate.ping_100conn_per_s", "ws_gate", wport, 100)
	skynet.abort()
end)
