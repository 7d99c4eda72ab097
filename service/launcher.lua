-- launcher (.launcher): launches Lua services on behalf of skynet.newservice
-- and keeps the list of live ones.
local skynet = require "skynet"
local core = require "skynet.core"
require "skynet.manager"

local services = {} -- handle -> "snlua name args"
local instance = {} -- handle -> response closure of a launch in progress
local launch_session = {} -- handle -> session of the LAUNCH call
local failed = {} -- handle -> start error (false: none given) of a child not gone yet
local command = {}
local NORET <const> = {}

function command.LIST()
	local list = {}
	for handle, desc in pairs(services) do
		list[skynet.address(handle)] = desc
	end
	return list
end

-- Sends the debug command to every service at once and collects replies for
-- ti cs (nil: no limit): addr -> format(reply, desc) | on_error/on_timeout.
local function query_all(ti, format, on_error, on_timeout, ...)
	local result = {}
	local req = skynet.request()
	for handle, desc in pairs(services) do
		result[skynet.address(handle)] = on_timeout(desc)
		req:add { handle, "debug", ... }
	end
	for r, resp in req:select(ti) do
		local handle = r[1]
		local desc = services[handle] or ""
		if resp then
			result[skynet.address(handle)] = format(resp[1], desc)
		else
			result[skynet.address(handle)] = on_error(desc)
		end
	end
	return result
end

function command.STAT(_, ti)
	return query_all(ti, function(stat)
		return stat
	end, function()
		return "ERROR"
	end, function()
		return "TIMEOUT"
	end, "STAT")
end

function command.MEM(_, ti)
	return query_all(ti, function(kb, desc)
		return string.format("%.2f Kb (%s)", kb, desc)
	end, function(desc)
		return "ERROR (" .. desc .. ")"
	end, function(desc)
		return "TIMEOUT (" .. desc .. ")"
	end, "MEM")
end

function command.GC(source, ti)
	for handle in pairs(services) do
		skynet.send(handle, "debug", "GC")
	end
	return command.MEM(source, ti)
end

function command.KILL(_, handle)
	if type(handle) == "string" then
		if handle:sub(1, 1) == "." then
			handle = skynet.localname(handle) or handle
		elseif handle:sub(1, 1) == ":" then
			handle = tonumber(handle:sub(2), 16) or handle
		end
	end
	skynet.kill(handle)
	local ret = { [skynet.address(handle)] = tostring(services[handle]) }
	services[handle] = nil
	return ret
end

local function launch_service(service, ...)
	local param = table.concat({ ... }, " ")
	local inst = skynet.launch(service, param)
	local session = skynet.context()
	local response = skynet.response()
	if inst then
		services[inst] = service .. " " .. param
		instance[inst] = response
		launch_session[inst] = session
	else
		response(false)
		return nil
	end
	return inst
end

function command.LAUNCH(_, service, ...)
	launch_service(service, ...)
	return NORET
end

function command.LOGLAUNCH(_, service, ...)
	local inst = launch_service(service, ...)
	if inst then
		core.command("LOGON", skynet.address(inst))
	end
	return NORET
end

local function settle(handle, ok, ...)
	local response = instance[handle]
	if response then
		response(ok, ...)
		instance[handle] = nil
		launch_session[handle] = nil
	end
end

-- The child failed to start; reason: its start error, which the newservice
-- call fails with (the error's payload). The child exits next, and its
-- REMOVE, sent after its "KILL self" line, settles the call: the caller,
-- which may log the reason as a node's last line, comes after that line.
function command.ERROR(address, reason)
	failed[address] = reason or false
	services[address] = nil
	return NORET
end

function command.LAUNCHOK(address)
	settle(address, true, address)
	return NORET
end

function command.REMOVE(_, handle, kill)
	services[handle] = nil
	local reason = failed[handle]
	failed[handle] = nil
	if kill then
		settle(handle, false, "killed while starting")
	elseif reason ~= nil then
		settle(handle, false, reason or nil)
	else
		settle(handle, true) -- exited during start: newservice returns nil
	end
	return NORET
end

function command.QUERY(_, request_session)
	for handle, session in pairs(launch_session) do
		if session == request_session then
			return handle
		end
	end
end

skynet.register_protocol {
	name = "text",
	id = skynet.PTYPE_TEXT,
	unpack = skynet.tostring,
	dispatch = function(_, address, cmd)
		if cmd == nil or cmd == "" then
			command.LAUNCHOK(address)
		elseif cmd == "ERROR" or cmd:sub(1, 6) == "ERROR " then
			-- snlua: "ERROR <why the loader failed>", sent once it has exited
			services[address] = nil
			settle(address, false, cmd:sub(7) ~= "" and cmd:sub(7) or nil)
		else
			error("launcher: invalid text command (" .. tostring(cmd) .. ")")
		end
	end,
}

skynet.dispatch("lua", function(_, address, cmd, ...)
	cmd = string.upper(cmd)
	local f = command[cmd]
	if f then
		local ret = f(address, ...)
		if ret ~= NORET then
			skynet.ret(skynet.pack(ret))
		end
	else
		skynet.ret(skynet.pack { "Unknown command" })
	end
end)

skynet.start(function() end)
