-- skynet.coroutine: user coroutines that call blocking skynet
-- APIs, status "blocked", resume rules and their error texts, thread(),
-- wrap, and plain coroutine.yield in a framework thread.
local skynet = require "skynet"
local co = require "skynet.coroutine"
local t = require "testlib"

local echo

t.case("create / resume / yield pass values like the standard library", function()
	local c = co.create(function(a, b)
		t.eq(co.status(co.running()), "running", "status inside")
		local x = co.yield(a + b)
		local y, z = co.yield(x * 2)
		return y .. z
	end)
	t.eq(co.status(c), "suspended", "status before start")
	local ok, v = co.resume(c, 1, 2)
	t.eq(ok, true, "first resume")
	t.eq(v, 3, "first yield")
	ok, v = co.resume(c, 5)
	t.eq(ok, true, "second resume")
	t.eq(v, 10, "second yield")
	ok, v = co.resume(c, "a", "b")
	t.eq(ok, true, "last resume")
	t.eq(v, "ab", "return value")
	t.eq(co.status(c), "dead", "status after return")
	local again_ok, again_err = co.resume(c)
	t.eq(again_ok, false, "resume of a dead coroutine")
	t.ok(tostring(again_err):find("dead", 1, true), "dead error: " .. tostring(again_err))
end)

t.case("errors come back from resume", function()
	local c = co.create(function()
		error("user coroutine failure on purpose")
	end)
	local ok, err = co.resume(c)
	t.eq(ok, false, "resume result")
	t.ok(tostring(err):find("user coroutine failure on purpose", 1, true), "error: " .. tostring(err))
end)

