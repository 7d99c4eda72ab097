-- service_mgr (.service, and the global SERVICE in standalone mode): unique
-- services by name. Every reply is (result) or (nil, errmsg).
--
-- service[name] is a handle once started, a string when the launch failed
-- (every later LAUNCH or QUERY of that name fails with it), or a table
-- while it is being launched: { launch = {source, session} or nil, [i] =
-- waiter {co, source, session} }.
local skynet = require "skynet"
require "skynet.manager"

local cmd = {}
local service = {}

local function read_name(name)
	if name:sub(1, 1) == "@" then
		return name:sub(2)
	end
	return name
end

-- func(...) launches the service; record and publish the result.
local function request(name, func, ...)
	local ok, handle = pcall(func, ...)
	local s = service[name]
	assert(type(s) == "table")
	if ok and handle then
		service[name] = handle
	else
		if ok then
			handle = "service " .. name .. " exited during start"
		end
		service[name] = tostring(handle)
	end
	for _, w in ipairs(s) do
		skynet.wakeup(w.co)
	end
	if type(service[name]) == "string" then
		error(service[name], 0)
	end
	return service[name]
end

local function waitfor(name, func, ...)
	local s = service[name]
	if type(s) == "number" then
		return s
	elseif type(s) == "string" then
		error(s, 0)
	end
	local session, source = skynet.context()
	if s == nil then
		s = {}
		service[name] = s
	end
	if func and s.launch == nil then
		s.launch = { source = source, session = session }
		return request(name, func, ...)
	end
	local co = coroutine.running()
	s[#s + 1] = { co = co, source = source, session = session }
	skynet.wait(co)
	s = service[name]
	if type(s) == "string" then
		error(s, 0)
	end
	assert(type(s) == "number")
	return s
end

local function snax_launch(subname, ...)
	local snax = require "skynet.snax"
	return snax.rawnewservice(subname, ...)
end

function cmd.LAUNCH(service_name, subname, ...)
	local realname = read_name(service_name)
	if realname == "snaxd" then
		return waitfor(service_name .. "." .. subname, snax_launch, subname, ...)
	end
	return waitfor(service_name, skynet.newservice, realname, subname, ...)
end

function cmd.QUERY(service_name, subname)
	local realname = read_name(service_name)
	if realname == "snaxd" then
		return waitfor(service_name .. "." .. subname)
	end
	return waitfor(service_name)
end

-- The handle of a unique service once it runs, or nil (never waits: the
-- reminder service asks this before each delivery to a unique service).
function cmd.PEEK(service_name)
	local s = service[service_name]
	if type(s) == "number" then
		return s
	end
	return nil
end

local function list_service()
	local result = {}
	for k, v in pairs(service) do
		if type(v) == "string" then
			v = "Error: " .. v
		elseif type(v) == "table" then
			local parts = {}
			if v.launch then
				parts[1] = string.format("Launching from %s (session %s)", skynet.address(v.launch.source),
					tostring(v.launch.session))
			end
			for _, w in ipairs(v) do
				parts[#parts + 1] = string.format("Waiting from %s (session %s)", skynet.address(w.source),
					tostring(w.session))
			end
			v = table.concat(parts, "\n")
		else
			v = skynet.address(v)
		end
		result[k] = v
	end
	return result
end

local function register_global()
	function cmd.GLAUNCH(name, ...)
		return cmd.LAUNCH("@" .. name, ...)
	end

	function cmd.GQUERY(name, ...)
		return cmd.QUERY("@" .. name, ...)
	end

	local mgr = {}

	function cmd.REPORT(m)
		mgr[m] = true
	end

	function cmd.LIST()
		local result = {}
		for m in pairs(mgr) do
			local ok, r = pcall(skynet.call, m, "lua", "LIST")
			if ok then
				for k, v in pairs(r) do
					result[k] = v
				end
			end
		end
		for k, v in pairs(list_service()) do
			result[k] = v
		end
		return result
	end
end

local function register_local()
	local function forward(command, name, ...)
		local r, err = skynet.call("SERVICE", "lua", command, name, ...)
		if r == nil then
			error(err, 0)
		end
		return r
	end

	function cmd.GLAUNCH(name, ...)
		return forward("LAUNCH", "@" .. name, ...)
	end

	function cmd.GQUERY(name, ...)
		return forward("QUERY", "@" .. name, ...)
	end

	function cmd.LIST()
		return list_service()
	end
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, command, ...)
		local f = cmd[command]
		if f == nil then
			skynet.ret(skynet.pack(nil, "Invalid command " .. tostring(command)))
			return
		end
		local ok, r = pcall(f, ...)
		if ok then
			skynet.ret(skynet.pack(r))
		else
			skynet.ret(skynet.pack(nil, r))
		end
	end)
	local handle = skynet.localname ".service"
	if handle then
		skynet.error(".service is already registered by " .. skynet.address(handle))
		skynet.exit()
	else
		skynet.register ".service"
	end
	if skynet.getenv "standalone" then
		skynet.register "SERVICE"
		register_global()
	else
		register_local()
	end
end)
