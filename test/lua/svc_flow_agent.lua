-- The agent of one connection of svc_flow_node (test/node/test_flow.sh,
-- bench/bench_flow.sh), started with the connection's fd. It is slow on
-- purpose and handles each frame before the next (no coroutine parks a
-- request), so a client that pipelines faster than it works makes its
-- mailbox grow, which is what socket flow control must stop. Frames
-- (2-byte big-endian length, as the gate cuts them):
--   "w..."   work: WORK_NS of busy computation, no answer
--   "ping"   answers "pong"
--   "stat"   answers "stat pauses=<n> paused=<n> conns=<n>": the most
--            flow pauses of one TCP connection, how many connections are
--            flow-paused now, how many connections are open
--   "flood"  writes 64 KB chunks to the connection until it is closed
--            (bounded at FLOOD_MAX bytes), then logs
--            "flow: flood stopped fd=<fd> bytes=<n>"
-- Lua command: exit().
local skynet = require "skynet"
local driver = require "skynet.socketdriver"

local fd = tonumber((...))
local WORK_NS <const> = 500000
local CHUNK <const> = string.rep("f", 64 * 1024)
local FLOOD_MAX <const> = 256 * 1024 * 1024

local function reply(text)
	driver.send(fd, string.pack(">s2", text))
end

local function work()
	local stop = skynet.hpc() + WORK_NS
	local x = 0
	while skynet.hpc() < stop do
		x = x + 1
	end
	return x
end

local function stat()
	local pauses, paused, conns = 0, 0, 0
	for _, s in ipairs(driver.info()) do
		if s.type == "TCP" and s.peer then
			conns = conns + 1
			pauses = math.max(pauses, s.flow_pauses)
			if s.flow_paused then
				paused = paused + 1
			end
		end
	end
	reply(string.format("stat pauses=%d paused=%d conns=%d", pauses, paused, conns))
end

local function flood()
	local sent = 0
	while sent < FLOOD_MAX do
		for _ = 1, 16 do
			if not driver.send(fd, CHUNK) then
				skynet.error(string.format("flow: flood stopped fd=%d bytes=%d", fd, sent))
				return
			end
			sent = sent + #CHUNK
		end
		skynet.sleep(1)
	end
	skynet.error(string.format("flow: flood not stopped fd=%d bytes=%d", fd, sent))
end

skynet.register_protocol {
	name = "client",
	id = skynet.PTYPE_CLIENT,
	unpack = skynet.tostring,
	dispatch = function(_, _, msg)
		skynet.ignoreret()
		local c = msg:sub(1, 1)
		if c == "w" then
			work()
		elseif msg == "ping" then
			reply("pong")
		elseif msg == "stat" then
			stat()
		elseif msg == "flood" then
			flood()
		end
	end,
}

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		if cmd == "exit" then
			skynet.exit()
		end
	end)
end)
