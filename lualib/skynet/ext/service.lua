-- Service helpers of the skynet table, loaded on first use:
-- names, env, clock, STAT wrappers, the priority lane, memlimit, the launch functions and
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
