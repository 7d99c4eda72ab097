-- skynet.memlimit (enforced by snlua's allocator): an allocation past the limit fails
-- inside the service as a Lua memory error; the service survives.
local skynet = require "skynet"
local t = require "testlib"

local limited

t.case("the limit is set in the main chunk; memlimit then disappears", function()
	local limit, fn = skynet.call(limited, "lua", "limit")
	t.eq(limit, 4 * 1024 * 1024, "limit")
	t.eq(fn, nil, "skynet.memlimit after the main chunk")
end)

t.case("allocations under the limit work", function()
	local ok, n = skynet.call(limited, "lua", "alloc", 512 * 1024)
	t.eq(ok, true, "512 KB string")
	t.eq(n, 512 * 1024, "length")
end)

t.case("one allocation past the limit fails with a memory error", function()
	local ok, err = skynet.call(limited, "lua", "alloc", 8 * 1024 * 1024)
	t.eq(ok, false, "8 MB string must fail")
	t.ok(err:find("not enough memory", 1, true), "error text: " .. err)
	t.eq(skynet.call(limited, "lua", "ping"), "pong", "service survives")
end)

t.case("growing past the limit bit by bit fails, then memory comes back", function()
	local ok, err = skynet.call(limited, "lua", "fill")
	t.eq(ok, false, "fill must fail")
	t.ok(err:find("not enough memory", 1, true), "error text: " .. err)
	local kb = skynet.call(limited, "lua", "kb")
	t.ok(kb < 4096, "heap after the failure: " .. kb .. " KB")
	local ok2 = skynet.call(limited, "lua", "alloc", 512 * 1024)
	t.eq(ok2, true, "allocation after recovery")
	t.eq(skynet.call(limited, "lua", "ping"), "pong", "service survives")
end)

t.case("debug MEM of the limited service stays under the limit", function()
	local kb = skynet.call(limited, "debug", "MEM")
	t.ok(kb > 0 and kb < 4096, "MEM: " .. tostring(kb))
end)

t.case("a service without a limit can allocate the same amount", function()
	local svc = skynet.newservice("svc_echo")
	local ok, n = skynet.call(svc, "lua", "alloc", 8 * 1024 * 1024)
	t.eq(ok, true, "8 MB string without a limit")
	t.eq(n, 8 * 1024 * 1024, "length")
end)

t.case("a service filled to its limit can still exit", function()
	t.marks = {}
	local svc = skynet.newservice("svc_memlimit")
	local token = {}
	local result
	skynet.fork(function()
		result = table.pack(pcall(skynet.call, svc, "lua", "fill_exit"))
		skynet.wakeup(token)
	end)
	skynet.sleep(1000, token) -- virtual time: a lost request ends the wait at once
	t.ok(result ~= nil, "the request that exits got no answer")
	t.eq(result[1], false, "the request that exits gets an error")
	t.ok(tostring(result[2]):find("call failed", 1, true), "error text: " .. tostring(result[2]))
	t.quiesce()
	t.ok(t.has_mark("closed 4096"), "exit ran the to-be-closed handler of a parked coroutine")
	t.raises("call to invalid address", skynet.call, svc, "lua", "ping")
	local list = skynet.call(".launcher", "lua", "LIST")
	t.eq(list[skynet.address(svc)], nil, "the launcher forgot the service")
end)

t.start(nil, function()
	limited = skynet.newservice("svc_memlimit")
end)
