-- skynet.core.walltime and skynet.timer at under virtual time: the wall
-- clock moves with virtual time; at for a past time fires at once, for a
-- future time at its instant; long waits are chunked (one C timer at a
-- time); wall-clock steps back and forward (simulated with
-- timer.set_wallclock); cancel; errors in f.
local skynet = require "skynet"
local core = require "skynet.core"
local timer = require "skynet.timer"
local t = require "testlib"

local function near(a, b, eps)
	return math.abs(a - b) < (eps or 0.005)
end

t.case("walltime moves with virtual time", function()
	local w0 = core.walltime()
	t.eq(math.type(w0), "float", "type")
	t.ok(near(w0, skynet.time(), 0.011), "walltime = starttime + now/100")
	t.ok(w0 > 1.6e9, "an epoch time")
	skynet.sleep(360000)
	t.ok(near(core.walltime() - w0, 3600), "one virtual hour later: " .. (core.walltime() - w0))
	t.eq(timer.walltime(), core.walltime(), "the library reads the same clock")
end)

t.case("at a past time fires at once, on the next dispatch", function()
	local fired = {}
	local t0 = skynet.now()
	timer.at(timer.walltime() - 3600, function(h)
		fired[#fired + 1] = "past"
		t.eq(h:cancel(), false, "a fired at cannot be cancelled")
	end)
	timer.at(0, function()
		fired[#fired + 1] = "epoch"
	end)
	t.eq(#fired, 0, "not inside at()")
	skynet.yield()
	t.eq(table.concat(fired, ","), "past,epoch", "fired")
	t.eq(skynet.now(), t0, "no time passed")
	t.eq(skynet.stat "timers", 0, "no timer left")
end)

t.case("at a future time fires at its instant", function()
	local w0, t0 = timer.walltime(), skynet.now()
	local target = math.floor(w0) + 7200 -- two hours, whole seconds
	local fired_at, fired_now
	timer.at(target, function()
		fired_at = timer.walltime()
		fired_now = skynet.now()
	end)
	t.eq(skynet.stat "timers", 1, "one C timer while waiting")
	skynet.sleep(3600 * 100 + 50)
	t.eq(fired_at, nil, "not after one hour")
	t.eq(skynet.stat "timers", 1, "still one C timer (chunks are chained)")
	skynet.sleep(3601 * 100)
	t.ok(fired_at ~= nil, "fired")
	t.ok(fired_at >= target - 0.001 and fired_at < target + 0.01, "wall time at the run: " .. (fired_at - target))
	local expect = t0 + math.ceil((target - w0) * 100 - 0.01) -- the first tick at or past target
	t.eq(fired_now, expect, "virtual instant")
	t.eq(skynet.stat "timers", 0, "no timer left")
end)

t.case("at a fractional time fires on the tick that reaches it", function()
	local target = timer.walltime() + 12.345
	local got
	timer.at(target, function()
		got = timer.walltime()
	end)
	skynet.sleep(1300)
	t.ok(got and got >= target - 0.001 and got < target + 0.011, "late by " .. tostring(got and got - target))
end)

t.case("the clock set back while waiting: at waits for the new wall time", function()
	local start = 2000000000
	local base = core.walltime()
	local step = 0
	timer.set_wallclock(function()
		return core.walltime() - base + start + step
	end)
	local fired_wall, fired_v
	local v0 = skynet.now()
	timer.at(start + 600, function()
		fired_wall = timer.walltime()
		fired_v = skynet.now() - v0
	end)
	skynet.sleep(300 * 100)
	step = -1000 -- NTP sets the clock back 1000 s
	skynet.sleep(1200 * 100)
	t.eq(fired_wall, nil, "not fired at the old wall time")
	skynet.sleep(200 * 100)
	timer.set_wallclock(nil)
	t.ok(fired_wall and near(fired_wall, start + 600), "fired at wall " .. tostring(fired_wall and fired_wall - start))
	t.eq(fired_v, 160000, "virtual instant")
end)

t.case("the clock set forward while waiting: noticed within one 60 s chunk", function()
	local start = 2000000000
	local base = core.walltime()
	local step = 0
	timer.set_wallclock(function()
		return core.walltime() - base + start + step
	end)
	local fired_v
	local v0 = skynet.now()
	timer.at(start + 3600, function()
		fired_v = skynet.now() - v0
	end)
	skynet.sleep(600 * 100 + 50)
	step = 3000 -- the wall clock jumps from +600 s to +3600 s
	skynet.sleep(61 * 100)
	timer.set_wallclock(nil)
	t.ok(fired_v ~= nil, "fired")
	t.ok(fired_v >= 60050 and fired_v <= 60050 + 6000, "noticed at +" .. tostring(fired_v))
end)

t.case("cancel stops a pending at, and leaves no C timer", function()
	local fired = false
	local h = timer.at(timer.walltime() + 86400 * 14, function()
		fired = true
	end)
	skynet.sleep(6000 * 3 + 50)
	t.eq(skynet.stat "timers", 1, "waiting")
	t.eq(h:cancel(), true, "cancel")
	t.eq(skynet.stat "timers", 0, "no timer left")
	local h2 = timer.at(timer.walltime() - 1, function()
		fired = true
	end)
	t.eq(h2:cancel(), true, "cancel before the immediate run")
	skynet.sleep(100)
	t.eq(fired, false, "nothing ran")
	t.eq(skynet.stat "timers", 0, "no timer left")
end)

t.case("an error in at's function is logged", function()
	local logged = {}
	local old = skynet.error
	skynet.error = function(msg)
		logged[#logged + 1] = msg
	end
	timer.at(0, function()
		error("sale failed on purpose")
	end)
	skynet.yield()
	skynet.error = old
	t.eq(#logged, 1, "logged")
	t.ok(logged[1]:find("timer.at: scheduled function failed: ", 1, true), logged[1])
	t.ok(logged[1]:find("sale failed on purpose", 1, true), logged[1])
end)

t.start()
