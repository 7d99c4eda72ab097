-- Launching services (loader, newservice, launch failures, the launcher):
-- arguments, init order, nil for an exit during start, failures that raise
-- in newservice while the node keeps running, kill during launch.
local skynet = require "skynet"
require "skynet.manager"
local t = require "testlib"

local function node_still_works()
	local svc = skynet.newservice("svc_echo")
	t.eq(skynet.call(svc, "lua", "ping"), "pong", "a fresh service answers")
	skynet.kill(svc)
end

t.case("newservice returns a handle; arguments arrive as strings", function()
	local svc = skynet.newservice("svc_echo", 8000, "two", 3.5)
	t.eq(math.type(svc), "integer", "handle type")
	t.ok(svc > 0, "handle value")
	local name, a, b, c = skynet.call(svc, "lua", "args")
	t.eq(name, "svc_echo", "SERVICE_NAME")
	t.eq(a, "8000", "1st argument")
	t.eq(b, "two", "2nd argument")
	t.eq(c, "3.5", "3rd argument")
end)

t.case("init functions run before start, after the main chunk", function()
	local svc = skynet.newservice("svc_init_order")
	t.eq(skynet.call(svc, "lua", "order"), "main,init1,init2,start", "order")
end)

t.case("newservice returns nil when the service exits during start", function()
	local r = table.pack(skynet.newservice("svc_exit_in_start"))
	t.eq(r[1], nil, "result")
	node_still_works()
end)

-- newservice's error, raised at its caller's line: the service's name and
-- why its start failed (the first line of its start error).
local function launch_error(name)
	local ok, err = pcall(function()
		local handle = skynet.newservice(name) -- not a tail call: the caller's line stays
		return handle
	end)
	t.eq(ok, false, "newservice " .. name .. " must raise")
	err = tostring(err)
	local prefix = string.format("^%%./test/lua/test_launch%%.lua:%%d+: newservice %s failed: ", name)
	t.ok(err:find(prefix), "names the service, at the caller's line: " .. err)
	t.ok(not err:find("\n", 1, true), "one line: " .. err)
	return err
end

t.case("a missing service raises in newservice", function()
	local err = launch_error("svc_there_is_no_such_file")
	t.ok(err:find("cannot open ./test/lua/svc_there_is_no_such_file.lua", 1, true), err)
	node_still_works()
end)

t.case("a syntax error raises in newservice with the compile error alone", function()
	local err = launch_error("svc_syntax_error")
	t.ok(err:find("failed: ./test/lua/svc_syntax_error.lua:6: unexpected symbol near '='$"), err)
	t.ok(not err:find("cannot open", 1, true), "the templates missed before it are left out: " .. err)
	node_still_works()
end)

t.case("an error in the main chunk, an init function or start raises with it", function()
	local err = launch_error("svc_main_error")
	t.ok(err:find("svc_main_error.lua:2: svc_main_error: main chunk failure on purpose$"), err)
	err = launch_error("svc_init_error")
	t.ok(err:find("svc_init_error.lua:5: svc_init_error: init failure on purpose$"), err)
	err = launch_error("svc_start_error")
	t.ok(err:find("svc_start_error.lua:5: svc_start_error: start failure on purpose$"), err)
	node_still_works()
end)

t.case("a start that fails on a failed call raises with the remote error", function()
	local err = launch_error("svc_chain_start")
	t.ok(err:find("failed: ./test/lua/svc_echo.lua:%d+: svc_chain_start: handler failure on purpose$"), err)
	node_still_works()
end)

t.case("failed launches leave nothing in the launcher's list", function()
	local list = skynet.call(".launcher", "lua", "LIST")
	for addr, desc in pairs(list) do
		t.ok(not desc:find("svc_syntax_error", 1, true), "listed: " .. addr .. " " .. desc)
		t.ok(not desc:find("svc_start_error", 1, true), "listed: " .. addr .. " " .. desc)
		t.ok(not desc:find("svc_exit_in_start", 1, true), "listed: " .. addr .. " " .. desc)
	end
end)

t.case("newservice waits for start to return", function()
	local t0 = skynet.now()
	local svc = skynet.newservice("svc_slow_start")
	t.ok(skynet.now() - t0 >= 50, "returned before start finished")
	t.eq(skynet.call(svc, "lua", "ping"), "pong", "slow service answers")
end)

t.case("killing a service during its start makes newservice raise", function()
	local ok, err
	skynet.fork(function()
		ok, err = pcall(skynet.newservice, "svc_slow_start", skynet.self())
	end)
	t.ok(t.wait_marks(1, 40), "the service started")
	local addr = t.marks[1]:match("started (:%x+)")
	t.ok(addr, "address in the mark: " .. tostring(t.marks[1]))
	t.marks = {}
	skynet.kill(tonumber(addr:sub(2), 16))
	skynet.sleep(100)
	t.eq(ok, false, "newservice must raise")
	t.ok(tostring(err):find("newservice svc_slow_start failed: killed while starting", 1, true),
		"error text: " .. tostring(err))
	node_still_works()
end)

t.case("parallel newservice calls give distinct handles", function()
	local handles = {}
	local me = coroutine.running()
	local n = 0
	for i = 1, 20 do
		skynet.fork(function()
			handles[i] = skynet.newservice("svc_echo", i)
			n = n + 1
			if n == 20 then
				skynet.wakeup(me)
			end
		end)
	end
	skynet.wait(me)
	local seen = {}
	for i = 1, 20 do
		t.ok(not seen[handles[i]], "duplicate handle")
		seen[handles[i]] = true
		local _, arg = skynet.call(handles[i], "lua", "args")
		t.eq(arg, tostring(i), "argument of service " .. i)
	end
end)

t.case("skynet.launch starts a service without the launcher", function()
	local h = skynet.launch("snlua", "svc_echo raw")
	t.ok(h, "handle")
	-- launch does not wait for start, which installs the lua dispatch.
	t.quiesce()
	t.eq(skynet.call(h, "lua", "ping"), "pong", "answers")
	local _, arg = skynet.call(h, "lua", "args")
	t.eq(arg, "raw", "argument")
	skynet.kill(h)
end)

t.case("the standard services have their names", function()
	t.ok(skynet.localname(".launcher"), ".launcher")
	t.ok(skynet.localname(".service"), ".service")
	t.eq(skynet.localname(".no_such_name"), nil, "unknown name")
	t.eq(skynet.address(skynet.self()), string.format(":%08x", skynet.self()), "address format")
end)

t.start()
