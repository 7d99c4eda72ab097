-- Clients for test/node/test_flow.sh and bench/bench_flow.sh (system
-- lua5.4 with clientsocket.so on LUA_CPATH), against svc_flow_node:
--   lua5.4 flow_client.lua PORT pipeline FRAMES BYTES
--       sends FRAMES work frames of BYTES payload bytes each, as fast as
--       the connection takes them, reading nothing; prints
--       "pipeline sent=<frames> bytes=<n>" after every 1000 frames and at
--       the end, then holds the connection until killed
--   lua5.4 flow_client.lua PORT ask TEXT TIMEOUT_MS
--       sends one frame TEXT and prints the first answer frame, or
--       "ask: no answer" (exit 1) when none came within TIMEOUT_MS
--   lua5.4 flow_client.lua PORT flood WAIT_MS
--       sends "flood", reads nothing for WAIT_MS, then drains; prints
--       "flood read=<bytes> closed=<true|false>" (closed: the server ended
--       the connection within 10 s of draining)
-- Every loop is bounded by a count or a poll timeout.
local cs = require "clientsocket"

local port = assert(tonumber(arg[1]), "port")
local mode = arg[2]
local fd = assert(cs.connect("127.0.0.1", port))

local function sleep_ms(ms)
	cs.poll(-1, ms, false)
end

if mode == "pipeline" then
	local frames = assert(tonumber(arg[3]))
	local bytes = assert(tonumber(arg[4]))
	local payload = "w" .. string.rep("x", bytes - 1)
	local sent = 0
	for i = 1, frames do
		if not cs.send(fd, payload) then
			break
		end
		sent = i
		if i % 1000 == 0 then
			print(string.format("pipeline sent=%d bytes=%d", sent, sent * bytes))
			io.stdout:flush()
		end
	end
	print(string.format("pipeline sent=%d bytes=%d", sent, sent * bytes))
	io.stdout:flush()
	for _ = 1, 600 do -- held until killed (at most a minute)
		sleep_ms(100)
	end
elseif mode == "ask" then
	assert(cs.send(fd, arg[3]))
	local limit = assert(tonumber(arg[4]))
	local buf = ""
	local waited = 0
	while waited < limit do
		cs.poll(fd, 50, false)
		waited = waited + 50
		local got = cs.recv(fd)
		if got == nil then
			break
		end
		buf = buf .. got
		if #buf >= 2 then
			local n = string.unpack(">I2", buf)
			if #buf >= 2 + n then
				print(buf:sub(3, 2 + n))
				os.exit(0)
			end
		end
	end
	print("ask: no answer")
	os.exit(1)
elseif mode == "flood" then
	assert(cs.send(fd, "flood"))
	sleep_ms(assert(tonumber(arg[3])))
	local read, closed = 0, false
	for _ = 1, 200 do -- 200 polls of at most 50 ms
		cs.poll(fd, 50, false)
		local got = cs.recv(fd)
		if got == nil then
			closed = true
			break
		end
		read = read + #got
	end
	print(string.format("flood read=%d closed=%s", read, tostring(closed)))
else
	error("flow_client: unknown mode " .. tostring(mode))
end
