-- service/gate + watchdog + agents: a framed chat server
-- with 50 clients, 2000 clients at once, frames split and packed together,
-- the watchdog notices, accept mode, kick, maxclient, close; and a custom
-- gateserver whose handler blocks (the frames behind it are still served).
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"
local util = require "svc_net_util"

local spack, sunpack = string.pack, string.unpack

local function frame(payload)
	return spack(">s2", payload)
end

-- The next frame's payload, or nil when the connection closed.
local function read_frame(c)
	local h = socket.read(c, 2)
	if not h then
		return nil
	end
	local n = sunpack(">I2", h)
	return socket.read(c, n) or nil
end

local function events_of(watchdog, fd)
	local out = {}
	for _, e in ipairs(skynet.call(watchdog, "lua", "events")) do
		if e[2] == fd then
			out[#out + 1] = e[1]
		end
	end
	return table.concat(out, ",")
end

local function open_client(port, watchdog, want_agents)
	local c = assert(socket.open("127.0.0.1", port))
	if watchdog then
		assert(util.wait_for(function()
			return skynet.call(watchdog, "lua", "agents") >= want_agents
		end), "agent made")
	end
	return c
end

t.case("gate open returns the bound address and port", function()
	local wd = skynet.newservice("svc_net_watchdog")
	local addr, port = skynet.call(wd, "lua", "start", { address = "127.0.0.1", port = 0 })
	t.eq(addr, "127.0.0.1", "address")
	t.ok(math.type(port) == "integer" and port > 0, "port")
	skynet.call(wd, "lua", "close")
	t.eq(socket.open("127.0.0.1", port), nil, "closed listener refuses")
end)

t.case("chat: 50 clients hear every message", function()
	local wd = skynet.newservice("svc_net_watchdog")
	local _, port = skynet.call(wd, "lua", "start", {
		address = "127.0.0.1", port = 0, maxclient = 64, nodelay = true,
	})
	local N <const> = 50
	local clients = {}
	for i = 1, N do
		clients[i] = open_client(port, wd, i)
	end
	for i, c in ipairs(clients) do
		socket.write(c, frame("say hello " .. i))
	end
	for i, c in ipairs(clients) do
		local heard = {}
		for _ = 1, N do
			local msg = assert(read_frame(c), "client " .. i .. " closed")
			local from = tonumber(msg:match "hello (%d+)$")
			t.eq(heard[from], nil, "heard twice")
			heard[from] = true
		end
		for k = 1, N do
			t.ok(heard[k], string.format("client %d heard %d", i, k))
		end
	end
	for _, c in ipairs(clients) do
		socket.close(c)
	end
	t.ok(util.wait_for(function()
		return skynet.call(wd, "lua", "agents") == 0
	end), "agents gone")
end)

t.case("frames split across writes and packed together", function()
	local wd = skynet.newservice("svc_net_watchdog")
	local _, port = skynet.call(wd, "lua", "start", { address = "127.0.0.1", port = 0 })
	local c = open_client(port, wd, 1)
	local f = frame("ping 1")
	socket.write(c, f:sub(1, 1)) -- half a header
	t.quiesce()
	socket.write(c, f:sub(2, 4))
	t.quiesce()
	socket.write(c, f:sub(5))
	t.eq(read_frame(c), "pong 1", "split frame")
	local many = {}
	for i = 1, 100 do
		many[i] = frame("ping " .. i)
	end
	socket.write(c, table.concat(many))
	for i = 1, 100 do
		t.eq(read_frame(c), "pong " .. i, "packed frame " .. i)
	end
	local big = "ping " .. string.rep("x", 65535 - 5)
	socket.write(c, frame(big))
	t.eq(read_frame(c), "pong " .. string.rep("x", 65530), "64 KB - 1 frame")
	socket.write(c, frame(""))
	t.eq(read_frame(c), nil, "empty frame: a protocol error, kicked")
	socket.close(c)
end)

t.case("watchdog notices: open, data (accept mode), close", function()
	local wd = skynet.newservice("svc_net_watchdog")
	local _, port = skynet.call(wd, "lua", "start", {
		address = "127.0.0.1", port = 0, mode = "accept",
	})
	local c = assert(socket.open("127.0.0.1", port))
	socket.write(c, frame("ping a"))
	t.eq(read_frame(c), "pong a", "answered by the watchdog")
	socket.close(c)
	t.ok(util.wait_for(function()
		local e = skynet.call(wd, "lua", "events")
		for _, v in ipairs(e) do
			if v[1] == "close" then
				return true
			end
		end
	end), "close notice")
end)

t.case("2000 clients at once (accept mode)", function()
	local N <const> = 2000
	local wd = skynet.newservice("svc_net_watchdog")
	local _, port = skynet.call(wd, "lua", "start", {
		address = "127.0.0.1", port = 0, mode = "accept", maxclient = 4096, backlog = 256,
	})
	local ids = {}
	for i = 1, N do
		ids[i] = assert(socket.open("127.0.0.1", port))
		socket.write(ids[i], frame("ping " .. i))
	end
	for i = 1, N do
		t.eq(read_frame(ids[i]), "pong " .. i, "client " .. i)
	end
	for i = 1, N do
		socket.close(ids[i])
	end
	local closes = 0
	t.ok(util.wait_for(function()
		for _, e in ipairs(skynet.call(wd, "lua", "events")) do
			if e[1] == "close" then
				closes = closes + 1
			end
		end
		return closes == N
	end), "close notices: " .. closes)
end)

t.case("notice sequence of one agent client, kick", function()
	local wd = skynet.newservice("svc_net_watchdog")
	local _, port = skynet.call(wd, "lua", "start", { address = "127.0.0.1", port = 0 })
	local c = open_client(port, wd, 1)
	socket.write(c, frame("ping k"))
	t.eq(read_frame(c), "pong k", "pong")
	local ev = skynet.call(wd, "lua", "events")
	t.eq(#ev, 1, "one notice so far")
	t.eq(ev[1][1], "open", "open notice")
	local fd = ev[1][2]
	t.ok(ev[1][3]:match "^127%.0%.0%.1:%d+$", "open address: " .. tostring(ev[1][3]))
	skynet.call(wd, "lua", "kick", fd)
	t.eq(read_frame(c), nil, "kicked client sees the close")
	t.ok(util.wait_for(function()
		return skynet.call(wd, "lua", "exits")[fd] ~= nil
	end), "agent exited")
	t.eq(skynet.call(wd, "lua", "exits")[fd], 1, "frames seen by the agent")
	t.eq(events_of(wd, fd), "close", "close notice after kick")
	socket.close(c)
end)

t.case("connections over maxclient are closed at once", function()
	local wd = skynet.newservice("svc_net_watchdog")
	local _, port = skynet.call(wd, "lua", "start", {
		address = "127.0.0.1", port = 0, maxclient = 3,
	})
	local clients = {}
	for i = 1, 3 do
		clients[i] = open_client(port, wd, i)
	end
	local extra = assert(socket.open("127.0.0.1", port))
	t.eq(socket.read(extra), false, "fourth connection closed")
	socket.close(extra)
	for i, c in ipairs(clients) do
		socket.write(c, frame("ping " .. i))
		t.eq(read_frame(c), "pong " .. i, "client " .. i .. " still served")
	end
	socket.close(clients[1])
	t.ok(util.wait_for(function()
		return skynet.call(wd, "lua", "agents") == 2
	end), "one left")
	local again = open_client(port, wd, 3)
	socket.write(again, frame("ping again"))
	t.eq(read_frame(again), "pong again", "a free slot is usable again")
	socket.close(again)
	socket.close(clients[2])
	socket.close(clients[3])
end)

t.case("a blocking message handler does not hold the frames behind it", function()
	local gs = skynet.newservice("svc_net_gs")
	local _, port = skynet.call(gs, "lua", "open", { address = "127.0.0.1", port = 0 })
	local c = assert(socket.open("127.0.0.1", port))
	socket.write(c, frame("block 50") .. frame("a") .. frame("b"))
	t.eq(read_frame(c), "a", "first reply")
	t.eq(read_frame(c), "b", "second reply")
	t.eq(read_frame(c), "block 50", "blocked one last")
	socket.close(c)
	local seen = {}
	t.ok(util.wait_for(function()
		local log = skynet.call(gs, "lua", "log")
		table.move(log, 1, #log, #seen + 1, seen)
		return #seen >= 2
	end), "two events")
	t.eq(table.concat(seen, ","), "connect,disconnect", "events")
end)

t.start()
