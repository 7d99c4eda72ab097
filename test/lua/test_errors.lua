-- Error semantics: errors in dispatch, calls to dead and unknown
-- services, bad addresses, unknown protocols, forgotten replies, term.
local skynet = require "skynet"
require "skynet.manager"
local t = require "testlib"

local echo

t.case("an error in a handler fails the call; the service keeps serving", function()
	t.raises("call failed", skynet.call, echo, "lua", "error", "handler failure on purpose")
	t.eq(skynet.call(echo, "lua", "ping"), "pong", "after one error")
	for i = 1, 20 do
		t.raises("call failed", skynet.call, echo, "lua", "error", "again " .. i)
	end
	t.raises("call failed", skynet.call, echo, "lua", "error_table")
	t.eq(skynet.call(echo, "lua", "echo", "alive"), "alive", "after many errors")
end)

t.case("errors of concurrent calls reach only their own callers", function()
	local results = {}
	local me = coroutine.running()
	local n = 0
	for i = 1, 6 do
		skynet.fork(function()
			if i % 2 == 0 then
				results[i] = pcall(skynet.call, echo, "lua", "error", "even " .. i)
			else
				results[i] = pcall(skynet.call, echo, "lua", "sleep_echo", i, i)
			end
			n = n + 1
			if n == 6 then
				skynet.wakeup(me)
			end
		end)
	end
	skynet.wait(me)
	for i = 1, 6 do
		t.eq(results[i], i % 2 == 1, "call " .. i .. " succeeded")
	end
end)

t.case("call to a dead service raises call to invalid address", function()
	local victim = skynet.newservice("svc_echo")
	t.eq(skynet.call(victim, "lua", "ping"), "pong", "alive")
	skynet.kill(victim)
	t.raises("call to invalid address", skynet.call, victim, "lua", "ping")
	t.raises("call to invalid address", skynet.call, skynet.address(victim), "lua", "ping")
	t.eq(skynet.send(victim, "lua", "ping"), nil, "send to a dead service returns nil")
end)

t.case("call to an unknown .name raises call to invalid address", function()
	t.raises("call to invalid address", skynet.call, ".no_such_service_name", "lua", "ping")
	t.eq(skynet.send(".no_such_service_name", "lua", "ping"), nil, "send returns nil")
end)

t.case("bad destination addresses raise", function()
	t.raises("Invalid service address 0", skynet.send, 0, "lua", "x")
	t.raises("dest address type (table) must be a string or number.", skynet.send, {}, "lua", "x")
	t.raises("dest address type (boolean) must be a string or number.", skynet.call, true, "lua", "x")
end)

t.case("a service that exits inside the handler fails the call", function()
	local victim = skynet.newservice("svc_echo")
	t.raises("call failed", skynet.call, victim, "lua", "exit")
	t.quiesce()
	t.raises("call to invalid address", skynet.call, victim, "lua", "ping")
end)

t.case("a request for a protocol the target lacks fails the call", function()
	t.raises("call failed", skynet.call, echo, "text", "hello")
	t.eq(skynet.call(echo, "lua", "ping"), "pong", "service keeps serving")
end)

t.case("an unknown protocol name raises in the caller", function()
	t.ok(not pcall(skynet.call, echo, "no_such_protocol", "x"), "call must raise")
	t.ok(not pcall(skynet.send, echo, "no_such_protocol", "x"), "send must raise")
end)

t.case("register_protocol rejects a duplicate name or id", function()
	t.ok(not pcall(skynet.register_protocol, { name = "lua", id = 200 }), "duplicate name")
	t.ok(not pcall(skynet.register_protocol, { name = "fresh_name", id = skynet.PTYPE_LUA }), "duplicate id")
end)

t.case("a forgotten reply leaves the caller blocked", function()
	local returned = false
	local co = skynet.fork(function()
		skynet.call(echo, "lua", "noreply")
		returned = true
	end)
	skynet.sleep(100)
	t.eq(returned, false, "call returned without a reply")
	skynet.killthread(co)
end)

t.case("term fails every pending call to the address", function()
	local results = {}
	for i = 1, 3 do
		skynet.fork(function()
			local ok, err = pcall(skynet.call, echo, "lua", "hold", i)
			results[#results + 1] = ok and "ok" or tostring(err)
		end)
	end
	t.quiesce()
	t.eq(#results, 0, "still pending")
	skynet.term(echo)
	t.quiesce()
	t.eq(#results, 3, "all failed")
	for i = 1, 3 do
		t.ok(results[i]:find("call failed", 1, true), "error text: " .. results[i])
	end
	-- echo is alive: its held requests can still be released.
	skynet.call(echo, "lua", "release")
	t.eq(skynet.call(echo, "lua", "ping"), "pong", "service keeps serving")
end)

t.case("a request queued behind the target's exit is bounced as an error", function()
	local victim = skynet.newservice("svc_echo")
	skynet.send(victim, "lua", "exit")
	-- Another worker may retire victim before the call is sent: then the
	-- call fails at once. Either way it must fail, not hang.
	local ok, err = pcall(skynet.call, victim, "lua", "echo", "too late")
	t.eq(ok, false, "call must fail")
	err = tostring(err)
	t.ok(err:find("call failed", 1, true) or err:find("call to invalid address", 1, true), "error text: " .. err)
end)

t.case("a caller's mistake in the service helpers raises at the caller's line", function()
	skynet.setenv("test_errors_once", "1")
	local ok, err = pcall(function()
		skynet.setenv("test_errors_once", "2")
	end)
	t.eq(ok, false, "setenv of an existing key must raise")
	t.ok(tostring(err):find("^%./test/lua/test_errors%.lua:%d+: Can't setenv exist key : test_errors_once$"),
		"error text: " .. tostring(err))
	ok, err = pcall(function()
		skynet.request():add("not a table")
	end)
	t.eq(ok, false, "request:add of a non-table must raise")
	t.ok(tostring(err):find("^%./test/lua/test_errors%.lua:%d+: skynet.request: request table expected$"),
		"error text: " .. tostring(err))
end)

t.case("a handler's error keeps skynet's call failed text for the caller", function()
	local ok, err = pcall(function()
		return skynet.call(echo, "lua", "error", "reason on purpose")
	end)
	t.eq(ok, false, "call must raise")
	t.ok(tostring(err):find("^%./test/lua/test_errors%.lua:%d+: call failed$"), "error text: " .. tostring(err))
end)

t.start(nil, function()
	skynet.register_protocol({
		name = "text",
		id = skynet.PTYPE_TEXT,
		pack = function(...)
			return table.concat({ ... }, " ")
		end,
		unpack = skynet.tostring,
	})
	echo = skynet.newservice("svc_echo")
end)
