-- uniqueservice / queryservice (through service_mgr): one instance under
-- concurrent requests, queries that wait for a launch, failures remembered.
local skynet = require "skynet"
local t = require "testlib"

-- Runs n copies of f concurrently; returns the list of table.pack results.
local function concurrently(n, f, ...)
	local results = {}
	local left = n
	local me = coroutine.running()
	local args = table.pack(...)
	for i = 1, n do
		skynet.fork(function()
			results[i] = table.pack(pcall(f, table.unpack(args, 1, args.n)))
			left = left - 1
			if left == 0 then
				skynet.wakeup(me)
			end
		end)
	end
	skynet.wait(me)
	return results
end

t.case("concurrent uniqueservice requests share one instance", function()
	-- svc_slow_start sleeps in start, so every request arrives mid-launch.
	local results = concurrently(10, skynet.uniqueservice, "svc_slow_start", skynet.self())
	local handle = results[1][2]
	t.eq(math.type(handle), "integer", "handle")
	for i = 1, 10 do
		t.eq(results[i][1], true, "request " .. i .. " succeeded")
		t.eq(results[i][2], handle, "request " .. i .. " handle")
	end
	t.eq(#t.marks, 1, "instances started")
	t.eq(skynet.call(handle, "lua", "ping"), "pong", "instance answers")
	t.eq(skynet.uniqueservice("svc_slow_start"), handle, "a later request")
	t.eq(skynet.queryservice("svc_slow_start"), handle, "queryservice")
	local count = 0
	for _, desc in pairs(skynet.call(".launcher", "lua", "LIST")) do
		if desc:find("svc_slow_start", 1, true) then
			count = count + 1
		end
	end
	t.eq(count, 1, "instances in the launcher's list")
end)

t.case("newservice of the same name is a different service", function()
	local u = skynet.uniqueservice("svc_slow_start")
	local n = skynet.newservice("svc_slow_start")
	t.ok(n ~= u, "distinct handles")
end)

t.case("queryservice waits until someone launches the service", function()
	local got
	skynet.fork(function()
		got = skynet.queryservice("svc_init_order")
	end)
	skynet.sleep(20)
	t.eq(got, nil, "query returned before the launch")
	local h = skynet.uniqueservice("svc_init_order")
	t.quiesce()
	t.eq(got, h, "query result")
end)

t.case("a failing uniqueservice raises for every caller, now and later", function()
	local results = concurrently(5, skynet.uniqueservice, "svc_start_error")
	local first = tostring(results[1][2])
	for i = 1, 5 do
		t.eq(results[i][1], false, "concurrent request " .. i .. " must raise")
	end
	for i = 1, 3 do
		local ok, err = pcall(skynet.uniqueservice, "svc_start_error")
		t.eq(ok, false, "later request " .. i .. " must raise")
		t.eq(tostring(err), first, "later request " .. i .. " error text")
	end
	local ok = pcall(skynet.queryservice, "svc_start_error")
	t.eq(ok, false, "queryservice of a failed name must raise")
	t.ok(first:find("^newservice svc_start_error failed: .*svc_start_error: start failure on purpose$"),
		"names the service and the reason: " .. first)
	local _, err = pcall(function()
		local handle = skynet.uniqueservice("svc_start_error") -- not a tail call
		return handle
	end)
	t.ok(tostring(err):find("^%./test/lua/test_unique%.lua:%d+: newservice svc_start_error failed: "),
		"raised once, at the caller's line: " .. tostring(err))
end)

t.case("a missing unique service raises too", function()
	t.ok(not pcall(skynet.uniqueservice, "svc_there_is_no_such_file"), "missing file")
	t.ok(not pcall(skynet.uniqueservice, "svc_there_is_no_such_file"), "asked again")
	t.eq(skynet.call(skynet.uniqueservice("svc_echo"), "lua", "ping"), "pong", "node keeps working")
end)

t.start()
