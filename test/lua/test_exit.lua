-- skynet.exit: pending incoming calls and response closures get
-- errors, suspended coroutines are closed, queued forks are dropped, code
-- after exit() never runs, services this one waits on learn it is dead.
local skynet = require "skynet"
local t = require "testlib"

local function launcher_has(addr)
	local list = skynet.call(".launcher", "lua", "LIST")
	return list[skynet.address(addr)] ~= nil
end

t.case("exit with pending incoming calls: every caller gets an error", function()
	local svc = skynet.newservice("svc_echo")
	local results = {}
	local function collect(what, ok, err)
		local failed = tostring(err):find("call failed", 1, true) and "failed" or tostring(err)
		results[#results + 1] = what .. "=" .. (ok and "ok" or failed)
	end
	for i = 1, 3 do
		skynet.fork(function()
			collect("hold" .. i, pcall(skynet.call, svc, "lua", "hold", i))
		end)
	end
	skynet.fork(function()
		collect("defer", pcall(skynet.call, svc, "lua", "defer", "d"))
	end)
	t.quiesce()
	t.eq(#results, 0, "all pending")
	t.eq(skynet.call(svc, "lua", "held_count"), 1, "one response closure")
	t.ok(launcher_has(svc), "launcher lists the service")
	collect("exit", pcall(skynet.call, svc, "lua", "exit"))
	t.quiesce()
	table.sort(results)
	t.eq(table.concat(results, " "), "defer=failed exit=failed hold1=failed hold2=failed hold3=failed", "results")
	t.raises("call to invalid address", skynet.call, svc, "lua", "ping")
	t.ok(not launcher_has(svc), "launcher forgot the service")
end)

t.case("a killed service fails every pending call (the callers never hang)", function()
	local svc = skynet.newservice("svc_echo")
	local results = {}
	for i = 1, 3 do
		skynet.fork(function()
			local ok, err = pcall(skynet.call, svc, "lua", "hold", i)
			results[#results + 1] = ok and "ok" or tostring(err)
		end)
	end
	skynet.fork(function()
		local ok, err = pcall(skynet.call, svc, "lua", "defer", "d")
		results[#results + 1] = ok and "ok" or tostring(err)
	end)
	t.quiesce()
	t.eq(#results, 0, "all pending")
	skynet.kill(svc)
	t.quiesce()
	t.eq(#results, 4, "every caller got an answer")
	for i = 1, #results do
		t.ok(results[i]:find("call failed", 1, true), "error text: " .. results[i])
	end
	t.raises("call to invalid address", skynet.call, svc, "lua", "ping")
end)

t.case("exit closes suspended coroutines: to-be-closed variables run", function()
	local svc = skynet.newservice("svc_echo")
	for i = 1, 2 do
		skynet.fork(function()
			pcall(skynet.call, svc, "lua", "hold_tbc", skynet.self(), i)
		end)
	end
	t.quiesce()
	t.eq(#t.marks, 0, "nothing closed yet")
	skynet.send(svc, "lua", "exit")
	t.quiesce()
	t.ok(t.has_mark("closed 1"), "first holder closed")
	t.ok(t.has_mark("closed 2"), "second holder closed")
	t.marks = {}
end)

t.case("code after exit() never runs", function()
	local svc = skynet.newservice("svc_echo")
	skynet.send(svc, "lua", "exit_and_mark", skynet.self())
	t.quiesce()
	t.ok(t.has_mark("before"), "handler ran")
	t.ok(not t.has_mark("after"), "code after exit ran")
	t.marks = {}
end)

t.case("exit drops queued forks", function()
	local svc = skynet.newservice("svc_echo")
	skynet.send(svc, "lua", "fork_then_exit", skynet.self())
	t.quiesce()
	t.ok(not t.has_mark("forked"), "a fork queued before exit ran")
	t.raises("call to invalid address", skynet.call, svc, "lua", "ping")
	t.marks = {}
end)

t.case("a service exiting with its own call pending: the callee's closure is dead", function()
	local callee = skynet.newservice("svc_echo")
	local caller = skynet.newservice("svc_echo")
	skynet.fork(function()
		pcall(skynet.call, caller, "lua", "call", callee, "defer", "owed")
	end)
	t.quiesce()
	t.eq(skynet.call(callee, "lua", "held_count"), 1, "callee owes a reply")
	pcall(skynet.call, caller, "lua", "exit")
	t.quiesce()
	t.eq(skynet.call(callee, "lua", "answer_one", "late"), false, "reply to a dead caller")
	t.eq(skynet.call(callee, "lua", "ping"), "pong", "callee keeps serving")
end)

t.case("debug EXIT makes a service exit", function()
	local svc = skynet.newservice("svc_echo")
	skynet.send(svc, "debug", "EXIT")
	t.quiesce()
	t.raises("call to invalid address", skynet.call, svc, "lua", "ping")
end)

t.start()
