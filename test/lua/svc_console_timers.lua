-- Helper for test_console: a service with timers to count and state to
-- inspect. Commands (lua protocol, each replies): schedule n cs (n pending
-- timeouts), cancel n, echo ..., hits, park (a request that never returns
-- until unpark).
local skynet = require "skynet"

local pending = {} -- timeout objects, oldest first
local hits = 0 -- requests served; read by inject tests as an upvalue
local parked = nil
local CMD = {}

function CMD.schedule(n, cs)
	for _ = 1, n do
		pending[#pending + 1] = skynet.timeout(cs, function() end)
	end
	return #pending
end

function CMD.cancel(n)
	for _ = 1, n do
		skynet.killthread(table.remove(pending, 1))
	end
	return #pending
end

function CMD.echo(...)
	return ...
end

function CMD.hits()
	return hits
end

function CMD.park()
	parked = coroutine.running()
	skynet.wait(parked)
	return "unparked"
end

function CMD.unpark()
	return skynet.wakeup(parked) == true
end

skynet.info_func(function(...)
	return { name = "svc_console_timers", hits = hits, args = select("#", ...) }
end)

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		hits = hits + 1
		local f = CMD[cmd]
		if f == nil then
			error(string.format("svc_console_timers: unknown command (%s)", tostring(cmd)))
		end
		skynet.retpack(f(...))
	end)
end)
