-- Bad input (issue 6), each case on the gate/watchdog/agent stack or on a
-- skynet.socket pair: a frame header announcing more than is sent before a
-- disconnect; a slowloris client while others are served; 10 MB of garbage
-- on a framed connection; writes to a socket the peer closed; a peer that
-- never reads while 100 MB are offered (warnings, bounded memory); warning
-- doubling and drain; connect to a closed port; 1000 connections opened and
-- dropped (no fd leak).
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"
local util = require "svc_net_util"

local spack, sunpack = string.pack, string.unpack
local MB <const> = 1024 * 1024

local watchdog, port

local function frame(payload)
	return spack(">s2", payload)
end

local function read_frame(c)
	local h = socket.read(c, 2)
	if not h then
		return nil
	end
	return socket.read(c, sunpack(">I2", h)) or nil
end

-- A client with its agent ready: the client socket and the gate's fd.
local function client()
	local n = skynet.call(watchdog, "lua", "started")
	local c = assert(socket.open("127.0.0.1", port))
	assert(util.wait_for(function()
		return skynet.call(watchdog, "lua", "started") > n
	end), "agent made")
	local _, fd = skynet.call(watchdog, "lua", "started")
	return c, fd
end

local function ping(c, x)
	socket.write(c, frame("ping " .. x))
	return read_frame(c) == "pong " .. x
end

local function mem_kb()
	local f = assert(io.open("/proc/self/status"))
	local s = f:read("a")
	f:close()
	return tonumber(s:match "VmRSS:%s*(%d+)")
end

t.case("a header announcing more than is sent, then a disconnect", function()
	skynet.call(watchdog, "lua", "events")
	local c, fd = client()
	socket.write(c, spack(">I2", 1000) .. string.rep("x", 10))
	t.quiesce()
	socket.close(c)
	t.ok(util.wait_for(function()
		return skynet.call(watchdog, "lua", "exits")[fd] ~= nil
	end), "agent gone")
	t.eq(skynet.call(watchdog, "lua", "exits")[fd], 0, "no frame delivered")
	local other = client()
	t.ok(ping(other, "after"), "gate still serves")
	socket.close(other)
end)

