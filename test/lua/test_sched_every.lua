-- skynet.timer every / every_after under virtual time: the fixed-rate grid
-- with a slow body, missed runs (skipped, counted, never replayed in a
-- burst), fixed-delay spacing, errors in a repeating schedule, cancel
-- (from outside and from the body; no C timer left), argument errors.
local skynet = require "skynet"
local timer = require "skynet.timer"
local t = require "testlib"

local function pending()
	return skynet.stat "timers"
end

-- Replaces skynet.error while f runs; returns the logged texts.
local function capture_log(f)
	local logged = {}
	local old = skynet.error
	skynet.error = function(...)
		logged[#logged + 1] = table.concat({ ... }, " ")
	end
	local ok, err = pcall(f)
	skynet.error = old
	assert(ok, err)
	return logged
end

t.case("every: runs on the grid start + k * period with a slow body", function()
	local t0 = skynet.now()
	local runs, missed_total = {}, 0
	local h = timer.every(100, function(missed)
		runs[#runs + 1] = skynet.now() - t0
		missed_total = missed_total + missed
		skynet.sleep(60) -- 60% of the period
	end)
	skynet.sleep(100 * 50 + 50)
	h:cancel()
	t.eq(#runs, 50, "runs")
	for k, at in ipairs(runs) do
		t.eq(at, 100 * k, "run " .. k)
	end
	t.eq(missed_total, 0, "nothing missed")
end)

t.case("every: a run that overruns skips grid points and reports them", function()
	local t0 = skynet.now()
	local log = {}
	local n = 0
	local h = timer.every(10, function(missed, handle)
		n = n + 1
		log[#log + 1] = string.format("%d:%d", skynet.now() - t0, missed)
		if n == 1 then
			skynet.sleep(35) -- runs from 10 to 45: grid points 20, 30, 40 pass
		end
		if n == 4 then
			handle:cancel()
		end
	end)
	skynet.sleep(200)
	-- one run at once for 40 (missed 20 and 30), then back on the grid
	t.eq(table.concat(log, " "), "10:0 45:2 50:0 60:0", "runs (time:missed)")
	t.eq(h:cancel(), false, "cancelled from the body")
end)

t.case("every: a run that overruns by 200 periods is followed by one run, not a burst", function()
	local t0 = skynet.now()
	local log = {}
	local n = 0
	local h = timer.every(5, function(missed)
		n = n + 1
		log[#log + 1] = string.format("%d:%d", skynet.now() - t0, missed)
		if n == 2 then
			skynet.sleep(1000) -- 200 periods
		end
	end)
	skynet.sleep(1032)
	h:cancel()
	t.eq(table.concat(log, " "), "5:0 10:0 1010:199 1015:0 1020:0 1025:0 1030:0", "runs")
end)

t.case("every_after: fixed delay measured from the end of each run", function()
	local t0 = skynet.now()
	local runs = {}
	local h = timer.every_after(50, function(handle)
		runs[#runs + 1] = skynet.now() - t0
		skynet.sleep(20)
		if #runs == 5 then
			handle:cancel()
		end
	end)
	skynet.sleep(1000)
	t.eq(table.concat(runs, ","), "50,120,190,260,330", "run times")
	t.eq(h:cancel(), false, "already cancelled")
	t.eq(pending(), 0, "no timer left")
end)

t.case("cancel removes the pending C timer of every kind", function()
	local base = pending()
	local fired = 0
	local function f()
		fired = fired + 1
	end
	local hs = {
		timer.every(10, f),
		timer.every_after(10, f),
		timer.at(timer.walltime() + 60, f),
		timer.cron("* * * * *", f, { tz = "UTC" }),
	}
	t.eq(pending(), base + 4, "one C timer per schedule")
	for _, h in ipairs(hs) do
		t.eq(h:cancel(), true, "cancel of a live " .. h.kind)
	end
	t.eq(pending(), base, "no C timer left after cancel")
	skynet.sleep(12000)
	t.eq(fired, 0, "nothing ran")
	t.eq(hs[1]:cancel(), false, "second cancel")
end)

t.case("cancel between runs, after some runs", function()
	local n = 0
	local h = timer.every(10, function()
		n = n + 1
	end)
	skynet.sleep(35)
	t.eq(n, 3, "runs before cancel")
	h:cancel()
	t.eq(pending(), 0, "no timer left")
	skynet.sleep(100)
	t.eq(n, 3, "runs after cancel")
end)

t.case("cancel during a blocked run: the run finishes, no later run", function()
	local n, finished = 0, 0
	local h = timer.every(10, function()
		n = n + 1
		skynet.sleep(20)
		finished = finished + 1
	end)
	skynet.sleep(15) -- run 1 sleeps from 10 to 30
	h:cancel()
	skynet.sleep(100)
	t.eq(n, 1, "runs")
	t.eq(finished, 1, "the running body was not killed")
	t.eq(pending(), 0, "no timer left")
end)

t.case("errors are logged with a traceback and the schedule goes on", function()
	local n = 0
	local h
	local logged = capture_log(function()
		h = timer.every(10, function()
			n = n + 1
			if n % 2 == 0 then
				error("tick failure on purpose")
			end
		end, { name = "regen" })
		skynet.sleep(65)
	end)
	h:cancel()
	t.eq(n, 6, "runs")
	t.eq(#logged, 3, "one log line per failure")
	t.ok(logged[1]:find("timer.every: scheduled function failed name=regen", 1, true), logged[1])
	t.ok(logged[1]:find("tick failure on purpose", 1, true), "error text")
	t.ok(logged[1]:find("stack traceback", 1, true), "traceback")
end)

t.case("stop_on_error stops the schedule at the first error", function()
	local n = 0
	local logged = capture_log(function()
		local h = timer.every_after(10, function()
			n = n + 1
			if n == 2 then
				error("fatal on purpose")
			end
		end, { stop_on_error = true })
		skynet.sleep(100)
		t.eq(h:cancel(), false, "stopped already")
	end)
	t.eq(n, 2, "runs")
	t.eq(#logged, 1, "logged")
	t.ok(logged[1]:find("schedule stopped", 1, true), logged[1])
	t.eq(pending(), 0, "no timer left")
end)

t.case("bad arguments raise naming the function and value", function()
	t.raises("timer.every: period must be an integer of cs", timer.every, 0, print)
	t.raises("(1.5)", timer.every, 1.5, print)
	t.raises("timer.every_after: delay must be an integer of cs", timer.every_after, -1, print)
	t.raises("timer.every: f must be a function (nil)", timer.every, 10)
	t.raises("timer.every: opts must be a table (1)", timer.every, 10, print, 1)
	t.raises("timer.at: time must be a number of epoch seconds (soon)", timer.at, "soon", print)
	t.eq(pending(), 0, "no timer set")
end)

t.start()
