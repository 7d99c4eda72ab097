-- Lua test runner (started by test/config.test as the `start` service).
--
-- For each feature named in env `test` (comma separated; "*" means every
-- test/lua/test_*.lua) it launches the service test_<feature>, calls its
-- `run` command under a time limit (env `test_timeout`, cs of virtual time:
-- a stuck test leaves the node idle, so virtual time jumps to the limit and
-- it fails fast), prints "ok   <name>" or "FAIL <name>: <error>", then the
-- line "N passed, N failed", and stops the node (exit status 1 if a test failed).
-- The error is the test's own: why its start failed (newservice's reason),
-- or the first line of what its run raised (the reason its failed call
-- carried), not the runner's file:line nor a bare "call failed".
local skynet = require "skynet"
require "skynet.manager"
local S = require "skynet.private"

local DEFAULT_TIMEOUT <const> = 8640000

local function list_all()
	local names = {}
	local p = io.popen("ls test/lua 2>/dev/null")
	if p then
		for file in p:lines() do
			local name = file:match "^test_(.+)%.lua$"
			if name then
				names[#names + 1] = name
			end
		end
		p:close()
	end
	table.sort(names)
	return names
end

local function features()
	local spec = skynet.getenv "test" or ""
	if spec == "*" or spec == "" then
		return list_all()
	end
	local names = {}
	for name in spec:gmatch "[^,%s]+" do
		names[#names + 1] = (name:gsub("^test_", ""):gsub("%.lua$", ""))
	end
	return names
end

-- Runs f(...) in a fork; returns its pcall results, or false, "timeout".
local function with_timeout(ti, f, ...)
	local token = {}
	local result
	skynet.fork(function(...)
		result = table.pack(pcall(f, ...))
		skynet.wakeup(token)
	end, ...)
	skynet.sleep(ti, token)
	if result == nil then
		return false, string.format("timeout after %d cs", ti)
	end
	return table.unpack(result, 1, result.n)
end

-- One write per line: the logger thread writes to the same stdout, and a
-- print's text and its newline are two writes another line can fall between.
local function say(line)
	io.stdout:write(line .. "\n")
	io.stdout:flush()
end

local function run_one(name, ti)
	return with_timeout(ti, function()
		local ok, addr = pcall(skynet.newservice, "test_" .. name)
		if not ok then
			error(tostring(addr):gsub("^[^:]*runner%.lua:%d+: ", ""), 0) -- newservice's reason
		elseif addr == nil then
			error("the test service exited during start", 0)
		end
		local done, result = pcall(skynet.call, addr, "lua", "run")
		if not done then
			error(S.reason() or tostring(result), 0)
		end
		return result
	end)
end

local function one_line(s)
	return (tostring(s):gsub("\n", "\n    "))
end

skynet.start(function()
	local ti = tonumber(skynet.getenv "test_timeout") or DEFAULT_TIMEOUT
	local passed, failed = 0, 0
	local names = features()
	if #names == 0 then
		say("FAIL runner: no test named (set SKYNET_TEST)")
		failed = 1
	end
	for _, name in ipairs(names) do
		local ok, err = run_one(name, ti)
		if ok then
			passed = passed + 1
			say("ok   " .. name)
		else
			failed = failed + 1
			say("FAIL " .. name .. ": " .. one_line(err))
		end
	end
	say(string.format("%d passed, %d failed", passed, failed))
	skynet.abort(failed > 0 and 1 or 0) -- the node exits 1 when a test failed
end)
