-- skynet.killthread: cancelling a pending timeout, a pending fork, a
-- sleeping coroutine, a coroutine waiting on a call, and one serving a
-- request (killthread on a timeout object cancels its C timer).
local skynet = require "skynet"
local t = require "testlib"

local echo
local unknown_responses

t.case("killthread cancels a pending timeout: its function never runs", function()
	local before = unknown_responses()
	local fired = false
	local co = skynet.timeout(10, function()
		fired = true
	end)
	t.ok(co ~= nil, "timeout returns an object")
	t.ok(skynet.killthread(co) ~= nil, "killthread finds the timeout")
	skynet.sleep(20)
	t.eq(fired, false, "killed timeout ran")
	t.eq(unknown_responses(), before, "no stray response")
	t.eq(skynet.killthread(co), nil, "second kill finds nothing")
end)

t.case("killthread on one timeout leaves the others alone", function()
	local fired = {}
	local handles = {}
	for i = 1, 5 do
		handles[i] = skynet.timeout(i, function()
			fired[#fired + 1] = i
		end)
	end
	skynet.killthread(handles[2])
	skynet.killthread(handles[4])
	skynet.sleep(10)
	t.eq(table.concat(fired, ","), "1,3,5", "fired")
end)

t.case("killthread of a fired timeout returns nil", function()
	local co = skynet.timeout(1, function() end)
	skynet.sleep(2)
	t.eq(skynet.killthread(co), nil, "already fired")
end)

t.case("killthread removes a pending fork", function()
	local ran = false
	local co = skynet.fork(function()
		ran = true
	end)
	t.eq(skynet.killthread(co), co, "returns the coroutine")
	skynet.yield()
	t.eq(ran, false, "killed fork ran")
end)

t.case("killthread by a tostring pattern", function()
	local ran = false
	local co = skynet.fork(function()
		ran = true
	end)
	local pattern = tostring(co):match("0x%x+") or tostring(co)
	t.eq(skynet.killthread(pattern), co, "killed by pattern")
	skynet.yield()
	t.eq(ran, false, "killed fork ran")
end)

t.case("killthread by the tostring of a timeout object", function()
	local fired = false
	local obj = skynet.timeout(10, function()
		fired = true
	end)
	t.eq(skynet.killthread(tostring(obj)), obj, "the timeout object")
	skynet.sleep(20)
	t.eq(fired, false, "killed timeout ran")
end)

t.case("a timeout that fired and blocked: its object kills the coroutine", function()
	local before = unknown_responses()
	local woke = false
	local obj = skynet.timeout(0, function()
		skynet.sleep(20)
		woke = true
	end)
	skynet.sleep(2)
	local co = skynet.killthread(obj)
	t.eq(type(co), "thread", "the coroutine it runs in")
	skynet.sleep(30)
	t.eq(woke, false, "the sleep returned")
	t.eq(unknown_responses(), before, "no stray response")
	t.eq(skynet.killthread(obj), nil, "second kill finds nothing")
end)

t.case("killing a waiting coroutine frees its token", function()
	local token = {}
	local returned = false
	local co = skynet.fork(function()
		skynet.wait(token)
		returned = true
	end)
	skynet.yield()
	t.eq(skynet.killthread(co), co, "killed")
	t.eq(skynet.wakeup(token), nil, "nothing waits on the token")
	local again = false
	skynet.fork(function()
		skynet.wait(token)
		again = true
	end)
	skynet.yield()
	t.eq(skynet.wakeup(token), true, "a new wait on the same token")
	skynet.yield()
	t.eq(again, true, "the new wait returned")
	t.eq(returned, false, "the killed wait returned")
end)

t.case("killing a coroutine woken but not resumed yet", function()
	local token = {}
	local returned = false
	local co = skynet.fork(function()
		skynet.wait(token)
		returned = true
	end)
	skynet.yield()
	t.eq(skynet.wakeup(token), true, "woken")
	t.eq(skynet.killthread(co), co, "killed")
	t.eq(skynet.wakeup(token), nil, "a second wakeup finds nothing")
	skynet.yield()
	t.eq(returned, false, "the killed wait returned")
end)

t.case("killthread of an unknown coroutine returns nil", function()
	t.eq(skynet.killthread(coroutine.create(function() end)), nil, "plain coroutine")
	t.eq(skynet.killthread("no such coroutine pattern"), nil, "pattern")
end)

t.case("killing a sleeping coroutine: the sleep never returns", function()
	local before = unknown_responses()
	local returned = false
	local co = skynet.fork(function()
		skynet.sleep(50)
		returned = true
	end)
	skynet.yield()
	t.eq(skynet.killthread(co), co, "killed")
	skynet.sleep(100)
	t.eq(returned, false, "sleep returned")
	t.eq(unknown_responses(), before, "no stray response")
end)

t.case("killing a coroutine waiting on a call; its late reply is dropped", function()
	local before = unknown_responses()
	local returned = false
	local closed = false
	local co = skynet.fork(function()
		local _ <close> = setmetatable({}, {
			__close = function()
				closed = true
			end,
		})
		skynet.call(echo, "lua", "hold", "killed caller")
		returned = true
	end)
	t.quiesce()
	t.eq(skynet.killthread(co), co, "killed")
	skynet.yield()
	t.ok(closed, "to-be-closed variable ran")
	t.eq(skynet.call(echo, "lua", "release"), 1, "held requests released")
	t.quiesce()
	t.eq(returned, false, "call returned in a killed coroutine")
	t.eq(unknown_responses(), before, "late reply must be discarded silently")
end)

t.case("killing the coroutine serving a request fails the requester", function()
	local ok, err
	skynet.fork(function()
		ok, err = pcall(skynet.call, echo, "lua", "hold", "victim")
	end)
	t.quiesce()
	t.eq(skynet.call(echo, "lua", "kill_held"), 1, "killed")
	t.quiesce()
	t.eq(ok, false, "call must fail")
	t.ok(tostring(err):find("call failed", 1, true), "error text: " .. tostring(err))
	t.eq(skynet.call(echo, "lua", "ping"), "pong", "service keeps serving")
end)

t.start(nil, function()
	echo = skynet.newservice("svc_echo")
	unknown_responses = t.watch_unknown_responses()
end)
