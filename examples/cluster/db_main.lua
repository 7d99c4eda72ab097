-- Node "db": a key-value service reachable from other nodes as "@kv"
-- (cluster name) or ".kv" (local name), and the node's cluster port.
local skynet = require "skynet"
require "skynet.manager"
local cluster = require "skynet.cluster"

local mode = ...
local store = {}
local CMD = {}

function CMD.SET(key, value)
	local old = store[key]
	store[key] = value
	return old
end

function CMD.GET(key)
	return store[key]
end

skynet.start(function()
	if mode == "kv" then
		skynet.dispatch("lua", function(_, _, cmd, ...)
			local f = CMD[cmd]
			if f == nil then
				error("kv: unknown command " .. tostring(cmd))
			end
			skynet.retpack(f(...))
		end)
		skynet.register ".kv"
		return
	end
	local kv = skynet.newservice("db_main", "kv")
	cluster.register("kv", kv)
	cluster.open "db"
	skynet.error("db node ready: kv is " .. skynet.address(kv))
end)
