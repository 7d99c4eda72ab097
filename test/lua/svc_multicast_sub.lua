-- A multicast subscriber for test_multicast. Commands (lua, call):
--   join(channel, mode, arg)  subscribe a new channel object; mode:
--       "log"      each message is logged as { channel, source, ... }
--       "unsub"    the first message waits until arg messages are queued,
--                  then unsubscribes
--       "exit"     the first message waits until arg messages are queued,
--                  then skynet.exit()
--       "kill"     the first message waits until arg messages are queued,
--                  tells the caller of join ("ready" to `lua` command
--                  `ready`) and waits until the service is killed
--       "error"    the handler raises after logging
--       "block"    the handler logs, then waits forever (skynet.wait)
--   leave(channel)   unsubscribe;  drop(channel)  forget the object + full GC
--   log()            the log so far
-- The waits spin on the service's own queue length (virtual time stands
-- still while a worker is busy), bounded by SPIN_MAX.
local skynet = require "skynet"
local mc = require "skynet.multicast"
require "skynet.manager"

local SPIN_MAX <const> = 50000000

local objs = {}
local log = {}

local function spin_until(cond, what)
	for _ = 1, SPIN_MAX do
		if cond() then
			return
		end
	end
	error("svc_multicast_sub: gave up waiting for " .. what)
end

local function queued_at_least(n)
	return function()
		return skynet.mqlen() >= n
	end
end

local function record(obj, source, ...)
	log[#log + 1] = table.pack(obj.channel, source, ...)
end

local HANDLERS = {}

function HANDLERS.log()
	return record
end

function HANDLERS.unsub(arg)
	return function(obj, source, ...)
		record(obj, source, ...)
		if #log == 1 then
			spin_until(queued_at_least(arg), "queued messages")
			obj:unsubscribe()
		end
	end
end

function HANDLERS.exit(arg)
	return function(obj, source, ...)
		record(obj, source, ...)
		spin_until(queued_at_least(arg), "queued messages")
		skynet.exit()
	end
end

function HANDLERS.kill(arg, caller, name)
	skynet.register(name)
	return function(obj, source, ...)
		record(obj, source, ...)
		spin_until(queued_at_least(arg), "queued messages")
		skynet.send(caller, "lua", "ready")
		spin_until(function()
			return skynet.localname(name) == nil
		end, "the kill")
	end
end

function HANDLERS.error()
	return function(obj, source, ...)
		record(obj, source, ...)
		error("handler failed on purpose")
	end
end

function HANDLERS.block()
	return function(obj, source, ...)
		record(obj, source, ...)
		skynet.wait()
	end
end

local CMD = {}

function CMD.join(source, c, mode, arg, name)
	local obj = mc.new { channel = c, dispatch = HANDLERS[mode or "log"](arg, source, name) }
	obj:subscribe()
	objs[c] = obj
end

function CMD.leave(_, c)
	objs[c]:unsubscribe()
end

function CMD.drop(_, c)
	objs[c] = nil
	collectgarbage "collect"
	collectgarbage "collect"
end

function CMD.log()
	return log
end

skynet.start(function()
	skynet.dispatch("lua", function(_, source, cmd, ...)
		skynet.retpack(CMD[cmd](source, ...))
	end)
end)
