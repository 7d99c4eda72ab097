-- Cost of per-service budgets (docs/operations.md, "Budgets and top") on
-- messaging: a driver service makes ROUND_CALLS calls to an echo service.
-- Before each round both set their budget: the default one (on: every batch
-- is measured against it) or none, skynet.budget(false) (off: nothing is
-- measured). Rounds go in pairs, on then off or off then on (alternating,
-- so a drift of the machine's load cancels out); each pair gives on/off.
-- A round is timed in the process's CPU time (os.clock: the whole node,
-- every thread), which the other programs of a shared machine do not add
-- to; its wall time is printed too. Prints one line per pair and
--   BENCH name=guard.budget_overhead_pct  (median over PAIRS of on/off - 1
--                                          of the CPU time, in percent;
--                                          target <= 2)
-- then aborts the node.
local skynet = require "skynet"
local report = require "bench_report"
require "skynet.manager"

local PAIRS <const> = 40
local ROUND_CALLS <const> = 10000
local ON <const> = { cpu_ms_per_s = 1000, memory_mb = 1024, policy = "warn" } -- the default

local mode, peer = ...

local function set_budget(on)
	if on then
		skynet.budget(ON)
	else
		skynet.budget(false)
	end
end

local function echo()
	skynet.dispatch("lua", function(_, _, cmd, on)
		if cmd == "budget" then
			set_budget(on)
		end
		skynet.ret()
	end)
end

local function driver()
	local target = tonumber(peer)
	skynet.dispatch("lua", function(_, _, n, on)
		set_budget(on)
		skynet.call(target, "lua", "budget", on)
		local t0, c0 = skynet.hpc(), os.clock()
		for _ = 1, n do
			skynet.call(target, "lua")
		end
		skynet.retpack(os.clock() - c0, skynet.hpc() - t0)
	end)
end

local function main()
	local e = skynet.newservice("bench_guard", "echo")
	local d = skynet.newservice("bench_guard", "driver", e)
	skynet.call(d, "lua", 2000, true) -- warm up
	skynet.call(d, "lua", 2000, false)
	local ratios = {}
	for i = 1, PAIRS do
		local cpu_on, wall_on, cpu_off, wall_off
		if i % 2 == 1 then
			cpu_on, wall_on = skynet.call(d, "lua", ROUND_CALLS, true)
			cpu_off, wall_off = skynet.call(d, "lua", ROUND_CALLS, false)
		else
			cpu_off, wall_off = skynet.call(d, "lua", ROUND_CALLS, false)
			cpu_on, wall_on = skynet.call(d, "lua", ROUND_CALLS, true)
		end
		ratios[i] = cpu_on / cpu_off
		print(string.format("bench: guard pair %d budgets on %.0f ns/call cpu (%.0f wall), off %.0f ns/call "
			.. "cpu (%.0f wall), overhead %.2f %%", i, cpu_on * 1e9 / ROUND_CALLS, wall_on / ROUND_CALLS,
			cpu_off * 1e9 / ROUND_CALLS, wall_off / ROUND_CALLS, (ratios[i] - 1) * 100))
	end
	table.sort(ratios)
	local median = (ratios[PAIRS // 2] + ratios[PAIRS // 2 + 1]) / 2
	report("guard.budget_overhead_pct", (median - 1) * 100, "pct")
	skynet.abort()
end

skynet.start(function()
	if mode == "echo" then
		echo()
	elseif mode == "driver" then
		driver()
	else
		skynet.fork(main)
	end
end)
