-- Per-service budgets (docs/operations.md, "Budgets and top"): skynet.budget
-- reads and changes the service's own budget and rejects bad arguments;
-- warn lets a looping service run and counts the overrun; kill retires a
-- service that loops, allocates or floods, and every caller gets an error
-- (requests queued, requests it had begun, calls after); throttle holds a
-- looping service to about its CPU per second without starving it, keeps
-- the other services' call latency near the latency without hogs (a ratio),
-- and a throttled service killed while deferred still answers its callers.
-- Windows are node time (virtual here); CPU is real time spent in the
-- callback, so the hogs burn real CPU.
local skynet = require "skynet"
local core = require "skynet.metrics"
local t = require "testlib"

local REAL_LIMIT_NS <const> = 20 * 1000000000

local function stat(handle)
	for _, s in ipairs(core.services()) do
		if s.handle == handle then
			return s
		end
	end
end

-- Yields (real time, at most 20 s) until cond() holds: the hogs keep the
-- node busy, so virtual sleeps would not end while a policy is broken.
local function until_real(cond, what)
	local deadline = skynet.hpc() + REAL_LIMIT_NS
	while not cond() do
		if skynet.hpc() > deadline then
			error("timed out waiting for " .. what, 2)
		end
		skynet.yield()
	end
end

local function hog(t_budget)
	local h = skynet.newservice("svc_budget_hog")
	skynet.call(h, "lua", "budget", t_budget)
	return h
end

-- Calls cmd on h in n forks; returns a function that waits (real time) for
-- them and returns how many failed and how many succeeded.
local function calls(h, n, cmd, ...)
	local args = table.pack(...)
	local failed, succeeded = 0, 0
	for _ = 1, n do
		skynet.fork(function()
			if pcall(skynet.call, h, "lua", cmd, table.unpack(args, 1, args.n)) then
				succeeded = succeeded + 1
			else
				failed = failed + 1
			end
		end)
	end
	return function()
		until_real(function()
			return failed + succeeded == n
		end, "the callers of " .. cmd)
		return failed, succeeded
	end
end

t.case("skynet.budget reads the default, changes the fields given, keeps the others", function()
	local h = skynet.newservice("svc_budget_hog")
	t.same(skynet.call(h, "lua", "budget"), { cpu_ms_per_s = 1000, memory_mb = 1024, queue = 0,
		policy = "warn" }, "the default budget")
	t.same(skynet.call(h, "lua", "budget", { cpu_ms_per_s = 50, queue = 500, policy = "throttle" }),
		{ cpu_ms_per_s = 50, memory_mb = 1024, queue = 500, policy = "throttle" }, "after a change")
	t.same(skynet.call(h, "lua", "budget", { queue = false }),
		{ cpu_ms_per_s = 50, memory_mb = 1024, queue = 0, policy = "throttle" }, "false: not watched")
	t.same(skynet.call(h, "lua", "budget", false),
		{ cpu_ms_per_s = 0, memory_mb = 0, queue = 0, policy = "throttle" }, "false: no limit")
	t.eq(stat(h).budget & 0x10, 0, "no limit: not watched")
	skynet.kill(h)
end)

t.case("skynet.budget rejects bad arguments with clear errors", function()
	t.raises("skynet.budget: unknown field (cpu)", skynet.budget, { cpu = 5 })
	t.raises("skynet.budget: bad policy (stop): warn, throttle or kill", skynet.budget, { policy = "stop" })
	t.raises("skynet.budget: bad memory_mb (-1)", skynet.budget, { memory_mb = -1 })
	t.raises("skynet.budget: bad queue (1.5)", skynet.budget, { queue = 1.5 })
	t.raises("skynet.budget: a table, false or nothing expected (string)", skynet.budget, "cpu=1")
	t.eq(skynet.budget().policy, "warn", "a refused change leaves the budget")
end)

t.case("warn: a looping service runs on, over budget, and the overrun is counted", function()
	local before = core.budget().overruns.cpu
	local h = hog { cpu_ms_per_s = 20, policy = "warn" }
	skynet.call(h, "lua", "loop", 2, 40) -- 80 ms of CPU in one window
	until_real(function()
		return skynet.call(h, "lua", "spins") == 40
	end, "the 40 spins")
	local s = stat(h)
	t.ok(s.budget & 0x01 ~= 0, "the state says over cpu")
	t.eq(core.budget().overruns.cpu, before + 1, "one overrun counted for the window")
	t.eq(skynet.call(h, "lua", "ping"), "pong", "still alive")
	skynet.kill(h)
end)

t.case("kill: a looping service is retired, every caller gets an error", function()
	local kills = core.budget().kills
	local h = hog { cpu_ms_per_s = 20, policy = "kill" }
	local held = calls(h, 3, "hold") -- requests it has begun
	skynet.call(h, "lua", "ping")
	for _ = 1, 30 do -- 60 ms of work queued at once
		skynet.send(h, "lua", "slow", 2)
	end
	local queued = calls(h, 5, "ping") -- requests waiting behind the work
	local f1, s1 = held()
	local f2 = queued()
	t.eq(f1, 3, "held requests failed (" .. s1 .. " answered)")
	t.eq(f2, 5, "queued requests failed")
	t.eq(stat(h), nil, "the service is gone")
	t.eq(core.budget().kills, kills + 1, "the kill is counted")
	t.ok(not pcall(skynet.call, h, "lua", "ping"), "a call after the kill fails")
end)

