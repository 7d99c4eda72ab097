-- Helper service for the gate tests: a watchdog over service/gate. Mode
-- "agent" (default) makes one svc_net_agent per client; mode
-- "accept" keeps clients without an agent, so their frames come here as
-- ("socket", "data", ...) notices: "ping <x>" is answered "pong <x>",
-- anything else kicks the client. Every notice is logged for the test
-- (events), as are "bad" reports and agent exits.
-- Commands: start(conf) -> address, port; events() -> list (cleared);
-- kick(fd); close(); agents() -> count; exits() -> fd -> frames;
-- started() -> agents started so far, fd of the latest.
local skynet = require "skynet"
local socket = require "skynet.socket"

local gate
local mode = "agent"
local agents = {} -- fd -> agent handle
local gone = {} -- fd -> true: closed while its agent was being made
local events = {}
local exits = {} -- fd -> frame count reported by the agent
local started, last_started = 0, nil -- agents started so far, fd of the latest
local CMD = {}
local SOCKET = {}

local function log(...)
	events[#events + 1] = table.pack(...)
end

local function drop(fd)
	local a = agents[fd]
	agents[fd] = nil
	skynet.call(gate, "lua", "kick", fd)
	if a then
		skynet.send(a, "lua", "disconnect")
	else
		gone[fd] = true
	end
end

function SOCKET.open(fd, addr)
	log("open", fd, addr)
	if mode == "accept" then
		skynet.call(gate, "lua", "accept", fd)
		return
	end
	local a = skynet.newservice("svc_net_agent")
	if gone[fd] then
		gone[fd] = nil
		skynet.send(a, "lua", "disconnect")
		return
	end
	agents[fd] = a
	skynet.call(a, "lua", "start", { gate = gate, client = fd, watchdog = skynet.self() })
	started = started + 1
	last_started = fd
end

function SOCKET.close(fd)
	log("close", fd)
	drop(fd)
end

function SOCKET.error(fd, text)
	log("error", fd, text)
	drop(fd)
end

function SOCKET.warning(fd, kb)
	log("warning", fd, kb)
end

function SOCKET.data(fd, msg)
	log("data", fd, #msg)
	local x = msg:match "^ping (.*)$"
	if x then
		socket.write(fd, string.pack(">s2", "pong " .. x))
	else
		log("bad", fd)
		skynet.call(gate, "lua", "kick", fd)
	end
end

function CMD.start(conf)
	mode = conf.mode or "agent"
	gate = skynet.newservice("gate")
	return skynet.call(gate, "lua", "open", conf)
end

function CMD.events()
	local e = events
	events = {}
	return e
end

function CMD.broadcast(fd, text)
	for _, a in pairs(agents) do
		skynet.send(a, "lua", "push", fd .. ": " .. text)
	end
end

function CMD.bad(fd)
	log("bad", fd)
	skynet.call(gate, "lua", "kick", fd)
end

function CMD.kick(fd)
	skynet.call(gate, "lua", "kick", fd)
end

function CMD.close()
	skynet.call(gate, "lua", "close")
end

function CMD.agents()
	local n = 0
	for _ in pairs(agents) do
		n = n + 1
	end
	return n
end

function CMD.agent_exit(fd, frames)
	exits[fd] = frames
end

function CMD.exits()
	return exits
end

function CMD.started()
	return started, last_started
end

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, sub, ...)
		if cmd == "socket" then
			SOCKET[sub](...)
			return
		end
		local f = CMD[cmd]
		if session == 0 then
			f(sub, ...)
		else
			skynet.retpack(f(sub, ...))
		end
	end)
end)