t.case("slowloris: one byte at a time while others are served", function()
	local slow = client()
	local fast = client()
	local f = frame("ping slow")
	local served = 0
	for i = 1, #f do
		socket.write(slow, f:sub(i, i))
		skynet.sleep(100) -- one byte a second (virtual time)
		for k = 1, 20 do
			assert(ping(fast, i .. "." .. k), "fast client answered")
			served = served + 1
		end
	end
	t.eq(served, #f * 20, "fast round trips while the slow frame was partial")
	t.eq(read_frame(slow), "pong slow", "slow frame delivered intact")
	socket.close(slow)
	socket.close(fast)
end)

t.case("10 MB of garbage on a framed connection", function()
	skynet.call(watchdog, "lua", "events")
	local c, fd = client()
	local block = util.bytes(64 * 1024, 5)
	local sent = 0
	while sent < 10 * MB do
		if not socket.write(c, block) then
			break
		end
		sent = sent + #block
		if sent % MB == 0 then
			skynet.yield()
		end
	end
	t.eq(read_frame(c), nil, "garbage client closed")
	socket.close(c)
	local saw_bad = false
	for _, e in ipairs(skynet.call(watchdog, "lua", "events")) do
		if e[1] == "bad" and e[2] == fd then
			saw_bad = true
		end
	end
	t.ok(saw_bad, "rejected as a protocol error")
	local other = client()
	t.ok(ping(other, "fine"), "gate still serves")
	socket.close(other)
end)

t.case("writes to a socket the peer closed", function()
	local s, c = util.pair()
	socket.close(c)
	local results = {}
	for i = 1, 50 do
		results[#results + 1] = socket.write(s, string.rep("w", 1000))
		if i % 10 == 0 then
			t.quiesce()
		end
	end
	t.eq(results[#results], false, "writes fail once the close is seen")
	t.eq(socket.disconnected(s), true, "disconnected")
	socket.close(s)
	-- the gate side: an agent writing to a kicked client
	local g, fd = client()
	socket.close(g)
	t.ok(util.wait_for(function()
		return skynet.call(watchdog, "lua", "exits")[fd] ~= nil
	end), "agent gone")
	t.eq(socket.write(fd, frame("late")), false, "write to a closed gate fd")
end)

t.case("a peer that never reads: the writer is warned and stops", function()
	local s, c = util.pair()
	socket.pause(c) -- c never reads
	local warned = {}
	socket.warning(s, function(_, kb)
		warned[#warned + 1] = kb
	end)
	local rss0 = mem_kb()
	local chunk = string.rep("z", 64 * 1024)
	local offered = 0
	while offered < 100 * MB and #warned == 0 do
		socket.write(s, chunk)
		offered = offered + #chunk
		if offered % (256 * 1024) == 0 then
			skynet.yield()
		end
	end
	t.quiesce()
	t.ok(#warned > 0 and warned[1] >= 1024, "warned at 1 MB or more")
	t.ok(offered < 100 * MB, "stopped early: " .. offered)
	local pending = util.info(s).wbuffer
	t.ok(pending < 16 * MB, "pending output bounded: " .. pending)
	local grown = mem_kb() - rss0
	t.ok(grown < 64 * 1024, "memory bounded: +" .. grown .. " KB")
	socket.close(c)
	socket.shutdown(s)
	socket.close(s)
end)

t.case("warnings double while output grows, then 0 when it drains", function()
	local s, c = util.pair()
	socket.pause(c)
	local warned = {}
	socket.warning(s, function(_, kb)
		warned[#warned + 1] = kb
	end)
	local chunk = string.rep("d", 64 * 1024)
	local total = 0
	for _ = 1, 160 do -- 10 MB, ignoring the warnings
		socket.write(s, chunk)
		total = total + #chunk
	end
	t.quiesce()
	t.ok(#warned >= 2, "several warnings: " .. table.concat(warned, ","))
	for i = 1, #warned do
		local floor = 1024 << (i - 1)
		t.ok(warned[i] >= floor and warned[i] < floor * 2,
			"warning " .. i .. ": " .. table.concat(warned, ","))
	end
	local got = socket.read(c, total)
	t.eq(#got, total, "peer gets everything")
	t.ok(util.wait_for(function()
		return warned[#warned] == 0
	end), "drained: " .. table.concat(warned, ","))
	socket.close(c)
	socket.close(s)
end)

t.case("connect to a closed port", function()
	local lid, _, p = socket.listen("127.0.0.1", 0)
	socket.close(lid)
	local id, err = socket.open("127.0.0.1", p)
	t.eq(id, nil, "no id")
	t.ok(type(err) == "string" and #err > 0, "error text: " .. tostring(err))
end)

t.case("1000 connections opened and dropped leak no fd", function()
	local echo = skynet.newservice("svc_net_echo")
	local p = skynet.call(echo, "lua", "listen")
	-- warm up (first connection allocates whatever is lazily allocated)
	local w = assert(socket.open("127.0.0.1", p))
	socket.close(w)
	skynet.call(echo, "lua", "wait_idle")
	local fds0 = util.fd_count()
	local socks0 = #socket.netstat()
	for i = 1, 1000 do
		local c = assert(socket.open("127.0.0.1", p))
		if i % 3 == 0 then
			socket.write(c, "x")
			socket.read(c, 1)
		end
		if i % 2 == 0 then
			socket.shutdown(c)
		end
		socket.close(c)
	end
	skynet.call(echo, "lua", "wait_idle")
	t.quiesce()
	t.eq(#socket.netstat(), socks0, "sockets open")
	-- A few descriptors come and go outside the sockets (files services
	-- opened and leave to the garbage collector); a leak here would be
	-- hundreds.
	local fds = util.fd_count()
	t.ok(fds <= fds0 + 4, string.format("fds open: %d before, %d after", fds0, fds))
	skynet.call(echo, "lua", "close")
	skynet.kill(echo)
end)

t.start(nil, function()
	watchdog = skynet.newservice("svc_net_watchdog")
	local _
	_, port = skynet.call(watchdog, "lua", "start", {
		address = "127.0.0.1", port = 0, maxclient = 128,
	})
end)