t.case("blocking calls inside a user coroutine pass through resume", function()
	local log = {}
	local c = co.create(function()
		log[#log + 1] = "start"
		local r = skynet.call(echo, "lua", "echo", "via call")
		log[#log + 1] = r
		skynet.sleep(5)
		log[#log + 1] = "slept"
		co.yield("yielded")
		log[#log + 1] = "end"
		return "finished"
	end)
	local t0 = skynet.now()
	local ok, v = co.resume(c)
	t.eq(ok, true, "resume")
	t.eq(v, "yielded", "resume returns only at the user yield")
	t.eq(table.concat(log, ","), "start,via call,slept", "log")
	t.eq(skynet.now() - t0, 5, "the sleep took its time")
	ok, v = co.resume(c)
	t.eq(ok, true, "final resume")
	t.eq(v, "finished", "final value")
end)

t.case("a coroutine blocked in the framework reads blocked and cannot be resumed", function()
	local c = co.create(function()
		skynet.sleep(10)
		return "woke"
	end)
	local result
	skynet.fork(function()
		result = table.pack(co.resume(c))
	end)
	skynet.sleep(2)
	t.eq(co.status(c), "blocked", "status while sleeping")
	local ok, err = co.resume(c)
	t.eq(ok, false, "resume of a blocked coroutine")
	t.eq(err, "cannot resume a skynet coroutine suspend by skynet framework", "error text")
	t.eq(co.close(c), false, "close of a blocked coroutine is refused")
	skynet.sleep(10)
	t.eq(result[1], true, "first resumer gets the result")
	t.eq(result[2], "woke", "value")
	t.eq(co.status(c), "dead", "status at the end")
end)

t.case("resuming a plain coroutine is refused", function()
	local plain = coroutine.create(function() end)
	local ok, err = co.resume(plain)
	t.eq(ok, false, "result")
	t.eq(err, "cannot resume none skynet coroutine", "error text")
end)

t.case("skynet.coroutine.yield outside resume raises", function()
	t.raises("Call skynet.coroutine.yield out of skynet.coroutine.resume", co.yield, 1)
	local ok, err = coroutine.resume(coroutine.create(function()
		co.yield(1)
	end))
	t.eq(ok, false, "from a plain coroutine")
	local want = "Call skynet.coroutine.yield out of skynet.coroutine.resume"
	t.ok(tostring(err):find(want, 1, true), "text: " .. tostring(err))
end)

t.case("isyieldable is true in a skynet thread and under skynet.coroutine.resume", function()
	t.eq(co.isyieldable(), true, "in a skynet thread, as in skynet")
	t.eq(co.isyieldable(), coroutine.isyieldable(), "the standard answer in a skynet thread")
	local inside
	local c = co.create(function()
		inside = co.isyieldable()
	end)
	co.resume(c)
	t.eq(inside, true, "inside a user coroutine")
end)

t.case("isyieldable inside a user coroutine agrees with the standard one", function()
	local seen = {}
	local function look(where)
		seen[#seen + 1] = where .. "=" .. tostring(co.isyieldable()) .. "/" .. tostring(coroutine.isyieldable())
	end
	local c = co.create(function()
		look("start")
		skynet.sleep(1)
		look("after a sleep")
		local inner = co.wrap(function()
			look("nested")
			co.yield()
		end)
		inner()
		look("back")
		table.sort({ 3, 1, 2 }, function(a, b)
			look("in a sort comparator")
			return a < b
		end)
	end)
	t.eq(co.resume(c), true, "resume")
	t.eq(seen[1], "start=true/true", "at the start")
	t.eq(seen[2], "after a sleep=true/true", "after a framework block")
	t.eq(seen[3], "nested=true/true", "in a nested user coroutine")
	t.eq(seen[4], "back=true/true", "back in the outer one")
	t.eq(seen[5], "in a sort comparator=false/false", "inside a C call that cannot yield")
	t.eq(co.isyieldable(c), coroutine.isyieldable(c), "a dead coroutine: the standard answer")
end)

t.case("thread() names the skynet thread behind a user coroutine", function()
	local me = coroutine.running()
	local th, plain = co.thread()
	t.eq(th, me, "thread of a skynet thread")
	t.eq(plain, true, "a skynet thread is plain")
	local got_th, got_plain, nested_th, nested_plain
	local outer = co.create(function()
		got_th, got_plain = co.thread()
		local inner = co.create(function()
			nested_th, nested_plain = co.thread()
		end)
		co.resume(inner)
	end)
	co.resume(outer)
	t.eq(got_th, me, "root of a user coroutine")
	t.eq(got_plain, false, "a user coroutine is not plain")
	t.eq(nested_th, me, "root of a nested user coroutine")
	t.eq(nested_plain, false, "nested flag")
end)

t.case("wrap makes a generator that may block", function()
	local gen = co.wrap(function()
		for i = 1, 3 do
			skynet.sleep(1)
			co.yield(skynet.call(echo, "lua", "echo", i * 10))
		end
	end)
	local got = {}
	for _ = 1, 3 do
		got[#got + 1] = gen()
	end
	t.eq(table.concat(got, ","), "10,20,30", "generated")
	local failing = co.wrap(function()
		error("wrap failure on purpose")
	end)
	t.raises("wrap failure on purpose", failing)
end)

t.case("nested user coroutines block through two levels", function()
	local inner = co.wrap(function()
		skynet.sleep(3)
		co.yield("inner value")
	end)
	local outer = co.create(function()
		local v = inner()
		skynet.sleep(2)
		co.yield(v .. " via outer")
	end)
	local t0 = skynet.now()
	local ok, v = co.resume(outer)
	t.eq(ok, true, "resume")
	t.eq(v, "inner value via outer", "value")
	t.eq(skynet.now() - t0, 5, "both sleeps happened")
end)

t.case("wait/wakeup by the user coroutine as token", function()
	local c
	local woken = false
	c = co.create(function()
		skynet.wait()
		woken = true
		return "done"
	end)
	local result
	skynet.fork(function()
		result = table.pack(co.resume(c))
	end)
	t.quiesce()
	t.eq(co.status(c), "blocked", "status in wait")
	t.eq(skynet.wakeup(c), true, "wakeup of the user coroutine")
	t.quiesce()
	t.ok(woken, "resumed")
	t.eq(result[2], "done", "resume result")
end)

t.case("close runs to-be-closed variables of a suspended user coroutine", function()
	local closed = false
	local c = co.create(function()
		local _ <close> = setmetatable({}, {
			__close = function()
				closed = true
			end,
		})
		co.yield()
	end)
	co.resume(c)
	t.eq(co.close(c), true, "close result")
	t.ok(closed, "to-be-closed variable ran")
	t.eq(co.status(c), "dead", "status after close")
end)

t.case("plain coroutine.yield in a framework thread parks it; the service lives", function()
	local after_empty = false
	skynet.fork(function()
		-- The framework raises "Unknown command" (logged); whether this
		-- thread stays parked is not specified.
		pcall(coroutine.yield, "NO_SUCH_FRAMEWORK_COMMAND")
	end)
	skynet.fork(function()
		coroutine.yield()
		after_empty = true
	end)
	skynet.sleep(10)
	t.eq(after_empty, false, "a thread that yielded nothing went on")
	t.eq(skynet.call(echo, "lua", "ping"), "pong", "service fine")
	t.eq(skynet.call(skynet.self(), "lua", "ping"), "pong", "this service fine")
end)

t.start({
	ping = function()
		skynet.retpack("pong")
	end,
}, function()
	echo = skynet.newservice("svc_echo")
end)
