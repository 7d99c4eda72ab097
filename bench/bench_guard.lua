-- Cost of per-service budgets (docs/operations.md, "Budgets and top") on
-- messaging: a driver service makes ROUND_CALLS calls to an echo service,
-- both with the default budget (on: every batch is measured against it) or
-- both with skynet.budget(false) (off: nothing is measured); the two pairs
-- run alternately, ROUNDS times each. Prints one line per round and
--   BENCH name=guard.budget_overhead_pct  (median over the rounds of
--                                          on/off - 1, in percent; target <= 2)
-- then aborts the node.
local skynet = require "skynet"
local report = require "bench_report"
require "skynet.manager"

local ROUNDS <const> = 30
local ROUND_CALLS <const> = 20000

local mode, peer, driver_budget = ...

local function echo()
	skynet.dispatch("lua", function()
		skynet.ret()
	end)
end

local function driver()
	skynet.dispatch("lua", function(_, _, n)
		local target = tonumber(peer)
		local t0 = skynet.hpc()
		for _ = 1, n do
			skynet.call(target, "lua")
		end
		skynet.retpack(skynet.hpc() - t0)
	end)
end

local function pair(on)
	local budget = on and "on" or "off"
	local e = skynet.newservice("bench_guard", "echo", budget)
	local d = skynet.newservice("bench_guard", "driver", e, budget)
	return d
end

local function main()
	local on, off = pair(true), pair(false)
	skynet.call(on, "lua", 1000) -- warm up both
	skynet.call(off, "lua", 1000)
	local ratios = {}
	for i = 1, ROUNDS do
		local t_on = skynet.call(on, "lua", ROUND_CALLS)
		local t_off = skynet.call(off, "lua", ROUND_CALLS)
		ratios[i] = t_on / t_off
		print(string.format("bench: guard round %d budgets on %.0f ns/call, off %.0f ns/call, "
			.. "overhead %.2f %%", i, t_on / ROUND_CALLS, t_off / ROUND_CALLS, (ratios[i] - 1) * 100))
	end
	table.sort(ratios)
	local median = (ratios[ROUNDS // 2] + ratios[ROUNDS // 2 + 1]) / 2
	report("guard.budget_overhead_pct", (median - 1) * 100, "pct")
	skynet.abort()
end

skynet.start(function()
	local budget = mode == "driver" and driver_budget or peer
	if mode ~= nil and budget == "off" then
		skynet.budget(false)
	end
	if mode == "echo" then
		echo()
	elseif mode == "driver" then
		driver()
	else
		skynet.fork(main)
	end
end)
