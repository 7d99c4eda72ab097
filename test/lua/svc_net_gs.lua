-- Helper service for the gate tests: a gateserver whose message handler
-- echoes each frame back, except that a frame "block <cs>" sleeps first
-- (to check that the frames queued behind it are still served). It keeps
-- at most conf.maxclient clients and records connects, disconnects and
-- errors. Commands: open(conf) -> address, port (the built-in open);
-- log() -> list of events (cleared).
local skynet = require "skynet"
local gateserver = require "snax.gateserver"
local netpack = require "skynet.netpack"
-- Not skynet.socket: gateserver owns this service's socket protocol.
local driver = require "skynet.socketdriver"

local events = {}
local handler = {}

function handler.open(_, conf)
	return conf.address, conf.port
end

function handler.connect(fd)
	events[#events + 1] = "connect"
	gateserver.openclient(fd)
end

function handler.disconnect()
	events[#events + 1] = "disconnect"
end

function handler.error()
	events[#events + 1] = "error"
end

function handler.message(fd, msg, sz)
	local s = netpack.tostring(msg, sz)
	local ti = s:match "^block (%d+)$"
	if ti then
		skynet.sleep(tonumber(ti))
	end
	driver.send(fd, string.pack(">s2", s))
end

function handler.command(cmd)
	assert(cmd == "log", "unknown command")
	local e = events
	events = {}
	return e
end

gateserver.start(handler)
