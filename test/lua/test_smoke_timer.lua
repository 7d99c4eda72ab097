-- Smoke test: timeouts without pinned coroutines, their cancellation, sleep
-- and wakeup, task() bookkeeping (virtual time).
local skynet = require "skynet"
local t = require "smoke_check"

local unknown = 0
local cases = {}

cases[#cases + 1] = { "a killed timeout never fires and sends nothing", function()
	local fired = false
	local obj = skynet.timeout(50, function()
		fired = true
	end)
	t.eq(skynet.killthread(obj), obj, "killthread result")
	t.eq(skynet.killthread(obj), nil, "second kill")
	skynet.sleep(100)
	t.eq(fired, false, "fired")
	t.eq(unknown, 0, "unknown responses")
end }

cases[#cases + 1] = { "killthread by the string form of a timeout", function()
	local fired = false
	local obj = skynet.timeout(10, function()
		fired = true
	end)
	t.ok(skynet.killthread(tostring(obj)), "killthread(string)")
	skynet.sleep(20)
	t.eq(fired, false, "fired")
end }

cases[#cases + 1] = { "killthread of a fired timeout blocked in sleep", function()
	local stage = 0
	local obj = skynet.timeout(1, function()
		stage = 1
		skynet.sleep(1000)
		stage = 2
	end)
	skynet.sleep(2)
	t.eq(stage, 1, "started")
	t.ok(skynet.killthread(obj), "kill the running timeout")
	skynet.sleep(2000)
	t.eq(stage, 1, "never resumed")
	t.eq(unknown, 0, "unknown responses")
end }

cases[#cases + 1] = { "pending timeouts cost little Lua memory", function()
	local f = function() end
	collectgarbage()
	local kb = collectgarbage "count"
	for i = 1, 20000 do
		skynet.timeout(1000 + i, f)
	end
	collectgarbage()
	local per = (collectgarbage "count" - kb) * 1024 / 20000
	t.ok(per < 64, string.format("%.1f bytes per pending timeout", per))
	t.ok(skynet.task() >= 20000, "task() counts pending timeouts")
	skynet.sleep(30000)
	t.eq(skynet.task(), 0, "all fired")
end }

cases[#cases + 1] = { "a one-hour sleep takes one virtual hour", function()
	local t0 = skynet.now()
	t.eq(skynet.sleep(360000), nil, "sleep result")
	t.eq(skynet.now() - t0, 360000, "elapsed")
end }

cases[#cases + 1] = { "wakeup breaks sleep and wait; wakeup of others is nil", function()
	local r1, r2
	local co1 = skynet.fork(function()
		r1 = skynet.sleep(100)
	end)
	local co2 = skynet.fork(function()
		r2 = table.pack(skynet.wait())
	end)
	skynet.yield()
	t.eq(skynet.wakeup(co1), true, "wakeup sleeper")
	t.eq(skynet.wakeup(co1), true, "second wakeup, woken but not run yet")
	t.eq(skynet.wakeup(co2), true, "wakeup waiter")
	t.eq(skynet.wakeup({}), nil, "unknown token")
	local t0 = skynet.now()
	skynet.yield()
	t.eq(r1, "BREAK", "sleep result")
	t.eq(r2.n, 0, "wait returns nothing")
	skynet.sleep(200)
	t.eq(unknown, 0, "no late timer message")
	t.eq(skynet.now() - t0, 200, "time")
end }

cases[#cases + 1] = { "task lists sleepers and timeouts", function()
	skynet.trace_timeout(true)
	local obj = skynet.timeout(500, function() end)
	skynet.trace_timeout(false)
	local co = skynet.fork(function()
		skynet.sleep(500)
	end)
	skynet.yield()
	local list = skynet.task {}
	local n = 0
	for k, v in pairs(list) do
		n = n + 1
		t.ok(k:find(" session: ", 1, true), "key " .. k)
		t.ok(type(v) == "string", "traceback")
	end
	t.eq(n, 2, "entries")
	local created
	local key = tostring(obj) .. " session: "
	for k, v in pairs(list) do
		if k:sub(1, #key) == key then
			created = v
		end
	end
	t.ok(created and created:find("test_smoke_timer", 1, true), "where the timeout was made")
	t.eq(skynet.task "init", nil, "no start function runs")
	local session = skynet.task(co)
	t.ok(math.type(session) == "integer", "session of co")
	t.ok(skynet.task(session):find("sleep", 1, true), "traceback of the sleeper")
	local groups = 0
	for k in pairs(skynet.uniqtask()) do
		groups = groups + 1
		t.ok(k:match "^1\tsessions:%[%d+%]\n$", "uniqtask key " .. k)
	end
	t.eq(groups, 2, "groups")
	skynet.killthread(obj)
	skynet.killthread(co)
	t.eq(skynet.task(), 0, "all gone")
end }

skynet.start(function()
	skynet.dispatch_unknown_response(function()
		unknown = unknown + 1
	end)
	skynet.dispatch("lua", function(_, _, cmd)
		assert(cmd == "run")
		skynet.retpack(t.run(cases))
	end)
end)
