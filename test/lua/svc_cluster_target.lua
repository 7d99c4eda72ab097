-- Helper service for the cluster tests: the remote end of calls and pushes.
-- Started as `svc_cluster_target [identity]`. Commands (lua):
--   GET(k) -> "foobar"            echo(...) -> ...       LEN(n) -> n "R"s
--   SLEEP(cs) -> "slept" (counts concurrent sleepers: active(), peak())
--   raise(text) raises            EMPTY() replies nothing (an empty reply)
--   PING(v), SET(k, v) record v (or k and #v) for pushes: log() takes them
--   whoami() -> identity          size(s) -> #s         exit() exits
--   call(node, address, ...) -> cluster.call from here (the other direction)
--   spawn() -> a new svc_cluster_target    abort() stops the node
local skynet = require "skynet"

local identity = ...
local CMD = {}
local log = {}
local active, peak = 0, 0

function CMD.GET()
	return "foobar"
end

function CMD.echo(...)
	return ...
end

function CMD.LEN(n)
	return string.rep("R", n)
end

function CMD.SLEEP(cs)
	active = active + 1
	if active > peak then
		peak = active
	end
	skynet.sleep(cs)
	active = active - 1
	return "slept"
end

function CMD.active()
	return active
end

function CMD.peak()
	local p = peak
	peak = active
	return p
end

function CMD.raise(text)
	error(text or "raised on purpose")
end

function CMD.PING(v)
	log[#log + 1] = v
end

function CMD.SET(k, v)
	log[#log + 1] = k
	log[#log + 1] = type(v) == "string" and #v or v
end

function CMD.log()
	local l = log
	log = {}
	return l
end

function CMD.whoami()
	return identity
end

function CMD.size(s)
	return #s
end

function CMD.spawn()
	return skynet.newservice("svc_cluster_target", "spawned")
end

function CMD.call(node, address, ...)
	local cluster = require "skynet.cluster"
	return cluster.call(node, address, ...)
end

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, ...)
		if cmd == "EMPTY" then
			return skynet.ret()
		elseif cmd == "abort" then
			return skynet.abort()
		elseif cmd == "exit" then
			skynet.retpack(true)
			return skynet.exit()
		end
		local f = CMD[cmd]
		if f == nil then
			error("svc_cluster_target: unknown command " .. tostring(cmd))
		end
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end)
