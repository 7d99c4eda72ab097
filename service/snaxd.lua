-- snaxd <name>: runs the snax service file <name> (found along the config key
-- `snax`, or by the loader the key `snax_loader` names).
--
-- Before the file's main chunk runs, SERVICE_NAME is <name>, SERVICE_PATH
-- is the matching template up to its "?" followed by "<name>/", and
-- package.path starts with SERVICE_PATH .. "?.lua;", so the file can
-- require modules kept in its own folder.
--
-- Messages (protocol `snax`, and `lua` too after snax.enablecluster()) are
-- (id, args...), id indexing the method records of snax.interface.
-- State: "new" -> init (1) -> "running" -> exit (2) -> the service exits.
--   init: runs init(...), replies nothing; a second init fails (Already init).
--   exit: runs exit(...), replies nothing, exits; before init: Never init.
--   hotfix (3): replies true, results of the patch's hotfix(...) / false, err.
--   profile (4): replies the profile table (also the debug INFO answer).
--   accept.X: runs the handler, no reply. Called as a request (session ~= 0)
--     it is refused with an error, so the caller gets an error reply instead
--     of waiting forever for an answer that never comes.
--   response.X: replies with the handler's results.
-- Any handler before init (or during a yielding init) fails with Init first.
-- Each message runs in its own coroutine; profile[name] = {count, time}
-- sums the calls of each accept/response handler and the seconds they ran
-- (skynet.profile: time spent suspended is not counted).
local skynet = require "skynet"
local snax = require "skynet.snax"
local snax_interface = require "snax.interface"
local profile = require "skynet.profile"

local name = ...
if name == nil then
	error("snaxd: no snax service name given", 0)
end

SERVICE_NAME = name

local function set_paths(template)
	if type(template) ~= "string" then
		return
	end
	local q = string.find(template, "?", 1, true)
	local prefix = q and string.sub(template, 1, q - 1) or (string.match(template, "^(.*/)") or "")
	local path = prefix .. name .. "/"
	package.path = path .. "?.lua;" .. package.path
	SERVICE_PATH = path
end

local funcs = snax_interface(name, _ENV, snax.loader(), set_paths)

local stat = {} -- method name -> { count =, time = }
local state = "new"
local traceback = debug.traceback

local function account(method_name, ti)
	local s = stat[method_name]
	if s == nil then
		s = { count = 0, time = 0 }
		stat[method_name] = s
	end
	s.count = s.count + 1
	s.time = s.time + ti
end

local function finish(method_name, ok, ...)
	account(method_name, profile.stop())
	if not ok then
		error((...), 0)
	end
	return ...
end

local function timed(method, ...)
	profile.start()
	return finish(method[3], xpcall(method[4], traceback, ...))
end

local system = {}

function system.init(f, ...)
	if state ~= "new" then
		error("Already init")
	end
	state = "initializing"
	if f then
		local ok, err = xpcall(f, traceback, ...)
		if not ok then
			state = "new"
			error(err, 0)
		end
	end
	state = "running"
	skynet.ret()
end

function system.exit(f, ...)
	if state == "new" or state == "initializing" then
		error("Never init")
	elseif state == "exiting" then
		error("Already exiting")
	end
	state = "exiting"
	if f then
		local ok, err = xpcall(f, traceback, ...)
		if not ok then
			-- Exit anyway: the caller's request then fails with an error.
			skynet.error(string.format("snaxd %s: exit failed: %s", name, tostring(err)))
			skynet.exit()
		end
	end
	skynet.ret()
	skynet.exit()
end

function system.hotfix(_, ...)
	skynet.retpack(pcall(function(...)
		return require "snax.hotfix"(funcs, ...)
	end, ...))
end

function system.profile()
	skynet.retpack(stat)
end

local function dispatch(session, _, id, ...)
	local method = funcs[id]
	if method == nil then
		error(string.format("snaxd %s: invalid method id %s", name, tostring(id)))
	end
	local group = method[2]
	if group == "system" then
		return system[method[3]](method[4], ...)
	end
	if state ~= "running" and state ~= "exiting" then
		error("Init first")
	end
	if group == "accept" then
		if session ~= 0 then
			error(string.format("snaxd %s: accept.%s is a post method, called as a request", name, method[3]))
		end
		timed(method, ...)
	else
		skynet.retpack(timed(method, ...))
	end
end

function snax.enablecluster()
	skynet.dispatch("lua", dispatch)
end

skynet.start(function()
	skynet.dispatch("snax", dispatch)
	skynet.info_func(function()
		return stat
	end)
end)
