-- The demo's web front door (examples/webgate.lua) against a game gate
-- with few slots: a /ws request that is refused never reaches the gate (no
-- connection, so no agent); WebSockets are capped at web_maxclient (503
-- beyond, before any gate connection), so they never take every gate slot
-- and a terminal client still gets in; the bytes a browser sends right
-- behind its handshake reach the game; an unreachable gate closes the
-- WebSocket with 1011.
local skynet = require "skynet"
local socket = require "skynet.socket"
local websocket = require "http.websocket"
local t = require "testlib"
local game = require "svc_game_util"

local KEY <const> = "dGhlIHNhbXBsZSBub25jZQ=="

local function start_web(gate_port, web_maxclient)
	local web = skynet.newservice("svc_game_svc", "webgate")
	local _, port = skynet.call(web, "lua", "start", { web_address = "127.0.0.1", web_port = 0,
		gate_address = "127.0.0.1", gate_port = gate_port, max_request = 256,
		web_maxclient = web_maxclient })
	return port
end

-- Connections the game's gate has reported since the game started.
local function opened(g)
	return skynet.call(g.watchdog, "lua", "stats").opened
end

local BASE <const> = "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	.. "Sec-WebSocket-Key: " .. KEY .. "\r\nSec-WebSocket-Version: 13\r\n"

-- A /ws request with the header lines given (default: a valid upgrade).
local function upgrade_request(header)
	return "GET /ws HTTP/1.1\r\n" .. (header or BASE) .. "\r\n"
end

-- Everything the server sends until it closes (at most 5 s).
local function read_until_close(fd)
	return t.read_until_close(fd, 500)
end

-- One unmasked server frame from a raw socket: payload (text frames only).
local function read_text_frame(fd)
	local h = assert(socket.read(fd, 2), "frame header")
	local b1, len = h:byte(1, 2)
	t.eq(b1, 0x81, "a final text frame")
	if len == 126 then
		len = string.unpack(">I2", assert(socket.read(fd, 2)))
	end
	return len > 0 and assert(socket.read(fd, len)) or ""
end

t.case("a refused /ws request never reaches the gate", function()
	local g = game.start { maxclient = 4 }
	local port = start_web(g.port, 2)
	local base = BASE
	local bad = {
		upgrade_request(base:gsub(KEY, "!!!!")),
		upgrade_request(base:gsub(KEY, "abc")),
		upgrade_request(base:gsub("Upgrade: websocket\r\n", "")),
		upgrade_request(base:gsub("Version: 13", "Version: 8")),
		upgrade_request(base:gsub("Connection: Upgrade", "Connection: close")),
		(upgrade_request(base):gsub("^GET", "POST")),
	}
	for i, request in ipairs(bad) do
		local fd = assert(socket.open("127.0.0.1", port))
		socket.write(fd, request)
		local answer = read_until_close(fd)
		t.ok(answer:find("^HTTP/1.1 4%d%d "),
			string.format("request %d answered 4xx: %q", i, answer))
	end
	-- the gate reports connections in order: once this one is in, any
	-- earlier one would have been counted
	local c = game.connect(g)
	t.eq(opened(g), 1, "connections the gate saw (the terminal client's only)")
	c:close()
end)

t.case("web_maxclient: the WebSocket over the limit gets 503, a terminal still gets in", function()
	local g = game.start { maxclient = 3 }
	local port = start_web(g.port, 2)
	local url = "ws://127.0.0.1:" .. port .. "/ws"
	local ws1 = websocket.connect(url)
	t.ok(websocket.read(ws1):find("^hello "), "first WebSocket: the game's hello")
	-- the second sends a request in the same write as its handshake: it
	-- reaches the game (answered after the hello)
	local fd = assert(socket.open("127.0.0.1", port))
	socket.write(fd, upgrade_request() .. websocket.encode_frame(1, "login early", 0x01020304))
	local head = ""
	while not head:find("\r\n\r\n", 1, true) do
		head = head .. assert(socket.read(fd, 1))
	end
	t.ok(head:find("^HTTP/1.1 101 "), head)
	t.ok(read_text_frame(fd):find("^hello "), "second WebSocket: the game's hello")
	local answer
	for _ = 1, 5 do
		answer = read_text_frame(fd)
		if answer:find("^ok ") or answer:find("^err ") then
			break
		end
	end
	t.ok(answer:find("^ok login name=early "), "the early request answered: " .. answer)
	-- the limit: refused before any gate connection
	t.raises("code[503]", websocket.connect, url)
	local term = game.login(g, "term")
	t.ok(term:request("look"):find("^ok look"), "a terminal player still plays")
	t.eq(opened(g), 3, "gate connections: two WebSockets and the terminal")
	-- a WebSocket that closes frees its place
	websocket.close(ws1)
	local ws3
	t.ok(game.wait_for(function()
		local ok, id = pcall(websocket.connect, url)
		ws3 = ok and id
		return ws3
	end, 500), "a WebSocket gets in once another closed")
	t.ok(websocket.read(ws3):find("^hello "), "third WebSocket: the game's hello")
	websocket.close(ws3)
	socket.close(fd)
	term:close()
end)

t.case("an unreachable gate: the WebSocket closes with 1011", function()
	local lid, _, free = socket.listen("127.0.0.1", 0)
	socket.close(lid)
	local port = start_web(free, 2)
	local id = websocket.connect("ws://127.0.0.1:" .. port .. "/ws")
	local ok, payload = websocket.read(id)
	t.eq(ok, false, "closed by the server")
	t.eq(string.unpack(">I2", payload), 1011, "close code")
end)

t.start()
