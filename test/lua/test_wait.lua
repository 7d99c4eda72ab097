-- skynet.wait / skynet.wakeup: return values, deferred resumption, FIFO
-- resumption order, tokens, and the wakeup-before-fork rule.
local skynet = require "skynet"
local t = require "testlib"

t.case("wakeup of a token nobody waits on returns nil", function()
	t.eq(skynet.wakeup("nobody waits on this"), nil, "unknown token")
	t.eq(skynet.wakeup(coroutine.running()), nil, "a running coroutine")
end)

t.case("wakeup returns true and resumes later, not inside wakeup", function()
	local log = {}
	local waiter = skynet.fork(function()
		log[#log + 1] = "waiting"
		local n = select("#", skynet.wait())
		log[#log + 1] = "woken " .. n
	end)
	skynet.yield()
	t.eq(table.concat(log, ","), "waiting", "parked")
	t.eq(skynet.wakeup(waiter), true, "wakeup result")
	t.eq(#log, 1, "not resumed inside wakeup")
	skynet.yield()
	t.eq(table.concat(log, ","), "waiting,woken 0", "resumed; wait returns nothing")
	t.eq(skynet.wakeup(waiter), nil, "no longer waiting")
end)

t.case("a second wakeup before the woken coroutine runs returns true", function()
	local runs = 0
	local waiter = skynet.fork(function()
		skynet.wait()
		runs = runs + 1
	end)
	skynet.yield()
	t.eq(skynet.wakeup(waiter), true, "first wakeup")
	t.eq(skynet.wakeup(waiter), true, "second wakeup, not run yet")
	skynet.yield()
	t.eq(runs, 1, "resumed once")
	t.eq(skynet.wakeup(waiter), nil, "after it ran")
	-- The same for a sleep: it returns "BREAK" once.
	local got = {}
	local sleeper = skynet.fork(function()
		got[#got + 1] = tostring(skynet.sleep(100))
	end)
	skynet.yield()
	t.eq(skynet.wakeup(sleeper), true, "first wakeup of a sleep")
	t.eq(skynet.wakeup(sleeper), true, "second wakeup of a sleep")
	skynet.sleep(200)
	t.eq(table.concat(got, ","), "BREAK", "the sleep returned once")
	t.eq(skynet.wakeup(sleeper), nil, "after the sleep returned")
end)

t.case("a woken coroutine that is killed before it runs is not woken again", function()
	local runs = 0
	local waiter = skynet.fork(function()
		skynet.wait()
		runs = runs + 1
	end)
	skynet.yield()
	t.eq(skynet.wakeup(waiter), true, "wakeup")
	t.eq(skynet.killthread(waiter), waiter, "killthread")
	t.eq(skynet.wakeup(waiter), nil, "wakeup after the kill")
	skynet.yield()
	t.eq(runs, 0, "never resumed")
end)

t.case("explicit tokens", function()
	local got = {}
	local token = {}
	skynet.fork(function()
		skynet.wait("string token")
		got[#got + 1] = "string"
	end)
	skynet.fork(function()
		skynet.wait(token)
		got[#got + 1] = "table"
	end)
	skynet.yield()
	t.eq(skynet.wakeup(token), true, "table token")
	t.eq(skynet.wakeup("string token"), true, "string token")
	skynet.yield()
	t.eq(table.concat(got, ","), "table,string", "resumed in wakeup order")
end)

t.case("resumption follows wakeup order", function()
	local log = {}
	local w = {}
	for i = 1, 4 do
		w[i] = skynet.fork(function()
			skynet.wait()
			log[#log + 1] = i
		end)
	end
	skynet.yield()
	for _, i in ipairs({ 3, 1, 4, 2 }) do
		t.eq(skynet.wakeup(w[i]), true, "wakeup " .. i)
	end
	skynet.yield()
	t.eq(table.concat(log, ","), "3,1,4,2", "order")
end)

t.case("woken coroutines run before forks queued in the same dispatch", function()
	local log = {}
	local waiter = skynet.fork(function()
		skynet.wait()
		log[#log + 1] = "woken"
	end)
	skynet.yield()
	skynet.fork(function()
		log[#log + 1] = "fork"
	end)
	skynet.wakeup(waiter)
	log[#log + 1] = "caller"
	skynet.yield()
	t.eq(table.concat(log, ","), "caller,woken,fork", "order")
end)

t.case("a woken coroutine can wake the next one (chained)", function()
	local log = {}
	local w2
	local w1 = skynet.fork(function()
		skynet.wait()
		log[#log + 1] = "w1"
		skynet.wakeup(w2)
	end)
	w2 = skynet.fork(function()
		skynet.wait()
		log[#log + 1] = "w2"
	end)
	skynet.yield()
	skynet.wakeup(w1)
	skynet.sleep(1)
	t.eq(table.concat(log, ","), "w1,w2", "chain")
end)

t.case("wait in a request handler, woken by another request", function()
	t.eq(skynet.call(skynet.self(), "lua", "wait_for_kick"), "kicked", "reply")
end)

local parked

t.start({
	wait_for_kick = function()
		parked = coroutine.running()
		skynet.send(skynet.self(), "lua", "kick")
		skynet.wait()
		skynet.retpack("kicked")
	end,
	kick = function()
		skynet.wakeup(parked)
	end,
})
