-- skynet.debug: the debug protocol (PTYPE_DEBUG) every Lua service answers.
-- skynet.lua loads it on the first PTYPE_DEBUG request; requiring it by hand
-- (for reg_debugcmd) installs it early. Commands reply with skynet.ret.
local skynet = require "skynet"
local S = require "skynet.private"

local M = {}
local dbgcmd = {}

local function retpack(...)
	skynet.ret(skynet.pack(...))
end

function dbgcmd.MEM()
	retpack(collectgarbage "count")
end

function dbgcmd.GC()
	local before = collectgarbage "count"
	local t0 = skynet.hpc()
	collectgarbage "collect"
	skynet.error(string.format("GC %.2f Kb -> %.2f Kb, cost %.2f sec", before,
		collectgarbage "count", (skynet.hpc() - t0) / 1e9))
end

function dbgcmd.STAT()
	retpack {
		task = skynet.task(),
		mqlen = skynet.stat "mqlen",
		cpu = skynet.stat "cpu",
		message = skynet.stat "message",
	}
end

function dbgcmd.TASK(session)
	if session then
		retpack(skynet.task(session))
	else
		retpack(skynet.task {})
	end
end

function dbgcmd.UNIQTASK()
	retpack(skynet.uniqtask())
end

function dbgcmd.KILLTASK(name)
	if skynet.killthread(name) then
		skynet.ret()
	else
		retpack "Not found"
	end
end

function dbgcmd.INFO(...)
	-- skynet.info_func keeps f in skynet.ext.service; never loaded: none set
	local service = package.loaded["skynet.ext.service"]
	local f = service and service.info_func()
	if f then
		retpack(f(...))
	else
		retpack(nil)
	end
end

function dbgcmd.EXIT()
	skynet.exit()
end

-- Upvalues reachable from the dispatch functions: name -> { f, index }.
local function collect_upvalues()
	local found, seen = {}, {}
	local function walk(f, depth)
		if seen[f] or depth > 4 then
			return
		end
		seen[f] = true
		local i = 1
		while true do
			local name, value = debug.getupvalue(f, i)
			if name == nil then
				break
			end
			if name ~= "_ENV" and found[name] == nil then
				found[name] = { f, i }
			end
			if type(value) == "function" then
				walk(value, depth + 1)
			end
			i = i + 1
		end
	end
	for _, p in pairs(S.protocols()) do
		if type(p.dispatch) == "function" then
			walk(p.dispatch, 0)
		end
	end
	return found
end

local function inject(source, filename, ...)
	local output = {}
	local function print(...)
		local n = select("#", ...)
		local t = {}
		for i = 1, n do
			t[i] = tostring((select(i, ...)))
		end
		output[#output + 1] = table.concat(t, "\t")
	end
	local upvalues = collect_upvalues()
	local env = setmetatable({ print = print }, {
		__index = function(_, k)
			local u = upvalues[k]
			if u then
				local _, v = debug.getupvalue(u[1], u[2])
				return v
			end
			return _G[k]
		end,
		__newindex = function(t, k, v)
			local u = upvalues[k]
			if u then
				debug.setupvalue(u[1], u[2], v)
			else
				rawset(t, k, v)
			end
		end,
	})
	local f, err = load(source, "@" .. tostring(filename or "inject"), "bt", env)
	if not f then
		return false, err
	end
	local ok, e = xpcall(f, debug.traceback, ...)
	if not ok then
		output[#output + 1] = tostring(e)
	end
	return ok, table.concat(output, "\n")
end

function dbgcmd.RUN(source, filename, ...)
	retpack(inject(source, filename, ...))
end

function dbgcmd.TERM(addr)
	skynet.term(addr)
	skynet.ret()
end

function dbgcmd.SUPPORT(pname)
	retpack(skynet.dispatch(pname) ~= nil)
end

function dbgcmd.PING()
	skynet.ret()
end

function dbgcmd.LINK()
	-- never answered: the pending response (kept by skynet) fails when we exit
	skynet.response()
end

-- An addition to skynet's commands: this service's pending C timers (timeouts and sleeps), for
-- the debug console's `timers` command.
function dbgcmd.TIMERS()
	retpack(require("skynet.core").intcommand("STAT", "timers"))
end

function dbgcmd.TRACELOG(proto, flag)
	if type(proto) ~= "string" then
		flag = proto
		proto = "lua"
	end
	skynet.traceproto(proto, flag)
	skynet.ret()
end

function M.reg_debugcmd(name, fn)
	dbgcmd[name] = fn
end

skynet.dispatch("debug", function(_, _, cmd, ...)
	local f = dbgcmd[cmd]
	assert(f, cmd)
	f(...)
end)

return M
