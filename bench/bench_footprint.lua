-- Footprint benchmarks: what a service costs. One BENCH line per figure,
-- then the node aborts. footprint_mode (env) picks the part:
--   "spawn"  footprint.spawn_per_s: 10,000 sequential skynet.newservice of
--            bench_footprint_idle after one warm-up; then
--            footprint.rss_per_idle_service_kib (VmRSS growth / 10,000) and
--            footprint.rss_per_idle_service_1k_kib (after the first 1,000).
--   "ticks"  10,000 bench_footprint_tick services each sleeping a random
--            1..10 ticks for 5 s: footprint.ticks_cpu_s (process CPU over
--            the 5 s), footprint.ticks_per_s (wake-ups per second, against
--            footprint.ticks_ideal_per_s = 10,000 * 100 / 5.5), the CPU per
--            wake-up (footprint.ticks_cpu_us_per_tick: on a shared machine it
--            moves less than the CPU total, which is whatever the node got)
--            and the lateness of the wake-ups, footprint.ticks_late_p50_ms /
--            _p99_ms.
--   "cticks" the same load on 10,000 bench-only C services (bench/svc_ticker.c):
--            footprint.ticks_c_cpu_us_per_tick and footprint.ticks_c_per_s,
--            the runtime's share of every wake-up (the floor under the Lua
--            figures).
local skynet = require "skynet"
local report = require "bench_report"
local proc = require "bench_proc"

local hpc = skynet.hpc

local SERVICES <const> = tonumber(skynet.getenv("footprint_services")) or 10000 -- for runs by hand
local FIRST <const> = math.min(1000, SERVICES)
local TICK_SECONDS <const> = 5
local WATCHDOG_CS <const> = 18000

local function bench_spawn()
	skynet.newservice("bench_footprint_idle") -- warm up
	collectgarbage("collect")
	local rss0 = proc.vmrss_kib()
	local t0 = hpc()
	for _ = 1, FIRST do
		skynet.newservice("bench_footprint_idle")
	end
	local t1 = hpc()
	local rss1 = proc.vmrss_kib()
	local t2 = hpc()
	for _ = FIRST + 1, SERVICES do
		skynet.newservice("bench_footprint_idle")
	end
	local t3 = hpc()
	local rss2 = proc.vmrss_kib()
	report("footprint.spawn_per_s", SERVICES / (((t1 - t0) + (t3 - t2)) / 1e9), "services/s")
	report("footprint.rss_per_idle_service_kib", (rss2 - rss0) / SERVICES, "KiB")
	report("footprint.rss_per_idle_service_1k_kib", (rss1 - rss0) / FIRST, "KiB")
end

local function percentile(hist, total, p)
	local keys = {}
	for ms in pairs(hist) do
		keys[#keys + 1] = ms
	end
	table.sort(keys)
	local want = math.max(1, math.ceil(total * p))
	local seen = 0
	for _, ms in ipairs(keys) do
		seen = seen + hist[ms]
		if seen >= want then
			return ms + 1 -- the bucket's upper edge
		end
	end
	return 0
end

local function bench_ticks()
	local list = {}
	for i = 1, SERVICES do
		list[i] = skynet.newservice("bench_footprint_tick")
	end
	collectgarbage("collect")
	local cpu0 = proc.cpu_s()
	local t0 = hpc()
	local deadline = t0 + TICK_SECONDS * 1e9
	skynet.error("bench_footprint: ticking starts")
	for _, h in ipairs(list) do
		skynet.send(h, "lua", "go", deadline)
	end
	skynet.sleep(TICK_SECONDS * 100)
	while hpc() < deadline do
		skynet.sleep(1)
	end
	local cpu1 = proc.cpu_s()
	local wakes = 0
	local hist = {}
	for _, h in ipairs(list) do
		local n, text = skynet.call(h, "lua", "stats")
		wakes = wakes + n
		for ms, count in text:gmatch("(%-?%d+)=(%d+)") do
			ms = tonumber(ms)
			hist[ms] = (hist[ms] or 0) + tonumber(count)
		end
	end
	report("footprint.ticks_cpu_s", cpu1 - cpu0, "s")
	report("footprint.ticks_per_s", wakes / TICK_SECONDS, "ticks/s")
	report("footprint.ticks_cpu_us_per_tick", (cpu1 - cpu0) * 1e6 / wakes, "us")
	report("footprint.ticks_ideal_per_s", SERVICES * 100 / 5.5, "ticks/s")
	report("footprint.ticks_late_p50_ms", percentile(hist, wakes, 0.50), "ms")
	report("footprint.ticks_late_p99_ms", percentile(hist, wakes, 0.99), "ms")
end

-- The C tickers speak plain text.
skynet.register_protocol {
	name = "text", id = skynet.PTYPE_TEXT, pack = function(text)
		return text
	end, unpack = skynet.tostring,
}

local function bench_cticks()
	local list = {}
	for i = 1, SERVICES do
		list[i] = skynet.launch("ticker")
	end
	collectgarbage("collect")
	local cpu0 = proc.cpu_s()
	for _, h in ipairs(list) do
		skynet.send(h, "text", "go")
	end
	skynet.sleep(TICK_SECONDS * 100)
	local cpu1 = proc.cpu_s()
	local wakes = tonumber(skynet.call(list[1], "text", "count"))
	for _, h in ipairs(list) do
		skynet.send(h, "text", "stop")
	end
	report("footprint.ticks_c_cpu_us_per_tick", (cpu1 - cpu0) * 1e6 / wakes, "us")
	report("footprint.ticks_c_per_s", wakes / TICK_SECONDS, "ticks/s")
end

skynet.start(function()
	skynet.timeout(WATCHDOG_CS, function()
		print("bench: footprint benchmarks timed out")
		skynet.abort()
	end)
	skynet.fork(function()
		local mode = skynet.getenv("footprint_mode") or "spawn"
		local ok, err = xpcall(function()
			if mode == "spawn" then
				bench_spawn()
			elseif mode == "ticks" then
				bench_ticks()
			elseif mode == "cticks" then
				bench_cticks()
			else
				error("bench_footprint: unknown footprint_mode (" .. mode .. ")")
			end
		end, debug.traceback)
		if not ok then
			skynet.error("bench_footprint: " .. tostring(err))
			print("bench: footprint benchmarks failed: " .. tostring(err))
		end
		skynet.abort()
	end)
end)
