-- Memory after a burst (bench/config.burst): the demo game on a free port,
-- then 1000 bot players (examples/bots.lua) connect, play for a few seconds
-- and leave. RSS (from /proc/self/statm) is sampled every 100 ms. Prints
--   BENCH name=abuse.rss_burst_peak_mb   peak RSS minus the RSS before the bots
--   BENCH name=abuse.rss_after_burst_mb  RSS 10 s after the last agent ended,
--                                        minus the RSS before the bots
local skynet = require "skynet"
require "skynet.manager"
local settings = require "settings"
local report = require "bench_report"

local PAGE_MB <const> = 4096 / (1024 * 1024)

local function rss_mb()
	local f = assert(io.open "/proc/self/statm")
	local _, resident = f:read("n", "n")
	f:close()
	return resident * PAGE_MB
end

local function count(t)
	local n = 0
	for _ in pairs(t) do
		n = n + 1
	end
	return n
end

skynet.start(function()
	local s = settings.from_env(skynet.getenv)
	s.gate_port = 0
	local world = skynet.newservice("world")
	skynet.call(world, "lua", "init", s)
	local watchdog = skynet.newservice("watchdog")
	local _, port = skynet.call(watchdog, "lua", "start", s, world)
	local bots = skynet.newservice("bots")
	collectgarbage()
	skynet.sleep(100)
	local before = rss_mb()
	local peak, sampling = before, true
	skynet.fork(function()
		while sampling do
			peak = math.max(peak, rss_mb())
			skynet.sleep(10)
		end
	end)
	local n = math.tointeger(tonumber(skynet.getenv "game_bots" or "1000"))
	skynet.call(bots, "lua", "run", {
		port = port, count = n, rate = 2,
		seconds = math.tointeger(tonumber(skynet.getenv "game_bots_seconds" or "3")),
		ramp_cs = 200,
	})
	skynet.kill(bots)
	local deadline = skynet.now() + 3000
	while count(skynet.call(watchdog, "lua", "agents")) > 0 and skynet.now() < deadline do
		skynet.sleep(10)
	end
	sampling = false
	skynet.sleep(1000)
	local after = rss_mb()
	report("abuse.rss_burst_peak_mb", peak - before, "MB")
	report("abuse.rss_after_burst_mb", after - before, "MB")
	print(string.format("bench: RSS %.1f MB before, %.1f MB at the peak, %.1f MB 10 s after",
		before, peak, after))
	io.stdout:flush()
	skynet.abort()
end)