t.case("kill: a service past its memory budget is retired", function()
	local h = hog { memory_mb = 2, policy = "kill" }
	local held = calls(h, 2, "hold")
	skynet.call(h, "lua", "ping")
	t.eq(skynet.call(h, "lua", "grow", 1), 16, "1 MB is under the budget")
	pcall(skynet.call, h, "lua", "grow", 3) -- the batch that passes the limit ends in the kill
	t.eq(held(), 2, "held requests failed")
	t.eq(stat(h), nil, "the service is gone")
	t.ok(not pcall(skynet.call, h, "lua", "ping"), "a call after the kill fails")
end)

t.case("kill during the launch: newservice fails with the reason, never hangs", function()
	local done, ok, err
	skynet.fork(function()
		ok, err = pcall(skynet.newservice, "svc_budget_hog", "grow_at_start")
		done = true
	end)
	until_real(function()
		return done
	end, "newservice")
	t.eq(ok, false, "newservice of a service killed while starting")
	t.ok(tostring(err):find("killed over its memory budget", 1, true), "the reason: " .. tostring(err))
end)

t.case("kill: a flooded service is retired, its callers get errors", function()
	local h = hog { queue = 50, policy = "kill" }
	local held = calls(h, 2, "hold")
	skynet.call(h, "lua", "ping")
	for _ = 1, 300 do
		skynet.send(h, "lua", "slow", 0.2)
	end
	local queued = calls(h, 5, "ping")
	t.eq(held(), 2, "held requests failed")
	t.eq(queued(), 5, "queued requests failed")
	t.eq(stat(h), nil, "the service is gone")
end)

t.case("warn on memory and queue: the service lives and the state shows it", function()
	local before = core.budget().overruns
	local h = hog { memory_mb = 1, queue = 0, policy = "throttle" }
	skynet.call(h, "lua", "grow", 2)
	skynet.call(h, "lua", "ping")
	t.ok(stat(h).budget & 0x02 ~= 0, "over memory")
	t.eq(core.budget().overruns.memory, before.memory + 1, "memory overrun counted")
	t.eq(skynet.call(h, "lua", "ping"), "pong", "throttle on memory only warns")
	skynet.kill(h)
end)

t.case("throttle: a looping service gets about its budget per second and is not starved", function()
	local throttles = core.budget().throttles
	local h = hog { cpu_ms_per_s = 20, policy = "throttle" }
	-- 0.8 s of work: unthrottled it ends at once, and the sleep below returns then
	skynet.call(h, "lua", "loop", 2, 400)
	local cpu0 = stat(h).cpu
	skynet.sleep(500) -- virtual: time moves while the hog is deferred
	local used = stat(h).cpu - cpu0
	-- 5 windows (6 counting the one in progress) of 20 ms, plus one 2 ms spin each, and
	-- room for a loaded machine (the time is elapsed time in the callback); unthrottled
	-- the hog would use its whole 0.8 s
	t.ok(used <= 0.3, string.format("used %.3f s of CPU in 5 s, budget 0.1 s", used))
	t.ok(used >= 3 * 0.020, string.format("used %.3f s of CPU in 5 s: starved", used))
	t.ok(core.budget().throttles >= throttles + 4, "throttles counted")
	-- Calls wait behind the deferral; killing the deferred service fails them.
	local waiting
	for _ = 1, 5 do
		until_real(function()
			return stat(h).budget & 0x08 ~= 0
		end, "the throttled state")
		waiting = calls(h, 3, "ping")
		skynet.yield() -- the forks send their calls
		if stat(h).budget & 0x08 ~= 0 then -- still deferred: the calls are queued
			break
		end
		waiting() -- woken meanwhile: these were answered, try again
	end
	skynet.kill(h)
	t.eq(waiting(), 3, "calls to a deferred service that is killed fail")
end)

-- Median of n call round trips to h, in ns of real time.
local function median_call_ns(h, n)
	local times = {}
	for i = 1, n do
		local t0 = skynet.hpc()
		skynet.call(h, "lua", "ping")
		times[i] = skynet.hpc() - t0
	end
	table.sort(times)
	return times[n // 2]
end

t.case("throttle keeps the other services' call latency near the latency without hogs", function()
	local echo = skynet.newservice("svc_budget_hog")
	local base = median_call_ns(echo, 300)
	local hogs = {}
	for i = 1, 3 do
		hogs[i] = hog { cpu_ms_per_s = 10, policy = "throttle" }
		skynet.call(hogs[i], "lua", "loop", 3, 3000)
	end
	local deadline = skynet.hpc() + 3 * 1000000000 -- till every hog is throttled, or 3 s
	repeat
		local all = true
		for _, h in ipairs(hogs) do
			all = all and stat(h).budget & 0x08 ~= 0
		end
		skynet.yield()
	until all or skynet.hpc() > deadline
	local throttled = median_call_ns(echo, 300)
	local ratio = throttled / base
	print(string.format("budget: call median %d ns alone, %d ns with 3 throttled hogs, ratio %.2f",
		base, throttled, ratio))
	t.ok(ratio < 5, string.format("latency ratio %.2f (bound 5)", ratio))
	for _, h in ipairs(hogs) do
		skynet.kill(h)
	end
	skynet.kill(echo)
end)

t.start()
