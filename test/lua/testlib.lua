-- Shared helpers for the Lua tests in test/lua (not a test itself; found
-- through the test/lua/?.lua entry of lua_path in test/config.test).
--
-- A test service does:
--   local t = require "testlib"
--   t.case("what it checks", function() ... end)
--   t.start()
-- t.start installs the `lua` dispatch: `run` runs every case in order (each
-- in its own protected call, so one failure does not hide the others) and
-- raises a report naming the failed cases; `mark` (sent by helper services)
-- appends to t.marks; extra commands can be passed to t.start. With the
-- config key test_verbose = true each case is printed before it runs.
local skynet = require "skynet"

local M = {}

local cases = {}
M.marks = {}

-- True when the node runs under ThreadSanitizer (test/run.sh exports SKYNET_SAN),
-- which makes Lua errors thrown through the uninstrumented liblua costly: loops
-- that raise many of them run shorter there.
M.under_tsan = os.getenv("SKYNET_SAN") == "thread"

-- Bytes as lower-case hex, sep (default none) between bytes.
function M.hex(s, sep)
	sep = sep or ""
	return (s:gsub(".", function(c)
		return string.format("%02x", c:byte()) .. sep
	end):sub(1, #s * (2 + #sep) - #sep))
end

-- "0c 00 ..." (spaces optional) to bytes.
function M.unhex(h)
	return (h:gsub("%s", ""):gsub("..", function(x)
		return string.char(tonumber(x, 16))
	end))
end

function M.case(name, fn)
	cases[#cases + 1] = { name = name, fn = fn }
end

local function show(v)
	if type(v) == "string" then
		return string.format("%q", v)
	end
	return tostring(v)
end

function M.eq(got, want, what)
	if got ~= want then
		error(string.format("%s: got %s, want %s", what or "value", show(got), show(want)), 2)
	end
end

function M.ok(cond, what)
	if not cond then
		error(what or "check failed", 2)
	end
	return cond
end

-- Calls f(...) and expects an error whose text contains `text` (plain).
-- Returns the error text.
function M.raises(text, f, ...)
	local ok, err = pcall(f, ...)
	if ok then
		error(string.format("expected an error containing %q, but the call succeeded", text), 2)
	end
	local s = tostring(err)
	if not s:find(text, 1, true) then
		error(string.format("expected an error containing %q, got %q", text, s), 2)
	end
	return s
end

local function deep_eq(a, b, seen)
	if a == b then
		return true
	end
	if type(a) == "number" and type(b) == "number" then
		return a ~= a and b ~= b -- both NaN
	end
	if type(a) ~= "table" or type(b) ~= "table" then
		return false
	end
	if seen[a] == b then
		return true
	end
	seen[a] = b
	for k, v in next, a do
		if not deep_eq(v, rawget(b, k), seen) then
			return false
		end
	end
	for k in next, b do
		if rawget(a, k) == nil then
			return false
		end
	end
	return true
end

function M.same(got, want, what)
	if not deep_eq(got, want, {}) then
		error(string.format("%s: tables differ", what or "value"), 2)
	end
end

-- A new empty folder (mktemp -d); the caller removes it.
function M.tmpdir()
	local p = assert(io.popen "mktemp -d")
	local dir = p:read "l"
	p:close()
	return assert(dir, "mktemp -d")
end

-- With virtual time the clock moves only when the node is idle, so a
-- one-centisecond sleep returns once every queue has drained.
function M.quiesce()
	skynet.sleep(1)
end

-- Counts responses for sessions nobody waits for (they must never come).
local unknown_responses = 0
local watching = false

function M.watch_unknown_responses()
	if not watching then
		watching = true
		skynet.dispatch_unknown_response(function()
			unknown_responses = unknown_responses + 1
		end)
	end
	return function()
		return unknown_responses
	end
end

-- Starts n forks of f(i); returns a function that waits for all of them and
-- returns their table.pack(pcall(f, i)) results.
function M.spawn(n, f)
	local results, done, token, waiting = {}, 0, {}, false
	for i = 1, n do
		skynet.fork(function()
			results[i] = table.pack(pcall(f, i))
			done = done + 1
			if done == n and waiting then
				skynet.wakeup(token)
			end
		end)
	end
	return function()
		if done < n then
			waiting = true
			skynet.wait(token)
		end
		return results
	end
end

-- Waits (virtual time) until #marks >= n, at most `limit` cs.
function M.wait_marks(n, limit)
	local deadline = skynet.now() + (limit or 100)
	while #M.marks < n and skynet.now() < deadline do
		skynet.sleep(1)
	end
	return #M.marks >= n
end

-- Polls cond() every cs until it is true (returns true) or limit_cs passed
-- (returns false).
function M.wait_until(cond, limit_cs)
	local deadline = skynet.now() + limit_cs
	while not cond() do
		if skynet.now() >= deadline then
			return false
		end
		skynet.sleep(1)
	end
	return true
end

-- Polls pred every 5 cs until it returns a true value, and returns that
-- value; raises "timed out waiting for <what>" at the caller after limit_cs
-- (default 1000).
function M.wait_for(pred, limit_cs, what)
	local deadline = skynet.now() + (limit_cs or 1000)
	while skynet.now() < deadline do
		local v = pred()
		if v then
			return v
		end
		skynet.sleep(5)
	end
	error("timed out waiting for " .. (what or "a condition"), 2)
end

-- Calls f(...) protected: cs it took, then pcall's results.
function M.elapsed(f, ...)
	local t0 = skynet.now()
	local r = table.pack(pcall(f, ...))
	return skynet.now() - t0, table.unpack(r, 1, r.n)
end

-- Everything a raw socket receives until the peer closes it, or until
-- limit_cs (default 300) pass and the socket is closed here.
function M.read_until_close(fd, limit_cs)
	local socket = require "skynet.socket"
	local out, done = {}, false
	skynet.timeout(limit_cs or 300, function()
		if not done then
			socket.close(fd)
		end
	end)
	while true do
		local s = socket.read(fd)
		if not s then
			break
		end
		out[#out + 1] = s
	end
	done = true
	socket.close(fd)
	return table.concat(out)
end

-- A TCP port of 127.0.0.1 that was free a moment ago.
function M.free_port()
	local socket = require "skynet.socket"
	local id, _, port = socket.listen("127.0.0.1", 0)
	socket.close(id)
	return port
end

function M.has_mark(v)
	for _, m in ipairs(M.marks) do
		if m == v then
			return true
		end
	end
	return false
end

local function run()
	local failed, names = {}, {}
	local verbose = skynet.getenv("test_verbose") == "true"
	for _, c in ipairs(cases) do
		if verbose then
			print(string.format("  case %s (now %d)", c.name, skynet.now()))
		end
		local ok, err = xpcall(c.fn, debug.traceback)
		if not ok then
			failed[#failed + 1] = string.format("[%s] %s", c.name, tostring(err))
			names[#names + 1] = c.name
		end
	end
	if #failed > 0 then
		-- the first line names the cases: it is what the runner's FAIL line shows
		local report = string.format("%d of %d cases failed (%s):\n%s", #failed, #cases,
			table.concat(names, "; "), table.concat(failed, "\n"))
		-- Straight to stdout too: the caller only sees "call failed", and the
		-- node may stop before the logger writes the error line.
		print(report)
		error(report, 0)
	end
	return #cases
end

-- extra: name -> function(session, source, ...) that replies itself.
function M.start(extra, init)
	skynet.start(function()
		skynet.dispatch("lua", function(session, source, cmd, ...)
			if cmd == "run" then
				skynet.retpack(run())
			elseif cmd == "mark" then
				M.marks[#M.marks + 1] = (...)
			elseif extra and extra[cmd] then
				extra[cmd](session, source, ...)
			else
				error(string.format("testlib: unknown command (%s)", tostring(cmd)))
			end
		end)
		if init then
			init()
		end
	end)
end

return M
