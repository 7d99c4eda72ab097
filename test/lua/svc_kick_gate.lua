-- Helper service of test/lua/svc_log_flood.lua: a snax.gateserver gate whose
-- policy kicks a client on its first frame, unless that frame is "hello"
-- (answered "hello"): a client that floods is kicked while frames it sent
-- are still queued, which the gate then drops. Commands: open(conf) ->
-- address, port (the built-in open).
local gateserver = require "snax.gateserver"
local netpack = require "skynet.netpack"
-- Not skynet.socket: gateserver owns this service's socket protocol.
local driver = require "skynet.socketdriver"

local handler = {}

function handler.open(_, conf)
	return conf.address, conf.port
end

function handler.connect(fd)
	gateserver.openclient(fd)
end

function handler.message(fd, msg, sz)
	if netpack.tostring(msg, sz) == "hello" then
		driver.send(fd, string.pack(">s2", "hello"))
	else
		gateserver.closeclient(fd)
	end
end

gateserver.start(handler)
