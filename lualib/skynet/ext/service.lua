-- Service helpers of the skynet table, loaded on first use:
-- names, env, clock, STAT wrappers, the priority lane, memlimit, budget, the launch functions and
-- info_func (its function stays here; skynet.debug asks the module for it).
local skynet = require "skynet"
local c = require "skynet.core"
local S = require "skynet.private"

function skynet.localname(name)
	return c.addresscommand("QUERY", name)
end

function skynet.harbor(addr)
	return c.harbor(addr)
end

function skynet.getenv(key)
	return c.command("GETENV", key)
end

function skynet.setenv(key, value)
	if c.command("GETENV", key) ~= nil then
		error("Can't setenv exist key : " .. key, 2)
	end
	c.command("SETENV", key .. " " .. value)
end

local starttime

function skynet.starttime()
	if not starttime then
		starttime = c.intcommand "STARTTIME"
	end
	return starttime
end

function skynet.time()
	return c.now() / 100 + (starttime or skynet.starttime())
end

function skynet.endless()
	return c.intcommand("STAT", "endless") == 1
end

function skynet.mqlen()
	return c.intcommand("STAT", "mqlen")
end

-- The priority lane (docs/scheduling.md): on, timer expiries and debug and
-- system messages are delivered before this service's ordinary backlog.
-- Returns the previous setting; with no argument only returns the setting.
function skynet.priority(on)
	if on == nil then
		return c.intcommand("PRIORITY") == 1
	end
	if type(on) ~= "boolean" then
		error(string.format("skynet.priority: on must be a boolean (%s)", tostring(on)), 2)
	end
	return c.intcommand("PRIORITY", on and "on" or "off") == 1
end

-- A number, or nothing for a key STAT does not know.
function skynet.stat(what)
	local r = c.command("STAT", what)
	if r == nil or r == "" then
		return
	end
	return tonumber(r) or error("Invalid result " .. r, 2)
end

-- Takes effect when the main chunk returns (snlua reads the registry field).
-- The exit code is loaded now, while memory is free: a service at its limit
-- must still be able to exit (skynet.exit then lifts the limit a little).
function skynet.memlimit(bytes)
	require "skynet.ext.kill"
	debug.getregistry().memlimit = bytes
	skynet.memlimit = nil
end

-- The service's own budget (docs/operations.md, "Budgets and top"): the
-- fields given change (0 or false: that measure is not watched), the others
-- stay; false turns every limit off; nil only reads. Returns the budget now
-- in force: { cpu_ms_per_s =, memory_mb =, queue =, policy = }.
local BUDGET_MAX <const> = { cpu_ms_per_s = 1000000, memory_mb = 1048576, queue = 0x7fffffff }
local BUDGET_POLICIES <const> = { "warn", "throttle", "kill" }

local function budget_text(t)
	local parts = {}
	for k, v in pairs(t) do
		if k == "policy" then
			if v ~= "warn" and v ~= "throttle" and v ~= "kill" then
				error(string.format("skynet.budget: bad policy (%s): warn, throttle or kill", tostring(v)), 3)
			end
		elseif BUDGET_MAX[k] then
			if v == false then
				v = 0
			end
			if math.type(v) ~= "integer" or v < 0 or v > BUDGET_MAX[k] then
				error(string.format("skynet.budget: bad %s (%s): a whole number from 0 (no limit) to %d",
					k, tostring(v), BUDGET_MAX[k]), 3)
			end
		else
			error(string.format("skynet.budget: unknown field (%s)", tostring(k)), 3)
		end
		parts[#parts + 1] = k .. "=" .. tostring(v)
	end
	table.sort(parts)
	return table.concat(parts, " ")
end

function skynet.budget(t)
	local text = ""
	if t == false then
		text = "off"
	elseif t ~= nil then
		if type(t) ~= "table" then
			error(string.format("skynet.budget: a table, false or nothing expected (%s)", type(t)), 2)
		end
		text = budget_text(t)
	end
	local r = c.command("BUDGET", text)
	local cpu, mem, queue, policy = (r or ""):match "^(%d+) (%d+) (%d+) (%d+)$"
	if cpu == nil then
		error("skynet.budget: the core refused the budget (its reason is in the log)", 2)
	end
	return { cpu_ms_per_s = tonumber(cpu), memory_mb = tonumber(mem), queue = tonumber(queue),
		policy = BUDGET_POLICIES[tonumber(policy) + 1] }
end

-- A failed start raises "newservice <name> failed: <reason>" at the caller's
-- line; the reason is the service's start error (the launcher's reply carries
-- it), e.g. "cannot listen on 127.0.0.1:8888: address already in use ...".
function skynet.newservice(name, ...)
	local ok, handle = pcall(skynet.call, ".launcher", "lua", "LAUNCH", "snlua", name, ...)
	if ok then
		return handle
	end
	local reason = tostring(handle)
	if reason:find("call failed$") then
		reason = S.reason() or "call failed"
	end
	error(string.format("newservice %s failed: %s", name, reason), 2)
end

-- The service manager answers (handle) or (nil, error text): raised at the
-- caller's line.
function skynet.uniqueservice(global, ...)
	local handle, err
	if global == true then
		handle, err = skynet.call(".service", "lua", "GLAUNCH", ...)
	else
		handle, err = skynet.call(".service", "lua", "LAUNCH", global, ...)
	end
	if handle == nil then
		error(err, 2)
	end
	return handle
end

function skynet.queryservice(global, ...)
	local handle, err
	if global == true then
		handle, err = skynet.call(".service", "lua", "GQUERY", ...)
	else
		handle, err = skynet.call(".service", "lua", "QUERY", global, ...)
	end
	if handle == nil then
		error(err, 2)
	end
	return handle
end

local info_func -- what the debug protocol's INFO calls (skynet.debug asks M.info_func)

function skynet.info_func(f)
	info_func = f
end

-- The module's value, for skynet.debug: the function skynet.info_func set, or nil.
local M = {}

function M.info_func()
	return info_func
end

return M
