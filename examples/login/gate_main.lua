-- The gate node: starts the message server (gated.lua) as "@gated", opens
-- it for the game server "sample" (which registers it with the login node).
local skynet = require "skynet"
local cluster = require "skynet.cluster"

skynet.start(function()
	cluster.open "gate"
	local gate = skynet.newservice("gated", "gate")
	cluster.register("gated", gate)
	skynet.call(gate, "lua", "open", {
		address = "0.0.0.0",
		port = assert(tonumber(skynet.getenv "gate_port"), "config: gate_port"),
		maxclient = 64,
		servername = "sample",
	})
	skynet.error("gate node ready")
end)
