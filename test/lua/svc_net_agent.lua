-- Helper service for the gate tests: the agent of one client.
-- The gate forwards the client's frames here as PTYPE_CLIENT (session =
-- fd). Frames: "ping <x>" -> "pong <x>"; "say <text>" -> broadcast by the
-- watchdog to every agent, which pushes "<fd>: <text>" to its client;
-- anything else is a protocol error: the watchdog is told ("bad") and kicks
-- the client. Lua commands: start{gate, client, watchdog}, push(text),
-- disconnect() (reports the frame count to the watchdog, then exits).
local skynet = require "skynet"
local socket = require "skynet.socket"

local fd, gate, watchdog
local frames = 0
local CMD = {}

local function reply(text)
	socket.write(fd, string.pack(">s2", text))
end

local function on_frame(msg)
	frames = frames + 1
	local word, rest = msg:match "^(%a+) (.*)$"
	if word == "ping" then
		reply("pong " .. rest)
	elseif word == "say" then
		skynet.send(watchdog, "lua", "broadcast", fd, rest)
	else
		skynet.send(watchdog, "lua", "bad", fd)
	end
end

skynet.register_protocol {
	name = "client",
	id = skynet.PTYPE_CLIENT,
	unpack = skynet.tostring,
	dispatch = function(session, _, msg)
		skynet.ignoreret()
		assert(session == fd, "frame from another fd")
		on_frame(msg)
	end,
}

function CMD.start(conf)
	fd, gate, watchdog = conf.client, conf.gate, conf.watchdog
	skynet.call(gate, "lua", "forward", fd)
end

function CMD.push(text)
	reply(text)
end

function CMD.disconnect()
	skynet.send(watchdog, "lua", "agent_exit", fd, frames)
	skynet.exit()
end

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, ...)
		local f = CMD[cmd]
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end)
