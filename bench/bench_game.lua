-- The demo game's benchmark (bench/config.game): starts the game on a free
-- port, runs examples/bots.lua against it and prints
--   BENCH name=game.bots_<n>_req_per_s   answered requests per second
--   BENCH name=game.bots_<n>_p99_ms      99th percentile response latency
--   BENCH name=game.cpu_pct              process CPU (server and bots) over
--                                        the measured time, % of one core
local skynet = require "skynet"
require "skynet.manager"
local settings = require "settings"
local report = require "bench_report"

skynet.start(function()
	local s = settings.from_env(skynet.getenv)
	s.gate_port = 0
	local world = skynet.newservice("world")
	skynet.call(world, "lua", "init", s)
	local watchdog = skynet.newservice("watchdog")
	local _, port = skynet.call(watchdog, "lua", "start", s, world)
	local n = math.tointeger(tonumber(skynet.getenv "game_bots" or "1000"))
	local bots = skynet.newservice("bots")
	local st = skynet.call(bots, "lua", "run", {
		port = port, count = n, rate = math.tointeger(tonumber(skynet.getenv "game_bots_rate" or "2")),
		seconds = math.tointeger(tonumber(skynet.getenv "game_bots_seconds" or "20")),
		ramp_cs = 300,
	})
	report(string.format("game.bots_%d_req_per_s", n), st.req_per_s, "req/s")
	report(string.format("game.bots_%d_p99_ms", n), st.p99_ms, "ms")
	if st.cpu_pct then
		report("game.cpu_pct", st.cpu_pct, "%")
	end
	io.stdout:flush()
	skynet.abort()
end)
