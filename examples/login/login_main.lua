-- The login node: starts the login server (logind.lua: a master and its
-- slaves) and makes the master reachable from the gate node as "@logind".
local skynet = require "skynet"
local cluster = require "skynet.cluster"

skynet.start(function()
	local logind = skynet.newservice("logind")
	cluster.register("logind", logind)
	cluster.open "login"
	skynet.error("login node ready")
end)
