-- debug_console: a telnet-style console to inspect and steer the node.
-- newservice("debug_console", [ip,] port) listens on ip
-- (default 127.0.0.1) and logs "Start debug console at ip:port". Port 0
-- takes a free port; the log line and the `lua` request ADDRESS (replies
-- ip, port) tell which. The `lua` request STATS replies { yields = batches
-- of lines that ended in a yield, closed = connections closed at the input
-- limit } (for tests).
--
-- Per connection: "Welcome to skynet console", then one command per line
-- (LF, an optional CR is dropped), split on whitespace; the first word names
-- the command (case-insensitive). Output lines are the tab-joined tostring of
-- their values. A string result is printed as is, a table result as sorted
-- "key\tvalue" lines (a table value is flattened to sorted "k:v" items
-- joined by tabs), then "<CMD OK>". An error prints its message, then
-- "<CMD Error>". An unknown command prints "Invalid command <word>, type help
-- for command list", then "<CMD Error>"; skynet's commands that skywheel
-- lacks (MISSING: cmem, jmem, dumpheap, profactive, shrtbl) print "<name>:
-- not available in skywheel: <why>" instead. `help` prints one line per
-- command, sorted: its usage padded to the widest usage, then what it does;
-- then a blank line and one naming the MISSING commands. A command on an
-- address with no service behind it fails with "No service at :addr ...",
-- one whose request the service fails (an error reply has no text) with
-- ":addr failed the request: ..."; a failed `start` or
-- `log` with "Failed to start <name>: <why>". `info` says so when the
-- service has no info to give.
-- A line "GET /cmd/arg HTTP/1.x" runs the path (slashes turned into
-- spaces, %XX decoded) as a command; "POST ..." runs each line of the body.
-- Either way the connection closes after the output, which is the console
-- output itself (no HTTP status line): `curl --http0.9 host:port/list`.
--
-- Addresses: ":hex", ".name", or bare hex (combined with the local harbor
-- id). Each connection runs in its own coroutine, its commands one after
-- another; a command that blocks (a call to a stuck service) blocks only
-- its own connection.
--
-- Floods: a connection is served BATCH_LINES lines per turn, then yields, so
-- a flood of lines on one connection delays the others by one batch at
-- most. A connection sending more than RATE_LINES lines within one second
-- (of the node's clock) is closed with a log line, as is one with more than
-- LINE_LIMIT bytes of unread input. A command's output leaves in one write.
-- The lines a connection can cause (closed at the limit, failed) go through
-- one skynet.loglimit limiter: at most 10 a second, then a count.
local skynet = require "skynet"
local socket = require "skynet.socket"
local core = require "skynet.core"
local driver = require "skynet.socketdriver"
local loglimit = require "skynet.loglimit"
local top = require "skynet.top"
require "skynet.manager"

local DEFAULT_IP <const> = "127.0.0.1"
local DEFAULT_TIMEOUT <const> = 300 -- cs, for stat/mem/gc/timers
local LINE_LIMIT <const> = 1024 * 1024 -- unread bytes before a client is dropped
local MAX_DEPTH <const> = 3 -- nesting shown when a table value is flattened
local BATCH_LINES <const> = 16 -- lines served per turn before the other connections' turn
local RATE_LINES <const> = 1000 -- input lines per second beyond which a connection is closed

local listen_ip, listen_port
local COMMAND = {} -- name -> { fn = f, usage = text, help = text, raw = bool }

-- skynet's commands that need what skywheel does not have: each answers
-- "<CMD Error>" with why and what to use instead, not "Invalid command";
-- help names them after its main list.
local JEMALLOC <const> = "skywheel uses the system allocator, not skynet's jemalloc: use `mem` "
	.. "for the Lua heaps, and the metrics' process_resident_memory_bytes (docs/metrics.md) for "
	.. "the process"
local MISSING <const> = {
	cmem = "it reads skynet's jemalloc statistics of C memory per service; " .. JEMALLOC,
	jmem = "it prints skynet's jemalloc statistics; " .. JEMALLOC,
	dumpheap = "it dumps skynet's jemalloc heap profile; " .. JEMALLOC,
	profactive = "it switches skynet's jemalloc heap profiling; " .. JEMALLOC,
	shrtbl = "it reports the shared short string table of skynet's patched Lua; skywheel runs "
		.. "Debian's stock Lua 5.4, which has none: use `mem` for the Lua heaps",
}
local QUIT <const> = {} -- a command's result that closes the connection after the output

---------------------------------------------------------------- output

-- Numbers first (numerically), then everything else by tostring.
local function key_less(a, b)
	local na, nb = type(a) == "number", type(b) == "number"
	if na ~= nb then
		return na
	end
	if na then
		return a < b
	end
	return tostring(a) < tostring(b)
end

local function sorted_keys(t)
	local keys = {}
	for k in pairs(t) do
		keys[#keys + 1] = k
	end
	table.sort(keys, key_less)
	return keys
end

-- A table value as "k:v" items; nested tables as "{k:v k:v}".
local function flatten(v, sep, depth)
	if type(v) ~= "table" then
		return tostring(v)
	end
	if depth > MAX_DEPTH then
		return tostring(v)
	end
	local items = {}
	for _, k in ipairs(sorted_keys(v)) do
		local x = v[k]
		if type(x) == "table" then
			x = "{" .. flatten(x, " ", depth + 1) .. "}"
		end
		items[#items + 1] = tostring(k) .. ":" .. tostring(x)
	end
	return table.concat(items, sep)
end

local function dump(print, result)
	if type(result) == "table" then
		for _, k in ipairs(sorted_keys(result)) do
			print(k, flatten(result[k], "\t", 1))
		end
	elseif result ~= nil then
		print(result)
	end
end

-- print(...) collects one output line; print.flush() sends what was
-- collected in one write (so a command's output and its status line leave
-- in one segment instead of waiting on each other's ACK).
local function printer(fd)
	local out, n = {}, 0
	local p = setmetatable({}, {
		__call = function(_, ...)
			local k = select("#", ...)
			local t = {}
			for i = 1, k do
				t[i] = tostring((select(i, ...)))
			end
			n = n + 1
			out[n] = table.concat(t, "\t") .. "\n"
		end,
	})
	function p.flush()
		if n > 0 then
			socket.write(fd, table.concat(out, "", 1, n))
			out, n = {}, 0
		end
	end
	return p
end

---------------------------------------------------------------- arguments

local function fail(fmt, ...)
	error(string.format(fmt, ...), 0)
end

-- ":hex", ".name" or bare hex -> handle; raises on anything else.
local function to_address(s)
	if s == nil or s == "" then
		fail("Missing address")
	end
	local h
	local first = s:sub(1, 1)
	if first == "." then
		h = skynet.localname(s)
		if h == nil then
			fail("Unknown name %s", s)
		end
		return h
	end
	local hex = first == ":" and s:match "^:(%x+)$" or s:match "^(%x+)$"
	if hex and #hex:gsub("^0+", "") <= 8 then
		h = tonumber(hex, 16)
		if first ~= ":" and h <= 0xffffff then
			h = h | (skynet.self() & 0xff000000)
		end
	end
	if h == nil or h == 0 then
		fail("Invalid address %s", s)
	end
	return h
end

local function to_timeout(ti)
	if ti == nil then
		return DEFAULT_TIMEOUT
	end
	local n = math.tointeger(tonumber(ti))
	if n == nil then
		fail("Invalid timeout %s", ti)
	end
	if n <= 0 then
		return nil -- no limit
	end
	return n
end

-- Integer-looking words become integers (sessions, counts); others stay.
local function to_values(...)
	local t = table.pack(...)
	for i = 1, t.n do
		t[i] = math.tointeger(tonumber(t[i])) or t[i]
	end
	return table.unpack(t, 1, t.n)
end

-- The text after the first n words of line.
local function rest_of(line, n)
	local pos = 1
	for _ = 1, n do
		local _, e = line:find("^%s*%S+", pos)
		if e == nil then
			return ""
		end
		pos = e + 1
	end
	return (line:sub(pos):match "^%s*(.-)%s*$")
end

local function need_logpath()
	if skynet.getenv "logpath" == nil then
		fail("Config logpath is not set")
	end
end

---------------------------------------------------------------- commands

-- help is "<usage>: <what it does>".
local function def(name, help, fn, raw)
	local usage, text = help:match "^(.-): (.*)$"
	assert(usage and usage:sub(1, #name) == name, help)
	COMMAND[name] = { fn = fn, usage = usage, help = text, raw = raw }
end

local function launcher(...)
	return skynet.call(".launcher", "lua", ...)
end

local function no_service(h)
	fail("No service at %s (it has exited, or never existed)", skynet.address(h))
end

-- skynet.call, its failures said with the address. An error reply carries
-- no text: the callee's message (an error it raised, the command it
-- refused) is in the node's log.
local function call_service(h, proto, ...)
	local r = table.pack(pcall(skynet.call, h, proto, ...))
	if r[1] then
		return table.unpack(r, 2, r.n)
	end
	local err = tostring(r[2])
	if err:find("call to invalid address", 1, true) then
		no_service(h)
	elseif err:find("call failed", 1, true) then
		fail("%s failed the request: it raised an error, refused the request or exited "
			.. "(the node's log says which)", skynet.address(h))
	end
	error(r[2], 0)
end

-- A debug-protocol request's results, packed (n may be 0).
local function debug_call(addr, ...)
	return table.pack(call_service(to_address(addr), "debug", ...))
end

-- Results of a call shown one value a line (a lone table as key\tvalue
-- lines); nothing at all for no values.
local function values(r)
	if r.n <= 1 then
		return r[1]
	end
	local lines = {}
	for i = 1, r.n do
		lines[i] = flatten(r[i], " ", 1)
	end
	return table.concat(lines, "\n")
end

-- True if a service lives at h. A debug PING sent without a session gets no
-- answer (a Lua service drops the reply, C services ignore the protocol),
-- while a send to a handle with no service behind it fails at once.
local function is_alive(h)
	return skynet.send(h, "debug", "PING") ~= nil
end

local function need_alive(h)
	if not is_alive(h) then
		no_service(h)
	end
	return h
end

def("help", "help: the commands and what they do", function()
	local names, width = {}, 0
	for name, c in pairs(COMMAND) do
		names[#names + 1] = name
		width = math.max(width, #c.usage)
	end
	table.sort(names)
	local lines = {}
	for i, name in ipairs(names) do
		local c = COMMAND[name]
		lines[i] = string.format("%-" .. width .. "s  %s", c.usage, c.help)
	end
	local missing = sorted_keys(MISSING)
	lines[#lines + 1] = ""
	lines[#lines + 1] = "not available in skywheel: " .. table.concat(missing, ", ")
		.. " (skynet's; each says why)"
	return table.concat(lines, "\n")
end)

def("list", "list: the Lua services the launcher knows", function()
	return launcher "LIST"
end)

def("stat", "stat [cs]: task/mqlen/cpu/message of each service", function(ti)
	return launcher("STAT", to_timeout(ti))
end)

def("mem", "mem [cs]: Lua heap of each service", function(ti)
	return launcher("MEM", to_timeout(ti))
end)

def("gc", "gc [cs]: full collection in each service, then mem", function(ti)
	return launcher("GC", to_timeout(ti))
end)

def("service", "service: the unique services (service_mgr)", function()
	local list, err = skynet.call(".service", "lua", "LIST")
	if list == nil then
		fail("%s", tostring(err))
	end
	return list
end)

-- Why the launch of service name failed. A failed launch tells its caller
-- no reason (the service logs it), so the service's file is looked for here
-- as the loader does, along the luaservice templates.
local function why_not_started(name)
	local tried = {}
	for template in (skynet.getenv "luaservice" or ""):gmatch "[^;]+" do
		local path = template:gsub("%?", function()
			return name
		end)
		local f = io.open(path, "rb")
		if f then
			f:close()
			local _, err = loadfile(path, "bt", {})
			if err then
				return "it does not compile: " .. err
			end
			return "its start raised an error (the node's log says which)"
		end
		tried[#tried + 1] = path
	end
	return "no such service file (looked for " .. table.concat(tried, ", ") .. ")"
end

local function start_failed(name)
	fail("Failed to start %s: %s", name, why_not_started(name))
end

-- A service that calls skynet.exit in its start function is not a failure:
-- newservice returns nil, shown as "Exit".
def("start", "start <name> [args...]: newservice; prints its address", function(name, ...)
	if name == nil then
		fail("Usage: start <service> [args...]")
	end
	local ok, addr = pcall(skynet.newservice, name, ...)
	if not ok then
		start_failed(name)
	elseif addr == nil then
		return "Exit"
	end
	return { [skynet.address(addr)] = name }
end)

def("log", "log <name> [args...]: start, with its message log (needs logpath)", function(name, ...)
	if name == nil then
		fail("Usage: log <service> [args...]")
	end
	need_logpath()
	local ok, addr = pcall(launcher, "LOGLAUNCH", "snlua", name, ...)
	if not ok then
		start_failed(name)
	elseif addr == nil then
		return "Exit"
	end
	return { [skynet.address(addr)] = name }
end)

def("snax", "snax <name> [args...]: snax.newservice (when snax is installed)", function(name, ...)
	local ok, snax = pcall(require, "skynet.snax")
	if not ok then
		fail("snax is not available")
	end
	if name == nil then
		fail("Usage: snax <service> [args...]")
	end
	local started, s = pcall(snax.newservice, name, ...)
	if not started then
		fail("Failed to start %s: %s", name, tostring(s))
	end
	return { [skynet.address(s.handle)] = name }
end)

-- A service the launcher did not start (the logger, a C service launched by
-- hand) dies too; the launcher has no name for it.
def("kill", "kill <addr>: kill a service now", function(addr)
	local h = need_alive(to_address(addr))
	local r = launcher("KILL", h)
	for k, v in pairs(r) do
		if v == "nil" then
			r[k] = "killed (not started by the launcher)"
		end
	end
	return r
end)

def("exit", "exit <addr>: ask a service to call skynet.exit", function(addr)
	local h = to_address(addr)
	if not skynet.send(h, "debug", "EXIT") then
		no_service(h)
	end
end)

-- The debug INFO request answers nil both when the service installed no
-- info function and when its function returned nil.
def("info", "info <addr> [args...]: what the service's info_func returns", function(addr, ...)
	local r = debug_call(addr, "INFO", to_values(...))
	if r.n == 1 and r[1] == nil then
		return "No info: the service has no info_func (or it returned nil)"
	end
	return values(r)
end)

def("task", "task <addr> [session]: tracebacks of the pending sessions", function(addr, session)
	return values(debug_call(addr, "TASK", to_values(session)))
end)

def("uniqtask", "uniqtask <addr>: pending sessions grouped by traceback", function(addr)
	return values(debug_call(addr, "UNIQTASK"))
end)

def("killtask", "killtask <addr> <co>: kill a pending coroutine", function(addr, name)
	if name == nil then
		fail("Usage: killtask <address> <name>")
	end
	local r = debug_call(addr, "KILLTASK", name)
	if r[1] == "Not found" then
		fail("Not found: no pending coroutine or session %s in %s", name, addr)
	end
	return values(r)
end)

def("dbgcmd", "dbgcmd <addr> <CMD> [args...]: any debug-protocol command", function(addr, cmd, ...)
	if cmd == nil then
		fail("Usage: dbgcmd <address> <cmd> [args...]")
	end
	return values(debug_call(addr, cmd, to_values(...)))
end)

def("ping", "ping <addr>: round trip to a service, in cs", function(addr)
	local h = to_address(addr)
	local t0 = skynet.now()
	call_service(h, "debug", "PING")
	return tostring(skynet.now() - t0)
end)

def("call", "call <addr> <expr, ...>: lua call with the evaluated arguments", function(line, addr)
	local h = to_address(addr)
	local expr = rest_of(line, 2)
	local f, err = load("return " .. expr, "=(console)", "t", {})
	if f == nil then
		fail("%s", err)
	end
	return table.pack(call_service(h, "lua", f()))
end, true)

local TRACE_FLAG <const> = { on = true, off = false }

local TRACE_HELP <const> = "trace <addr> [proto] [on|off] | trace <ID>: request tracing of a "
	.. "protocol; the spans this node kept of trace ID (32 hex digits: start, duration, outcome, service)"

def("trace", TRACE_HELP, function(addr, a, b)
	if a == nil and type(addr) == "string" and #addr == 32 and addr:match "^%x+$" then
		return require("skynet.tracing").report(addr) or fail("No span of trace %s on this node", addr)
	end
	local h = to_address(addr)
	local proto, flag = a, b
	if b == nil and (a == nil or TRACE_FLAG[a] ~= nil) then
		proto, flag = nil, a
	end
	if flag ~= nil and TRACE_FLAG[flag] == nil then
		fail("Invalid trace flag %s (on or off)", flag)
	end
	if proto then
		call_service(h, "debug", "TRACELOG", proto, TRACE_FLAG[flag])
	else
		call_service(h, "debug", "TRACELOG", TRACE_FLAG[flag])
	end
end)

def("inject", "inject <addr> <file.lua>: run the file inside a service", function(addr, filename)
	local h = to_address(addr)
	if filename == nil then
		fail("Usage: inject <address> <file>")
	end
	local f, err = io.open(filename, "rb")
	if f == nil then
		fail("Can't open %s", tostring(err))
	end
	local source = f:read "a"
	f:close()
	local ok, output = call_service(h, "debug", "RUN", source, filename)
	if not ok then
		fail("%s", tostring(output))
	end
	return output
end)

def("debug", "debug <addr>: interactive debugger (not available)", function()
	fail("The interactive debugger is not available in this node")
end)

def("logon", "logon <addr>: log what a service receives (needs logpath)", function(addr)
	need_logpath()
	core.command("LOGON", skynet.address(need_alive(to_address(addr))))
end)

def("logoff", "logoff <addr>: stop that log", function(addr)
	core.command("LOGOFF", skynet.address(need_alive(to_address(addr))))
end)

def("signal", "signal <addr> [n]: signal 0 breaks a loop, 1 logs memory", function(addr, n)
	local h = need_alive(to_address(addr))
	local sig = n and math.tointeger(tonumber(n))
	if n and sig == nil then
		fail("Invalid signal %s", n)
	end
	core.command("SIGNAL", skynet.address(h) .. " " .. tostring(sig or 0))
end)

def("getenv", "getenv <key>: an env value", function(key)
	if key == nil then
		fail("Usage: getenv <key>")
	end
	return skynet.getenv(key)
end)

def("setenv", "setenv <key> <value>: set an env key not set yet", function(line, key)
	local value = rest_of(line, 2)
	if key == nil or value == "" then
		fail("Usage: setenv <key> <value>")
	end
	skynet.setenv(key, value)
end, true)

def("clearcache", "clearcache: forget the cached Lua chunks", function()
	local ok, codecache = pcall(require, "skynet.codecache")
	if not ok then
		fail("The code cache can't be cleared in this node")
	end
	codecache.clear()
end)

def("netstat", "netstat: the open sockets and their counters", function()
	local result = {}
	for _, info in ipairs(socket.netstat()) do
		info.address = skynet.address(info.address)
		result[info.id] = info
		info.id = nil
	end
	return result
end)

-- Pending C timers of each Lua service (debug TIMERS), and the node total.
local function timers_all(ti)
	local list = launcher "LIST"
	local result = {}
	local self = skynet.address(skynet.self())
	local req = skynet.request()
	for addr, desc in pairs(list) do
		if addr == self then -- counted here: the select below adds a timer of its own
			result[addr] = string.format("%d (%s)", core.intcommand("STAT", "timers"), desc)
		else
			result[addr] = "TIMEOUT (" .. desc .. ")"
			req:add { addr, "debug", "TIMERS" }
		end
	end
	for r, resp in req:select(ti) do
		local addr = r[1]
		if resp then
			result[addr] = string.format("%d (%s)", resp[1], list[addr])
		else
			result[addr] = "ERROR (" .. list[addr] .. ")"
		end
	end
	result.total = core.intcommand("STAT", "timers_total")
	return result
end

def("timers", "timers [addr]: pending timers per service, and the node total", function(addr)
	if addr == nil then
		return timers_all(DEFAULT_TIMEOUT)
	end
	local h = to_address(addr)
	return { [skynet.address(h)] = call_service(h, "debug", "TIMERS") }
end)

def("top", "top [n] [sort]: the n (20) busiest services by cpu, msg, queue, mem, timers or address, "
	.. "with budget states, the workers and the timer lag", function(n, sort)
	local count = n and math.tointeger(tonumber(n))
	if n ~= nil and (count == nil or count < 1) then
		fail("top: bad count (%s): a whole number from 1", n)
	end
	local ok, lines = pcall(top.text, top.snapshot(), count, sort)
	if not ok then
		fail("%s", lines)
	end
	return table.concat(lines, "\n")
end)

def("reminders", "reminders: durable reminders: counts, next due, dead letters, store health", function()
	local addr = skynet.localname ".reminder"
	if addr == nil then
		fail "No reminder service on this node (set reminder_store in the config)"
	end
	local ok, s = skynet.call(addr, "lua", "stats")
	if not ok then
		fail("reminders: %s", tostring(s))
	end
	local r = {
		store = string.format("%s %s (last operation %.2f ms)", s.store, s.store_ok and "ok" or "FAILING",
			s.store_ms),
		pending = s.pending, dead = s.dead, near = s.near, inflight = s.inflight, queued = s.queued,
		next_due = s.next_due and os.date("!%Y-%m-%d %H:%M:%S UTC", math.floor(s.next_due)) or "none",
		counters = string.format("sets=%d cancels=%d fires=%d acked=%d retries=%d dead=%d misfired=%d "
			.. "late_max_ms=%.1f store_errors=%d", s.sets, s.cancels, s.fires, s.acked, s.retries,
			s.dead_total, s.misfired, s.late_max_ms, s.store_errors),
	}
	if s.store_error then
		r.store_error = s.store_error
	end
	for i, d in ipairs(s.dead_letters or {}) do
		r["dead " .. i] = string.format("%s due %s to %s: %s", d.key,
			os.date("!%Y-%m-%d %H:%M:%S", math.floor(d.due)), d.target, tostring(d.error))
	end
	return r
end)

def("quit", "quit: close this connection", function()
	return QUIT
end)

---------------------------------------------------------------- connections

local function split(line)
	local words = {}
	for w in line:gmatch "%S+" do
		words[#words + 1] = w
	end
	return words
end

-- Runs one command line; returns true when the connection should close.
local function run_command(line, print)
	local words = split(line)
	if words[1] == nil then
		return false
	end
	local name = words[1]:lower()
	local c = COMMAND[name]
	if c == nil then
		if MISSING[name] then
			print(string.format("%s: not available in skywheel: %s", name, MISSING[name]))
		else
			print(string.format("Invalid command %s, type help for command list", words[1]))
		end
		print "<CMD Error>"
		return false
	end
	local ok, result
	if c.raw then
		ok, result = pcall(c.fn, line, table.unpack(words, 2))
	else
		ok, result = pcall(c.fn, table.unpack(words, 2))
	end
	if ok then
		if result ~= QUIT then
			dump(print, result)
		end
		print "<CMD OK>"
	else
		print(result)
		print "<CMD Error>"
	end
	return ok and result == QUIT
end

local function url_decode(s)
	return (s:gsub("%%(%x%x)", function(hex)
		return string.char(tonumber(hex, 16))
	end))
end

-- Reads the header lines of an HTTP request; returns Content-Length (0 when
-- absent) and whether the header was complete.
local function read_header(fd)
	local length = 0
	while true do
		local line = socket.readline(fd)
		if not line then
			return length, false
		end
		line = line:gsub("\r$", "")
		if line == "" then
			return length, true
		end
		local n = line:lower():match "^content%-length:%s*(%d+)"
		if n then
			length = math.tointeger(tonumber(n)) or 0
		end
	end
end

-- One per connection: call it before each input line. It yields to the
-- other connections every BATCH_LINES lines, and returns false (after a log
-- line) once the connection sent more than RATE_LINES lines within one
-- second: such a connection is closed.
local stats = { yields = 0, closed = 0 } -- batches ended by a yield, connections closed at the limit
local log = loglimit.new() -- the lines connections can cause

local function input_limit(fd, addr)
	local lines, batch, second = 0, 0, skynet.now() // 100
	return function()
		local now = skynet.now() // 100
		if now ~= second then
			second, lines = now, 0
		end
		lines = lines + 1
		if lines > RATE_LINES then
			stats.closed = stats.closed + 1
			log("debug_console: %s sent more than %d lines within one second; closing it",
				addr or ("fd " .. fd), RATE_LINES)
			return false
		end
		batch = batch + 1
		if batch >= BATCH_LINES then
			batch = 0
			stats.yields = stats.yields + 1
			skynet.yield()
		end
		return true
	end
end

local function serve_http(fd, first, print)
	local method, target, version = first:match "^(%u+)%s+(%S+)%s*(.*)$"
	if method == nil then
		return
	end
	local length, complete = 0, true
	if version ~= "" then -- "HTTP/1.x": a header follows (none for HTTP/0.9)
		length, complete = read_header(fd)
	end
	local text
	if method == "GET" then
		text = url_decode(target:match "^[^?#]*"):gsub("/", " ")
		if text:match "^%s*$" then
			text = "help"
		end
	elseif complete and length > 0 and length <= LINE_LIMIT then
		text = socket.read(fd, length) or ""
	else
		text = ""
	end
	local limit = input_limit(fd)
	for line in text:gmatch "[^\n]+" do
		if not limit() then
			break
		end
		run_command((line:gsub("\r$", "")), print)
		print.flush()
	end
end

-- Drops a trailing CR and telnet commands (IAC sequences, e.g. the ones a
-- telnet client sends for Ctrl-C).
local function clean_line(line)
	line = line:gsub("\r$", "")
	if line:find("\255", 1, true) then
		line = line:gsub("\255[\251-\254].", ""):gsub("\255.", "")
	end
	return line
end

local function serve(fd, addr)
	if not socket.start(fd) then
		return
	end
	socket.limit(fd, LINE_LIMIT)
	driver.nodelay(fd)
	local print = printer(fd)
	print "Welcome to skynet console"
	print.flush()
	local limit = input_limit(fd, addr)
	while true do
		local line = socket.readline(fd)
		if not line or not limit() then
			break
		end
		line = clean_line(line)
		if line:match "^GET " or line:match "^POST " then
			serve_http(fd, line, print)
			print.flush()
			break
		end
		local quit = run_command(line, print)
		print.flush()
		if quit then
			break
		end
	end
end

local function connection(fd, addr)
	local ok, err = pcall(serve, fd, addr)
	if not ok then
		log("debug_console: connection %s failed: %s", addr, tostring(err))
	end
	socket.close(fd)
end

---------------------------------------------------------------- service

local function parse_args(...)
	local n = select("#", ...)
	local ip, port
	if n >= 2 then
		ip, port = ...
	else
		ip, port = DEFAULT_IP, ...
	end
	port = math.tointeger(tonumber(port))
	if port == nil or port < 0 or port > 65535 then
		error(string.format("debug_console: bad port (%s)", tostring((select(n, ...)))), 0)
	end
	return ip, port
end

local args = table.pack(...)

skynet.start(function()
	local ip, port = parse_args(table.unpack(args, 1, args.n))
	local id, bound_ip, bound_port = socket.listen(ip, port)
	listen_ip, listen_port = bound_ip or ip, bound_port or port
	skynet.error(string.format("Start debug console at %s:%d", listen_ip, listen_port))
	socket.start(id, function(fd, addr)
		skynet.fork(connection, fd, addr)
	end)
	skynet.dispatch("lua", function(_, _, cmd)
		if cmd == "ADDRESS" then
			skynet.retpack(listen_ip, listen_port)
		elseif cmd == "STATS" then
			skynet.retpack(stats)
		else
			error(string.format("debug_console: unknown command (%s)", tostring(cmd)))
		end
	end)
end)
