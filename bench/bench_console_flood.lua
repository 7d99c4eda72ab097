-- abuse.console_flood_answer_ms: the debug console's answer time on one
-- connection while another connection floods it with 4 MB of newlines.
-- A flooder service writes the newlines in 64 KB pieces; this service sends
-- an unknown command (answered at once with <CMD Error>) every 10 ms on a
-- second connection and keeps the slowest answer seen until the flooder is
-- done (the console closes it at its input limit). Prints
--   BENCH name=abuse.console_flood_answer_ms  (slowest answer during the flood)
-- then aborts the node.
local skynet = require "skynet"
local socket = require "skynet.socket"
local report = require "bench_report"
require "skynet.manager"

local FLOOD_BYTES <const> = 4 * 1024 * 1024
local PIECE <const> = 64 * 1024
local PROBE_CS <const> = 1

local mode, port = ...

local function flood(p)
	local fd = assert(socket.open("127.0.0.1", math.tointeger(tonumber(p))))
	socket.readline(fd) -- welcome
	local piece = ("\n"):rep(PIECE)
	local sent = 0
	while sent < FLOOD_BYTES do
		if not socket.write(fd, piece) then
			break
		end
		sent = sent + PIECE
	end
	-- Drain what the console answers (nothing for empty lines) until it is done.
	while socket.read(fd) do
	end
	socket.close(fd)
end

local function answer(fd)
	local t0 = skynet.hpc()
	socket.write(fd, "nosuchcmd\n")
	while true do
		local line = socket.readline(fd)
		if line == nil then
			return nil
		end
		if line == "<CMD Error>" or line == "<CMD OK>" then
			return (skynet.hpc() - t0) / 1e6
		end
	end
end

local function main()
	local console = skynet.newservice("debug_console", 0)
	local _, cport = skynet.call(console, "lua", "ADDRESS")
	local probe = assert(socket.open("127.0.0.1", cport))
	socket.readline(probe)
	local idle = answer(probe)
	local done = false
	local flooder = skynet.newservice("bench_console_flood", "flood", cport)
	skynet.fork(function()
		skynet.call(flooder, "lua", "wait")
		done = true
	end)
	local worst, n = 0, 0
	local t0 = skynet.hpc()
	while not done and n < 3000 do
		local ms = answer(probe)
		if ms == nil then
			break
		end
		worst = math.max(worst, ms)
		n = n + 1
		skynet.sleep(PROBE_CS)
	end
	local flood_ms = (skynet.hpc() - t0) / 1e6
	report("abuse.console_flood_answer_ms", worst, "ms")
	print(string.format("bench: idle answer %.2f ms; %d answers during a %.0f ms flood", idle, n,
		flood_ms))
end

if mode == "flood" then
	skynet.start(function()
		skynet.dispatch("lua", function()
			local ok, err = pcall(flood, port)
			if not ok then
				skynet.error("flooder: " .. tostring(err))
			end
			skynet.retpack()
		end)
	end)
else
	skynet.start(function()
		local ok, err = xpcall(main, debug.traceback)
		if not ok then
			print("bench: console_flood failed: " .. tostring(err))
		end
		skynet.sleep(5)
		skynet.abort(ok and 0 or 1)
	end)
end
