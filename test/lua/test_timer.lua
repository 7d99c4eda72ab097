-- Time and timers under virtual time: now/time/starttime, sleep,
-- timeout order and values, ti <= 0, sleep broken by wakeup ("BREAK") with
-- its late timer discarded silently, token rules.
local skynet = require "skynet"
local t = require "testlib"

local unknown_responses

t.case("clock values have the documented types", function()
	t.eq(math.type(skynet.now()), "integer", "now")
	t.eq(math.type(skynet.starttime()), "integer", "starttime")
	t.eq(math.type(skynet.hpc()), "integer", "hpc")
	t.eq(math.type(skynet.time()), "float", "time")
	local expect = skynet.starttime() + skynet.now() / 100
	t.ok(math.abs(skynet.time() - expect) < 0.02, "time = starttime + now/100")
end)

t.case("a one-hour sleep ends at once, one hour later", function()
	local t0 = skynet.now()
	local r = skynet.sleep(360000)
	t.eq(r, nil, "sleep result on expiry")
	local dt = skynet.now() - t0
	t.ok(dt >= 360000 and dt <= 360001, "virtual elapsed cs: " .. dt)
end)

t.case("timeouts 1, 2, 3, 4, 100 fire in order, on time", function()
	local fired = {}
	local t0 = skynet.now()
	for _, ti in ipairs({ 100, 3, 1, 4, 2 }) do
		skynet.timeout(ti, function()
			fired[#fired + 1] = { ti = ti, at = skynet.now() - t0 }
		end)
	end
	t.eq(#fired, 0, "nothing runs inside timeout()")
	skynet.sleep(150)
	t.eq(#fired, 5, "all fired")
	local order = {}
	for i, f in ipairs(fired) do
		order[i] = f.ti
		t.eq(f.at, f.ti, "timeout " .. f.ti .. " fired at")
	end
	t.eq(table.concat(order, ","), "1,2,3,4,100", "order")
end)

t.case("equal deadlines fire in insertion order", function()
	local fired = {}
	for i = 1, 20 do
		skynet.timeout(7, function()
			fired[#fired + 1] = i
		end)
	end
	skynet.sleep(8)
	t.eq(#fired, 20, "fired")
	for i = 1, 20 do
		t.eq(fired[i], i, "position " .. i)
	end
end)

t.case("ti <= 0 fires on the next dispatch, before any later deadline", function()
	local fired = {}
	local t0 = skynet.now()
	skynet.timeout(1, function()
		fired[#fired + 1] = "one"
	end)
	skynet.timeout(0, function()
		fired[#fired + 1] = "zero"
	end)
	skynet.timeout(-5, function()
		fired[#fired + 1] = "negative"
	end)
	t.eq(#fired, 0, "not run inside timeout()")
	skynet.yield()
	t.eq(table.concat(fired, ","), "zero,negative", "immediate ones")
	t.eq(skynet.now(), t0, "no time passed")
	skynet.sleep(2)
	t.eq(table.concat(fired, ","), "zero,negative,one", "all")
end)

t.case("yield is sleep(0): other pending work runs first", function()
	local log = {}
	skynet.timeout(0, function()
		log[#log + 1] = "timeout0"
	end)
	local t0 = skynet.now()
	skynet.yield()
	log[#log + 1] = "after yield"
	t.eq(table.concat(log, ","), "timeout0,after yield", "order")
	t.eq(skynet.now(), t0, "yield takes no virtual time")
end)

t.case("a timeout callback may block and has no session", function()
	local log = {}
	skynet.timeout(1, function()
		local ok, err = pcall(skynet.ret, skynet.pack("x"))
		log[#log + 1] = ok and "ret ok" or (tostring(err):find("No session", 1, true) and "No session" or tostring(err))
		skynet.sleep(10)
		log[#log + 1] = "slept"
	end)
	skynet.sleep(20)
	t.eq(table.concat(log, ","), "No session,slept", "log")
end)

t.case("an error in a timeout callback does not stop later timeouts", function()
	local fired = false
	skynet.timeout(1, function()
		error("timeout failure on purpose")
	end)
	skynet.timeout(2, function()
		fired = true
	end)
	skynet.sleep(3)
	t.ok(fired, "later timeout ran")
end)

t.case("wakeup breaks a sleep: BREAK, no time passes, late timer dropped", function()
	local before = unknown_responses()
	local result, woke_at
	local t0 = skynet.now()
	local sleeper = skynet.fork(function()
		result = skynet.sleep(500)
		woke_at = skynet.now()
	end)
	skynet.yield()
	t.eq(skynet.wakeup(sleeper), true, "wakeup of a sleeper")
	skynet.yield()
	t.eq(result, "BREAK", "sleep result")
	t.eq(woke_at, t0, "woken without waiting for the timer")
	skynet.sleep(600) -- past the cancelled deadline
	t.eq(unknown_responses(), before, "the late timer must be discarded silently")
end)

t.case("sleep with an explicit token", function()
	local result
	skynet.fork(function()
		result = skynet.sleep(1000, "my token")
	end)
	skynet.yield()
	t.eq(skynet.wakeup("my token"), true, "wakeup by token")
	skynet.yield()
	t.eq(result, "BREAK", "sleep result")
end)

t.case("a token already sleeping cannot be reused", function()
	local co = skynet.fork(function()
		skynet.sleep(100, "shared token")
	end)
	skynet.yield()
	t.raises("token duplicative", skynet.sleep, 10, "shared token")
	skynet.wakeup("shared token")
	skynet.yield()
	t.ok(co, "first sleeper")
end)

t.case("sleeps of many coroutines end in deadline order", function()
	local log = {}
	for _, ti in ipairs({ 30, 10, 20 }) do
		skynet.fork(function()
			skynet.sleep(ti)
			log[#log + 1] = ti
		end)
	end
	skynet.sleep(40)
	t.eq(table.concat(log, ","), "10,20,30", "order")
end)

t.case("now never goes backwards across many sleeps", function()
	local prev = skynet.now()
	for i = 1, 50 do
		skynet.sleep(i)
		local n = skynet.now()
		t.eq(n - prev, i, "sleep " .. i)
		prev = n
	end
end)

t.case("timeout_us: the covering centiseconds in virtual time, cancel, bad time", function()
	local fired = {}
	local t0 = skynet.now()
	skynet.timeout_us(15000, function()
		fired[#fired + 1] = { "15000us", skynet.now() - t0 }
	end)
	skynet.timeout_us(10000, function()
		fired[#fired + 1] = { "10000us", skynet.now() - t0 }
	end)
	skynet.timeout_us(0.5, function()
		fired[#fired + 1] = { "0.5us", skynet.now() - t0 }
	end)
	local dropped = skynet.timeout_us(5000, function()
		fired[#fired + 1] = { "cancelled", skynet.now() - t0 }
	end)
	skynet.killthread(dropped)
	skynet.sleep(5)
	local got = {}
	for i, f in ipairs(fired) do
		got[i] = f[1] .. "@" .. f[2]
	end
	t.eq(table.concat(got, ","), "10000us@1,0.5us@1,15000us@2",
		"fired at the covering tick, in the order set within one tick")
	t.raises("number expected", skynet.timeout_us, "soon", function() end)
end)

t.start(nil, function()
	unknown_responses = t.watch_unknown_responses()
end)
