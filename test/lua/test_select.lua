-- skynet.request / select: replies in arrival order, error and
-- send-failure entries, timeouts, close, one select per object.
local skynet = require "skynet"
require "skynet.manager"
local t = require "testlib"

local a, b
local unknown_responses

t.case("replies come in arrival order with their requests", function()
	local r = skynet.request()
	local slow = { a, "lua", "sleep_echo", 30, "slow" }
	local fast = { b, "lua", "sleep_echo", 10, "fast", "x" }
	local failing = { a, "lua", "error", "select failure on purpose" }
	t.eq(r:add(slow), r, "add chains")
	t.eq(r(fast), r, "call chains")
	r:add(failing)
	local seen = {}
	for req, resp in r:select() do
		if req == failing then
			t.eq(resp, false, "error entry")
			seen[#seen + 1] = "failing"
		elseif req == fast then
			t.eq(resp.n, 2, "fast value count")
			t.eq(resp[1], "fast", "fast value")
			t.eq(resp[2], "x", "fast 2nd value")
			seen[#seen + 1] = "fast"
		elseif req == slow then
			t.eq(resp[1], "slow", "slow value")
			seen[#seen + 1] = "slow"
		else
			error("select yielded an unknown request")
		end
	end
	t.eq(table.concat(seen, ","), "failing,fast,slow", "arrival order")
end)

t.case("a request whose send fails comes first with nil", function()
	local dead = skynet.newservice("svc_echo")
	skynet.kill(dead)
	local r = skynet.request()
	local ok_req = { a, "lua", "echo", 1 }
	local dead_req = { dead, "lua", "echo", 2 }
	r:add(ok_req):add(dead_req)
	local order = {}
	for req, resp in r:select() do
		if req == dead_req then
			t.eq(resp, nil, "dead entry")
			order[#order + 1] = "dead"
		else
			t.eq(resp[1], 1, "live entry")
			order[#order + 1] = "live"
		end
	end
	t.eq(table.concat(order, ","), "dead,live", "order")
end)

t.case("a timeout stops the loop early; late replies are dropped", function()
	local before = unknown_responses()
	local r = skynet.request()
	r:add({ a, "lua", "sleep_echo", 5, "quick" })
	r:add({ b, "lua", "sleep_echo", 200, "late" })
	local got = {}
	local t0 = skynet.now()
	for _, resp in r:select(50) do
		got[#got + 1] = resp[1]
	end
	t.eq(table.concat(got, ","), "quick", "replies before the timeout")
	t.eq(r.timeout, true, "timeout flag")
	t.eq(skynet.now() - t0, 50, "loop ended at the timeout")
	skynet.sleep(300)
	t.eq(unknown_responses(), before, "the late reply must be discarded silently")
end)

t.case("no timeout flag when everything arrives in time", function()
	local r = skynet.request()
	r:add({ a, "lua", "echo", 1 })
	local n = 0
	for _ in r:select(100) do
		n = n + 1
	end
	t.eq(n, 1, "replies")
	t.ok(not r.timeout, "timeout flag")
end)

t.case("close cancels what is outstanding", function()
	local before = unknown_responses()
	do
		local r <close> = skynet.request()
		r:add({ a, "lua", "sleep_echo", 1, "first" })
		r:add({ b, "lua", "sleep_echo", 100, "second" })
		for _, resp in r:select() do -- luacheck: ignore 512 (only the first reply)
			t.eq(resp[1], "first", "first reply")
			break
		end
	end
	skynet.sleep(200)
	t.eq(unknown_responses(), before, "replies after close must be discarded silently")
	local r2 = skynet.request({ a, "lua", "sleep_echo", 100, "x" })
	local it = r2:select()
	r2:close()
	t.ok(it, "iterator")
	skynet.sleep(200)
	t.eq(unknown_responses(), before, "after explicit close")
end)

t.case("select can be called only once", function()
	local r = skynet.request({ a, "lua", "echo", 1 })
	for _ in r:select() do
	end
	t.ok(not pcall(r.select, r), "second select must raise")
end)

t.case("calls inside the select loop", function()
	local r = skynet.request()
	for i = 1, 5 do
		r:add({ i % 2 == 0 and a or b, "lua", "sleep_echo", i, i })
	end
	local sum = 0
	for _, resp in r:select() do
		sum = sum + skynet.call(a, "lua", "echo", resp[1])
	end
	t.eq(sum, 15, "sum of replies")
end)

t.case("request(req) starts with one request", function()
	local req = { a, "lua", "echo", "single" }
	local r = skynet.request(req)
	local n = 0
	for got, resp in r:select() do
		t.eq(got, req, "request")
		t.eq(resp[1], "single", "reply")
		n = n + 1
	end
	t.eq(n, 1, "replies")
end)

t.start(nil, function()
	a = skynet.newservice("svc_echo")
	b = skynet.newservice("svc_echo")
	unknown_responses = t.watch_unknown_responses()
end)
