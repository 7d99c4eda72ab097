-- The sampling profiler's cost to messaging:
--   BENCH name=diag.profile_overhead_pct   throughput lost with the profiler at
--                                          100 Hz on every service, in percent
-- Workload: PAIRS senders each send PER_SENDER one-integer messages to their
-- own sink (the services stay up between runs). ROUNDS rounds each measure
-- one run with the profiler off and one with it on (skynet.profiler.start()
-- for every service at 100 Hz), in alternating order (off first in odd
-- rounds, on first in even ones) so that a drift of the machine's load
-- falls on both sides. A run's throughput is counted per CPU second of the
-- whole process (os.clock: every thread, the sampler thread included), so
-- that other programs taking the cores (a shared machine) do not land in
-- the figure; the wall-clock rates are printed too. Each round prints its
-- runs ("bench: profile round ..."); the figure is the median of the
-- rounds' overheads, 100 * (1 - on / off) of the per-CPU-second rates.
-- On a shared machine a round swings by tens of percent either way, far
-- more than the profiler costs, so two direct figures follow, from what the
-- workers spent taking the samples (skynet.profiler.status().cost: the
-- stack walks and the records, timed by the sampler):
--   BENCH name=diag.profile_sample_us      mean cost of one sample
--   BENCH name=diag.profile_cost_pct       that cost over the profiled runs'
--                                          worker time (wall time x WORKERS)
-- Real time; the node aborts when done.
local skynet = require "skynet"
local profiler = require "skynet.profiler"
local report = require "bench_report"
require "skynet.manager"

local hpc = skynet.hpc

local PAIRS <const> = 4
local PER_SENDER <const> = 250000
local ROUNDS <const> = 9
local HZ <const> = 100
local WORKERS <const> = 2 -- thread in bench/config.profile

local done_count, done_last, done_waiter = 0, 0, nil

local function wait_done(n)
	while done_count < n do
		done_waiter = coroutine.running()
		skynet.wait(done_waiter)
	end
	done_waiter = nil
	local last = done_last
	done_count, done_last = 0, 0
	return last
end

local senders, sinks = {}, {}

-- One run: every sender sends PER_SENDER messages to its sink; returns
-- msgs per CPU second of the process and msgs per wall-clock second.
local function run()
	for _, s in ipairs(sinks) do
		skynet.call(s, "lua", "expect", PER_SENDER, skynet.self())
	end
	local c0, t0 = os.clock(), hpc()
	for i, s in ipairs(senders) do
		skynet.send(s, "lua", "go", sinks[i], PER_SENDER)
	end
	local t1 = wait_done(#sinks)
	local c1 = os.clock()
	local n = PER_SENDER * PAIRS
	return n / (c1 - c0), n / ((t1 - t0) / 1e9)
end

local cost = { samples = 0, seconds = 0, wall = 0 } -- of every profiled run

local function run_profiled()
	assert(profiler.start(nil, HZ))
	local t0 = hpc()
	local cpu_rate, wall_rate = run()
	local st = profiler.status()
	cost.wall = cost.wall + (hpc() - t0) / 1e9
	cost.seconds = cost.seconds + st.cost
	local _, samples = assert(profiler.stop())
	cost.samples = cost.samples + samples
	return cpu_rate, wall_rate, samples
end

local function median(list)
	table.sort(list)
	local n = #list
	return n % 2 == 1 and list[(n + 1) // 2] or (list[n // 2] + list[n // 2 + 1]) / 2
end

local function main()
	for i = 1, PAIRS do
		senders[i] = skynet.newservice "bench_sender"
		sinks[i] = skynet.newservice "bench_sink"
	end
	run() -- warm up
	local overheads = {}
	for round = 1, ROUNDS do
		local off, off_wall, on, on_wall, samples
		if round % 2 == 1 then
			off, off_wall = run()
			on, on_wall, samples = run_profiled()
		else
			on, on_wall, samples = run_profiled()
			off, off_wall = run()
		end
		overheads[round] = 100 * (1 - on / off)
		print(string.format("bench: profile round %d off=%.0f on=%.0f msgs/cpu-s overhead=%.2f%% "
			.. "(wall: off=%.0f on=%.0f msgs/s) samples=%d", round, off, on, overheads[round], off_wall,
			on_wall, samples))
	end
	report("diag.profile_overhead_pct", median(overheads), "%")
	report("diag.profile_sample_us", cost.seconds * 1e6 / math.max(cost.samples, 1), "us")
	report("diag.profile_cost_pct", 100 * cost.seconds / (cost.wall * WORKERS), "%")
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, stamp)
		if cmd == "done" then
			done_count = done_count + 1
			if stamp > done_last then
				done_last = stamp
			end
			if done_waiter then
				skynet.wakeup(done_waiter)
			end
		end
	end)
	skynet.fork(function()
		local ok, err = pcall(main)
		if not ok then
			print("bench: bench_profile failed: " .. tostring(err))
		end
		skynet.abort()
	end)
end)
