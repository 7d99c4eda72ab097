-- Helper service for test_mqueue: a server of protocol "queue" through
-- skynet.mqueue. Started with "late" it registers only on the lua command
-- "register". It spies on the log (skynet.core.error and skynet.error) to
-- count "Maybe forgot response" lines and keep the lines mqueue logs.
local skynet = require "skynet"
local core = require "skynet.core"
local mqueue = require "skynet.mqueue"

local mode = ...
local log = {} -- what the handler did, in order
local forgot = 0
local logged = {}

local function spy(orig)
	return function(msg, ...)
		local s = tostring(msg)
		if s:find("Maybe forgot response", 1, true) then
			forgot = forgot + 1
		end
		if s:find("mqueue", 1, true) then
			logged[#logged + 1] = s
		end
		return orig(msg, ...)
	end
end
core.error = spy(core.error)
skynet.error = spy(skynet.error)

local Q = {}

function Q.slow(tag, ti)
	log[#log + 1] = tag .. " start"
	skynet.sleep(ti)
	log[#log + 1] = tag .. " end"
	return tag
end

function Q.fast(tag)
	log[#log + 1] = tag
	return tag
end

-- Like fast, but returns nothing (for sends).
function Q.note(tag)
	log[#log + 1] = tag
end

function Q.error(msg)
	error(msg)
end

function Q.error_table()
	error({ code = 7 })
end

function Q.multi()
	return 1, nil, 3
end

function Q.func()
	return print
end

function Q.size()
	return mqueue.size()
end

function Q.exit_after(ti)
	skynet.sleep(ti)
	skynet.exit()
end

local function handler(cmd, ...)
	local f = Q[cmd]
	if f == nil then
		error("svc_mqueue: unknown queue command " .. tostring(cmd))
	end
	return f(...)
end

local CMD = {}

function CMD.register()
	mqueue.register(handler)
end

function CMD.register_again()
	local ok, err = pcall(mqueue.register, handler)
	local ok2, err2 = pcall(mqueue.register, 42)
	return ok, err, ok2, err2
end

function CMD.size()
	return mqueue.size()
end

function CMD.log()
	return log
end

function CMD.forgot()
	return forgot
end

function CMD.logged()
	return logged
end

-- Calls addr through mqueue; reports the result to `report` as a mark.
function CMD.mcall(report, addr, ...)
	local r = table.pack(pcall(mqueue.call, addr, ...))
	skynet.send(report, "lua", "mark", r)
end

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, ...)
		local f = assert(CMD[cmd], "svc_mqueue: unknown command")
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
	if mode ~= "late" then
		mqueue.register(handler)
	end
end)
