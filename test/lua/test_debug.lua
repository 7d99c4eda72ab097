-- The debug protocol every Lua service answers, and the launcher's views
-- built on it.
local skynet = require "skynet"
local t = require "testlib"

local echo

t.case("MEM is the Lua heap in KB", function()
	local kb = skynet.call(echo, "debug", "MEM")
	t.eq(math.type(kb), "float", "MEM type")
	t.ok(kb > 1 and kb < 64 * 1024, "MEM value: " .. kb)
	local before = skynet.call(skynet.self(), "debug", "MEM")
	t.ok(before > 1, "own MEM: " .. before)
end)

t.case("GC is a send; the service keeps answering", function()
	skynet.send(echo, "debug", "GC")
	t.ok(skynet.call(echo, "debug", "MEM") > 0, "MEM after GC")
end)

t.case("STAT reports task, mqlen, cpu and message", function()
	for _ = 1, 5 do
		skynet.call(echo, "lua", "ping")
	end
	local st = skynet.call(echo, "debug", "STAT")
	t.eq(type(st), "table", "STAT type")
	t.eq(type(st.task), "number", "task")
	t.eq(type(st.mqlen), "number", "mqlen")
	t.eq(type(st.cpu), "number", "cpu")
	t.eq(type(st.message), "number", "message")
	t.ok(st.message >= 6, "messages handled: " .. st.message)
	t.ok(st.cpu >= 0, "cpu")
end)

t.case("STAT task counts pending sessions", function()
	skynet.fork(function()
		pcall(skynet.call, skynet.self(), "lua", "park")
	end)
	t.quiesce()
	local st = skynet.call(skynet.self(), "debug", "STAT")
	t.ok(st.task >= 1, "pending sessions: " .. st.task)
end)

t.case("PING gives an empty reply", function()
	t.eq(select("#", skynet.call(echo, "debug", "PING")), 0, "reply values")
end)

t.case("INFO calls the info_func with the arguments", function()
	local info = skynet.call(echo, "debug", "INFO", "a", 2)
	t.eq(type(info), "table", "INFO result")
	t.eq(info.service, "svc_echo", "info field")
	t.eq(info.args[1], "a", "1st argument")
	t.eq(info.args[2], 2, "2nd argument")
	local other = skynet.newservice("svc_debugcmd")
	t.eq(skynet.call(other, "debug", "INFO"), nil, "no info_func")
end)

t.case("SUPPORT tells whether a protocol has a dispatch function", function()
	t.eq(skynet.call(echo, "debug", "SUPPORT", "lua"), true, "lua")
	t.eq(skynet.call(echo, "debug", "SUPPORT", "no_such_protocol"), false, "unknown protocol")
end)

t.case("TASK returns a table of pending coroutines", function()
	local tasks = skynet.call(skynet.self(), "debug", "TASK")
	t.eq(type(tasks), "table", "TASK result")
end)

t.case("RUN injects a chunk and replies (ok, output)", function()
	local ok, out = skynet.call(echo, "debug", "RUN", "print('injected', 1 + 1)", "inject_test")
	t.eq(ok, true, "RUN ok")
	t.ok(tostring(out):find("injected", 1, true), "output: " .. tostring(out))
	local bad_ok = skynet.call(echo, "debug", "RUN", "error('inside injected code')", "inject_bad")
	t.eq(bad_ok, false, "RUN of failing code")
	t.eq(skynet.call(echo, "lua", "ping"), "pong", "service fine after RUN")
end)

t.case("an unknown debug command fails the call", function()
	t.raises("call failed", skynet.call, echo, "debug", "NO_SUCH_DEBUG_COMMAND")
	t.eq(skynet.call(echo, "debug", "MEM") > 0, true, "service keeps answering")
end)

t.case("reg_debugcmd adds a command", function()
	local svc = skynet.newservice("svc_debugcmd")
	t.eq(skynet.call(svc, "debug", "HELLO", "you"), "hello you", "custom command")
end)

t.case("the launcher's MEM and STAT views", function()
	local mem = skynet.call(".launcher", "lua", "MEM")
	local line = mem[skynet.address(echo)]
	t.ok(line, "launcher MEM lists the service")
	t.ok(line:match("^%d+%.%d%d Kb %(snlua svc_echo"), "MEM line: " .. line)
	local stat = skynet.call(".launcher", "lua", "STAT")
	local st = stat[skynet.address(echo)]
	t.eq(type(st), "table", "launcher STAT entry")
	t.eq(type(st.message), "number", "STAT message")
end)

t.start({
	park = function()
		skynet.wait()
	end,
}, function()
	echo = skynet.newservice("svc_echo")
end)
