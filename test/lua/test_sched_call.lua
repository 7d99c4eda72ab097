-- skynet.timeout_call (skynet.timer) under virtual time: early, late and
-- never answers, errors, and that neither a late answer nor the error of a
-- callee that dies afterwards produces an unknown-session error; the timer
-- is cancelled when the answer comes first. Launched with the argument
-- "helper" this file is the callee instead.
local skynet = require "skynet"

if ... == "helper" then
	local held = {}
	skynet.start(function()
		skynet.dispatch("lua", function(_, _, cmd, arg)
			if cmd == "after" then -- answer arg cs later
				skynet.sleep(arg)
				skynet.retpack("answer after " .. arg)
			elseif cmd == "never" then
				held[#held + 1] = skynet.response()
			elseif cmd == "fail" then
				error("callee failure on purpose")
			elseif cmd == "values" then
				skynet.retpack(false, nil, "timeout")
			elseif cmd == "exit" then
				skynet.exit()
			end
		end)
	end)
	return
end

local timer = require "skynet.timer"
local t = require "testlib"

local unknown_responses
local helper

t.case("timeout_call is also skynet.timeout_call", function()
	t.eq(skynet.timeout_call, timer.timeout_call, "same function")
end)

t.case("an early answer: true and the results, the timer cancelled", function()
	local t0 = skynet.now()
	local ok, r = skynet.timeout_call(100, helper, "lua", "after", 10)
	t.eq(ok, true, "ok")
	t.eq(r, "answer after 10", "result")
	t.eq(skynet.now() - t0, 10, "returned when the answer came")
	t.eq(skynet.stat "timers", 0, "the deadline timer is gone")
	local ok2, a, b, c = skynet.timeout_call(100, helper, "lua", "values")
	t.eq(ok2, true, "ok")
	t.ok(a == false and b == nil and c == "timeout", "results passed through as they are")
end)

t.case("a late answer: false, \"timeout\" at the deadline, the answer dropped silently", function()
	local before = unknown_responses()
	local t0 = skynet.now()
	local ok, err = skynet.timeout_call(50, helper, "lua", "after", 200)
	t.eq(ok, false, "ok")
	t.eq(err, "timeout", "reason")
	t.eq(skynet.now() - t0, 50, "returned at the deadline")
	skynet.sleep(300) -- the answer arrives meanwhile
	t.eq(unknown_responses(), before, "no unknown response")
	t.eq(skynet.stat "timers", 0, "no timer left")
end)

t.case("no answer ever: timeout; the callee dying later is silent too", function()
	local before = unknown_responses()
	local callee = skynet.newservice(SERVICE_NAME, "helper")
	local ok, err = skynet.timeout_call(30, callee, "lua", "never")
	t.eq(ok, false, "ok")
	t.eq(err, "timeout", "reason")
	skynet.send(callee, "lua", "exit") -- its held response becomes an error to us
	skynet.sleep(10)
	t.eq(unknown_responses(), before, "no unknown response")
	t.raises("call to invalid address", skynet.call, callee, "lua", "never")
end)

t.case("many calls with mixed deadlines", function()
	local results = {}
	for i, d in ipairs({ 5, 40, 15, 60, 25 }) do
		skynet.fork(function()
			local ok = skynet.timeout_call(30, helper, "lua", "after", d)
			results[i] = ok and "ok" or "timeout"
		end)
	end
	skynet.sleep(100)
	t.eq(table.concat(results, ","), "ok,timeout,ok,timeout,ok", "results")
	t.eq(skynet.stat "timers", 0, "no timer left")
end)

t.case("errors are raised like skynet.call", function()
	t.raises("call failed", skynet.timeout_call, 100, helper, "lua", "fail")
	t.raises("call to invalid address", skynet.timeout_call, 100, 0x7fffff, "lua", "x")
	t.raises("timer.timeout_call: time must be an integer of cs (soon)", skynet.timeout_call, "soon", helper, "lua")
	t.eq(skynet.stat "timers", 0, "no timer left")
end)

t.case("ti <= 0 still lets an answer that is already possible lose", function()
	local ok, err = skynet.timeout_call(0, helper, "lua", "after", 1)
	t.eq(ok, false, "ok")
	t.eq(err, "timeout", "reason")
	skynet.sleep(5)
end)

t.start(nil, function()
	unknown_responses = t.watch_unknown_responses()
	helper = skynet.newservice(SERVICE_NAME, "helper")
end)
