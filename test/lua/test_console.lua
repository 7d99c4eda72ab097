-- service/debug_console.lua driven over TCP by clients in this service: the
-- output shapes (<CMD OK>/<CMD Error>, sorted key\tvalue lines), every
-- command, per-service timers, kill/exit removing services, bad commands and
-- addresses, the HTTP forms, many consoles at once and clients that vanish.
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"

local console, port
local OK <const> = "<CMD OK>"
local ERR <const> = "<CMD Error>"
-- After the address, when a service fails a request of the console.
local FAILED_REQUEST <const> = " failed the request: it raised an error, refused the request or "
	.. "exited (the node's log says which)"

---------------------------------------------------------------- client

local function connect()
	local c = assert(socket.open("127.0.0.1", port))
	t.eq(socket.readline(c), "Welcome to skynet console", "welcome line")
	return c
end

-- Sends one command line; returns the output lines (status excluded) and
-- the status line.
local function send(c, line)
	socket.write(c, line .. "\n")
	local out = {}
	while true do
		local l = socket.readline(c)
		if not l then
			local got = table.concat(out, "|")
			error(string.format("connection closed during %q after %q", line, got))
		end
		if l == OK or l == ERR then
			return out, l
		end
		out[#out + 1] = l
	end
end

-- Reads one command's output; returns it and the status line (nil when the
-- connection closed first).
local function read_answer(c)
	local out = {}
	while true do
		local l = socket.readline(c)
		if not l then
			return out, nil
		end
		if l == OK or l == ERR then
			return out, l
		end
		out[#out + 1] = l
	end
end

local shared -- one connection reused by most cases

local function cmd(line)
	shared = shared or connect()
	return send(shared, line)
end

local function ok(line)
	local out, status = cmd(line)
	t.eq(status, OK, string.format("%q: %s", line, table.concat(out, " | ")))
	return out
end

-- Expects <CMD Error>; with `text`, the output must contain it.
local function fails(line, text)
	local out, status = cmd(line)
	local all = table.concat(out, "\n")
	t.eq(status, ERR, string.format("%q: %s", line, all))
	if text then
		t.ok(all:find(text, 1, true), string.format("%q: want %q in %q", line, text, all))
	end
	return out
end

-- "key\tvalue" lines -> { key = value }; checks the keys come sorted.
local function kv(out, what)
	local map, prev = {}, nil
	for _, l in ipairs(out) do
		local k, v = l:match "^([^\t]*)\t(.*)$"
		t.ok(k, string.format("%s: not a key\\tvalue line (%q)", what, l))
		if prev then
			t.ok(prev < k, string.format("%s: keys not sorted (%q, %q)", what, prev, k))
		end
		map[k], prev = v, k
	end
	return map
end

local function parallel(n, f)
	local done, errors, token = 0, {}, {}
	for i = 1, n do
		skynet.fork(function()
			local okf, err = pcall(f, i)
			if not okf then
				errors[#errors + 1] = tostring(err)
			end
			done = done + 1
			if done == n then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
	return errors
end

local function bare(h) -- the address without the colon
	return skynet.address(h):sub(2)
end

local helper -- a svc_console_timers started through the console

---------------------------------------------------------------- cases

-- help lines: "<usage>  <what it does>", every description at one column,
-- up to the blank line before the note on skynet's commands skywheel lacks.
local function help_lines(out)
	local map, col, prev = {}, nil, nil
	for _, l in ipairs(out) do
		if l == "" then -- the main list ends; a note follows
			break
		end
		local usage, gap = l:match "^(%S[^\t]-%S?)(  +)%S"
		t.ok(usage and not usage:find("  ", 1, true), string.format("help line shape: %q", l))
		local name = usage:match "^%S+"
		local c = #usage + #gap
		col = col or c
		t.eq(c, col, "description column of " .. name)
		if prev then
			t.ok(prev < name, string.format("help not sorted (%q, %q)", prev, name))
		end
		map[name], prev = usage, name
	end
	return map, col
end

t.case("help: one aligned line per command", function()
	local help, col = help_lines(ok "help")
	for _, name in ipairs { "help", "list", "stat", "mem", "gc", "info", "kill", "start", "exit",
		"timers", "ping", "task", "logon", "logoff", "call", "inject", "netstat" } do
		t.ok(help[name], "help lists " .. name)
	end
	local widest = 0
	for _, usage in pairs(help) do
		widest = math.max(widest, #usage)
	end
	t.eq(col, widest + 2, "the column is the widest usage plus two spaces")
	t.eq(help.kill, "kill <addr>", "usage")
	t.ok(help_lines(ok "HELP").timers, "commands are case-insensitive")
	socket.write(shared, "help\r\n") -- telnet line ends
	local out, status = send(shared, "")
	t.eq(status, OK, "CRLF line")
	t.ok(#out > 10, "help printed")
end)

t.case("list and start", function()
	local list = kv(ok "list", "list")
	t.eq(list[skynet.address(console)], "snlua debug_console 127.0.0.1 0", "console in list")
	local out = ok "start svc_console_timers"
	t.eq(#out, 1, "one line")
	local addr, name = out[1]:match "^(:%x+)\t(.*)$"
	t.eq(name, "svc_console_timers", "start result")
	helper = tonumber(addr:sub(2), 16)
	t.eq(skynet.call(helper, "lua", "echo", "hi"), "hi", "started service answers")
	t.eq(kv(ok "list", "list")[addr], "snlua svc_console_timers", "listed")
	t.eq(ok("start svc_exit_in_start")[1], "Exit", "exit in start")
	fails("start", "Usage")
end)

t.case("a failed start: <CMD Error> and one line with the name and why", function()
	local out = fails("start nosuchservice")
	t.eq(#out, 1, "one line: " .. table.concat(out, " | "))
	t.ok(out[1]:find("Failed to start nosuchservice: no such service file", 1, true), out[1])
	t.ok(out[1]:find("service/nosuchservice.lua", 1, true), "says where it looked: " .. out[1])
	out = fails("start svc_init_error")
	t.eq(#out, 1, "one line: " .. table.concat(out, " | "))
	t.ok(out[1]:find("Failed to start svc_init_error: its start raised an error", 1, true), out[1])
end)

-- The demo's world and watchdog log an unknown command; the caller must see
-- an error, not a nil answer.
t.case("call: the demo's services refuse an unknown command", function()
	local game = require "svc_game_util"
	local g = game.start()
	for _, h in ipairs { g.world, g.watchdog } do
		t.same(fails("call " .. skynet.address(h) .. ' "nosuch"'),
			{ skynet.address(h) .. FAILED_REQUEST }, "unknown command")
	end
end)

t.case("stat, mem and gc", function()
	local addr = skynet.address(helper)
	local stat = kv(ok "stat", "stat")
	t.ok(stat[addr], "helper in stat")
	local items = "^cpu:[^\t]+\tmessage:%d+\tmqlen:%d+\ttask:%d+$"
	t.ok(stat[addr]:match(items), "stat items: " .. stat[addr])
	t.ok(kv(ok "stat 0", "stat 0")[addr], "stat without timeout")
	fails("stat soon", "Invalid timeout")
	local mem = kv(ok "mem", "mem")
	t.ok(mem[addr]:match "^%d+%.%d%d Kb %(snlua svc_console_timers%)$", "mem: " .. mem[addr])
	local gc = kv(ok "gc 100", "gc")
	t.ok(gc[addr]:match " Kb ", "gc: " .. gc[addr])
end)

t.case("timers per service and total", function()
	local addr = skynet.address(helper)
	t.eq(skynet.call(helper, "lua", "schedule", 5, 360000), 5, "scheduled")
	local tm = kv(ok "timers", "timers")
	t.eq(tm[addr], "5 (snlua svc_console_timers)", "helper timers")
	t.eq(tm[skynet.address(skynet.self())], "0 (snlua test_console)", "idle test service")
	t.eq(tm[skynet.address(console)], "0 (snlua debug_console 127.0.0.1 0)", "the console itself")
	t.ok(math.tointeger(tonumber(tm.total)) >= 5, "total " .. tostring(tm.total))
	t.eq(skynet.call(helper, "lua", "cancel", 2), 3, "cancelled two")
	t.eq(kv(ok("timers " .. addr), "timers addr")[addr], "3", "one service")
	t.eq(kv(ok("timers " .. bare(helper)), "timers bare")[addr], "3", "bare hex")
end)

t.case("debug passthrough: info task uniqtask killtask dbgcmd ping", function()
	local addr = skynet.address(helper)
	local info = kv(ok("info " .. addr), "info")
	t.eq(info.name, "svc_console_timers", "info name")
	t.eq(info.args, "0", "info without args")
	t.eq(kv(ok("info " .. addr .. " a 2"), "info").args, "2", "info args")
	local plain = skynet.newservice "svc_debugcmd" -- no info_func
	t.same(ok("info " .. skynet.address(plain)),
		{ "No info: the service has no info_func (or it returned nil)" }, "info without info_func")
	t.same(ok("dbgcmd " .. skynet.address(plain) .. " PAIR"), { "first", "QUIT" },
		"every value of a debug reply, one a line")
	t.same(ok("dbgcmd " .. skynet.address(plain) .. " HELLO x"), { "hello x" }, "one value")
	skynet.kill(plain)
	local task = ok("task " .. addr)
	t.ok(table.concat(task, "\n"):find("session:", 1, true), "task lists the timeouts")
	ok("uniqtask " .. addr)
	t.same(fails("killtask " .. addr .. " nosuchthread"),
		{ "Not found: no pending coroutine or session nosuchthread in " .. addr }, "killtask")
	fails("killtask " .. addr, "Usage")
	t.eq(#ok("dbgcmd " .. addr .. " PING"), 0, "dbgcmd PING")
	fails("dbgcmd " .. addr .. " NOSUCH")
	t.ok(ok("ping " .. addr)[1]:match "^%d+$", "ping elapsed cs")
	ok "ping .launcher"
	ok("ping " .. bare(helper))
	ok("ping :" .. string.upper(bare(helper)))
end)

t.case("call, trace, inject", function()
	local addr = skynet.address(helper)
	local r = kv(ok("call " .. addr .. ' "echo", 1, "two words"'), "call")
	t.eq(r["1"], "1", "first result")
	t.eq(r["2"], "two words", "second result")
	t.eq(r.n, "2", "count")
	fails("call " .. addr .. " )(")
	t.same(fails("call " .. addr .. ' "nosuch"'),
		{ addr .. FAILED_REQUEST }, "an error in the callee")
	ok("trace " .. addr .. " on")
	ok("trace " .. addr .. " lua off")
	ok("trace " .. addr)
	fails("trace " .. addr .. " lua maybe", "Invalid trace flag")
	local file = os.tmpname()
	local f = assert(io.open(file, "w"))
	f:write 'print("hits", hits)\n'
	f:close()
	local hits = skynet.call(helper, "lua", "hits")
	t.eq(ok("inject " .. addr .. " " .. file)[1], "hits\t" .. hits, "inject sees upvalues")
	f = assert(io.open(file, "w"))
	f:write 'error("on purpose")\n'
	f:close()
	fails("inject " .. addr .. " " .. file, "on purpose")
	os.remove(file)
	fails("inject " .. addr .. " " .. file, "Can't open")
	fails("debug " .. addr, "not available")
end)

t.case("trace ID: the spans the node kept of a trace", function()
	local tracing = require "skynet.tracing"
	local id
	local done = {}
	skynet.fork(function()
		id = tracing.begin(nil, nil, "console case")
		skynet.call(helper, "lua", "hits")
		skynet.wakeup(done)
	end)
	skynet.wait(done)
	-- the helper's span ends after its answer left, the fork's once it returned
	t.wait_until(function()
		return #tracing.spans(id) == 2
	end, 100)
	local out = ok("trace " .. id)
	t.eq(out[1], "trace " .. id .. ": 2 spans", "head line")
	t.ok(out[2]:find(" ms  ok    " .. skynet.address(helper), 1, true), "the helper's span: " .. out[2])
	t.ok(out[3]:find("console case", 1, true), "the caller's span: " .. out[3])
	fails("trace " .. string.rep("0", 32), "No span of trace")
end)

t.case("env, signal, netstat, service", function()
	ok "setenv console_test_key hello  world"
	t.eq(ok("getenv console_test_key")[1], "hello  world", "getenv")
	fails("setenv console_test_key again", "console_test_key")
	t.eq(#ok "getenv console_no_such_key", 0, "unset key")
	fails("setenv", "Usage")
	ok("signal " .. skynet.address(helper) .. " 1")
	fails("signal " .. skynet.address(helper) .. " x", "Invalid signal")
	local found = false
	for _, v in pairs(kv(ok "netstat", "netstat")) do
		local owner = "address:" .. skynet.address(console)
		if v:find("type:LISTEN", 1, true) and v:find(owner, 1, true) then
			found = true
		end
	end
	t.ok(found, "the console's listener in netstat")
	ok "service"
	ok "clearcache"
end)

t.case("logon, logoff and log", function()
	local addr = skynet.address(helper)
	fails("logon " .. addr, "logpath")
	local dir = t.tmpdir()
	ok("setenv logpath " .. dir)
	ok("logon " .. addr)
	skynet.call(helper, "lua", "echo", "logged")
	ok("logoff " .. addr)
	local path = string.format("%s/%08x.log", dir, helper)
	local f = assert(io.open(path))
	local text = f:read "a"
	f:close()
	os.remove(path)
	t.ok(text:match "^open time: ", "log opened: " .. text)
	t.ok(text:find("close time: ", 1, true), "log closed")
	local out = ok "log svc_console_timers"
	local other = tonumber(out[1]:match "^:(%x+)\tsvc_console_timers$", 16)
	t.ok(other, "log result " .. out[1])
	ok("kill " .. skynet.address(other))
	local lpath = string.format("%s/%08x.log", dir, other)
	t.ok(io.open(lpath), "LOGLAUNCH opened a log")
	out = fails("log nosuchservice")
	t.eq(#out, 1, "log: one line: " .. table.concat(out, " | "))
	t.ok(out[1]:find("Failed to start nosuchservice: no such service file", 1, true), out[1])
	os.remove(lpath)
	os.remove(dir)
end)

t.case("kill and exit remove services", function()
	local a = skynet.newservice "svc_console_timers"
	local b = skynet.newservice "svc_console_timers"
	skynet.call(a, "lua", "schedule", 3, 360000)
	local k = kv(ok("kill " .. skynet.address(a)), "kill")
	t.eq(k[skynet.address(a)], "snlua svc_console_timers", "kill result")
	t.eq(kv(ok "list", "list")[skynet.address(a)], nil, "killed service left the list")
	fails("ping " .. skynet.address(a), "No service at " .. skynet.address(a))
	local gone = "No service at " .. skynet.address(a) .. " (it has exited, or never existed)"
	t.same(fails("kill " .. skynet.address(a)), { gone }, "kill of a dead service")
	fails("kill " .. bare(a), gone)
	fails("kill :00fffff0", "No service at :00fffff0")
	t.eq(kv(ok "list", "list")[skynet.address(a)], nil, "still not listed")
	t.eq(kv(ok "timers", "timers")[skynet.address(a)], nil, "killed service has no timers line")
	t.eq(#ok("exit " .. skynet.address(b)), 0, "exit")
	t.quiesce()
	t.eq(kv(ok "list", "list")[skynet.address(b)], nil, "exited service left the list")
	fails("exit " .. skynet.address(b), "No service at " .. skynet.address(b))
end)

-- skynet's commands that need its jemalloc or its patched Lua.
t.case("skynet commands skywheel lacks: <CMD Error>, why, and what to use", function()
	local want = {
		cmem = "jemalloc", jmem = "jemalloc", dumpheap = "jemalloc", profactive = "jemalloc",
		shrtbl = "short string table",
	}
	for name, why in pairs(want) do
		local out = fails(name)
		t.eq(#out, 1, name .. ": one line")
		t.ok(out[1]:find(name .. ": not available in skywheel: ", 1, true), out[1])
		t.ok(out[1]:find(why, 1, true), out[1])
		t.ok(not out[1]:find("Invalid command", 1, true), out[1])
	end
	t.ok(fails("cmem")[1]:find("`mem`", 1, true), "cmem says to use mem")
	t.ok(fails("JMEM 1")[1]:find("not available", 1, true), "any case, with arguments")
	local help = table.concat(ok "help", "\n")
	for name in pairs(want) do
		t.ok(not help:find("\n" .. name .. " ", 1, true), name .. " is not in help's main list")
	end
	t.ok(help:find("not available in skywheel: cmem, dumpheap, jmem, profactive, shrtbl", 1, true),
		"help names them once: " .. help)
end)

t.case("bad commands and bad addresses", function()
	local out, status = cmd "nosuch command"
	t.same(out, { "Invalid command nosuch, type help for command list" }, "unknown command output")
	t.eq(status, ERR, "unknown command status")
	for _, l in ipairs(out) do
		t.ok(not l:find("nil", 1, true), "no nil in: " .. l)
	end
	fails("ping", "Missing address")
	fails("ping zz", "Invalid address zz")
	fails("ping :0", "Invalid address")
	fails("ping :12345678901", "Invalid address")
	fails("ping .nosuch", "Unknown name .nosuch")
	fails("ping :00fffff0", "No service at :00fffff0")
	fails("kill", "Missing address")
	for _, c in ipairs { "signal", "logoff", "timers", "task", "info", "trace" } do
		t.same(fails(c .. " :00fffff0"), { "No service at :00fffff0 (it has exited, or never existed)" },
			c .. " of a dead address")
	end
	fails("info :00fffff0")
	socket.write(shared, "\n  \t\n") -- blank lines print nothing
	socket.write(shared, "\255\244\255\253\6\r\n") -- telnet Ctrl-C: IAC IP, IAC DO TM
	t.eq(#ok "list" > 0, true, "still serving")
end)

t.case("HTTP forms close the connection", function()
	local function http(request)
		local c = assert(socket.open("127.0.0.1", port))
		socket.write(c, request)
		local text = socket.readall(c)
		socket.close(c)
		return text
	end
	local text = http "GET /ping/.launcher HTTP/1.1\r\nHost: x\r\n\r\n"
	t.ok(text:match "^Welcome to skynet console\n%d+\n<CMD OK>\n$", "GET: " .. tostring(text))
	text = http "GET /ping%20.launcher HTTP/1.0\r\n\r\n"
	t.ok(text:match "\n<CMD OK>\n$", "GET with %20: " .. tostring(text))
	text = http "GET /nosuch HTTP/1.0\r\n\r\n"
	t.ok(text:match "Invalid command.*\n<CMD Error>\n$", "GET bad: " .. tostring(text))
	text = http "GET / HTTP/1.0\r\n\r\n"
	t.ok(text:find("\ntimers [addr]  ", 1, true), "GET / is help")
	local body = "ping .launcher\nlist\n"
	text = http("POST / HTTP/1.1\r\nContent-Length: " .. #body .. "\r\n\r\n" .. body)
	local _, n = text:gsub("<CMD OK>", "")
	t.eq(n, 2, "POST runs each body line")
	text = http "GET /list\n"
	t.ok(text:match "\n<CMD OK>\n$", "HTTP/0.9 GET")
end)

t.case("quit, many consoles, clients vanishing", function()
	local c = connect()
	local _, status = send(c, "quit")
	t.eq(status, OK, "quit")
	t.eq(socket.readline(c), false, "closed after quit")
	socket.close(c)
	local errors = parallel(20, function(i)
		local cc = connect()
		for _ = 1, 3 do
			local out, st = send(cc, i % 2 == 0 and "list" or "stat")
			assert(st == OK and #out > 0, "console " .. i)
		end
		socket.close(cc)
	end)
	t.eq(#errors, 0, "errors: " .. table.concat(errors, "; "))
	-- mid-line, mid-command, and while a command is blocked
	c = assert(socket.open("127.0.0.1", port))
	socket.write(c, "sta")
	socket.close(c)
	c = assert(socket.open("127.0.0.1", port))
	socket.write(c, "stat\nmem\n")
	socket.close(c)
	c = connect()
	socket.write(c, "call " .. skynet.address(helper) .. ' "park"\n')
	t.quiesce()
	socket.close(c)
	t.eq(skynet.call(helper, "lua", "unpark"), true, "parked command released")
	t.quiesce()
	t.ok(#ok "list" > 0, "console still serving")
	c = connect()
	t.eq(select(2, send(c, "help")), OK, "new connection works")
	socket.close(c)
end)

t.case("a flood of lines on one connection: others are served between batches", function()
	local a, b = connect(), connect()
	local before = skynet.call(console, "lua", "STATS")
	local n = 990 -- under the per-second input limit
	socket.write(a, ("nosuchcmd\n"):rep(n))
	socket.write(b, "nosuchcmd\n")
	t.eq(select(2, read_answer(b)), ERR, "the other connection's answer")
	for i = 1, n do
		t.eq(select(2, read_answer(a)), ERR, "flood answer " .. i)
	end
	local after = skynet.call(console, "lua", "STATS")
	-- 16 lines a turn: the flood was served in about n / 16 turns, each
	-- ending in a yield that lets the other connections in.
	t.ok(after.yields - before.yields >= n // 16 - 1, string.format(
		"turns of the flood: %d yields for %d lines", after.yields - before.yields, n))
	socket.close(a)
	socket.close(b)
end)

t.case("a connection past the input limit is closed; the others keep working", function()
	local a, b = connect(), connect()
	socket.write(a, ("\n"):rep(200000))
	t.eq(select(2, send(b, "nosuchcmd")), ERR, "answered during the flood")
	t.eq(socket.read(a), false, "the flooder is closed")
	t.ok(skynet.call(console, "lua", "STATS").closed >= 1, "closed at the input limit")
	socket.close(a)
	t.eq(select(2, send(b, "list")), OK, "the other connection still works")
	socket.close(b)
end)

t.case("default ip and port 0", function()
	local other = skynet.newservice("debug_console", 0)
	local ip, p = skynet.call(other, "lua", "ADDRESS")
	t.eq(ip, "127.0.0.1", "default ip")
	t.ok(p > 0 and p ~= port, "own free port")
	local c = assert(socket.open(ip, p))
	t.eq(socket.readline(c), "Welcome to skynet console", "second console")
	socket.close(c)
	skynet.kill(other)
	t.raises("newservice debug_console failed: debug_console: bad port (notaport)", skynet.newservice,
		"debug_console", "127.0.0.1", "notaport")
end)

t.start(nil, function()
	console = skynet.newservice("debug_console", "127.0.0.1", 0)
	local ip
	ip, port = skynet.call(console, "lua", "ADDRESS")
	assert(ip == "127.0.0.1" and port > 0, "console address")
end)
