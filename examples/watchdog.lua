-- The demo game's watchdog (the watchdog / agent pattern): owns the gate, makes one
-- agent per accepted client and ends it when the client goes.
--
-- Gate notices arrive as lua sends ("socket", event, fd, ...), without a
-- reply. Commands: start(settings, world) -> address, port (listens);
-- close(fd) (an agent asks to disconnect its client); gone(fd) (an agent
-- has ended, however: sent by its last will, see agent.lua); agents() ->
-- fd -> agent (tests); stats() -> { opened = connections the gate reported
-- since start, agents = agents now }.
--
-- An agent that ends while its client is still attached to it (killed from
-- the debug console, say) leaves the client talking to nobody: on its
-- "gone" the watchdog pushes "kick ended ..." to the client and closes the
-- connection. A "gone" from an agent that no longer owns fd (it was
-- disconnected first, the usual way) changes nothing.
local skynet = require "skynet"
local socket = require "skynet.socket"
local settings = require "settings"
local loglimit = require "skynet.loglimit"

local sformat = string.format

local S -- settings
local gate, world
local agents = {} -- fd -> agent
local making = {} -- fd -> true while its agent is being made
local gone = {} -- fd -> true: closed while its agent was being made
local opened = 0 -- connections the gate reported (its "open" notices)
local log = loglimit.new() -- the lines clients can cause (one per connection each)

local SOCKET = {}
local CMD = {}

local function new_service(name)
	if S.wrapper ~= "" then
		return skynet.newservice(S.wrapper, name)
	end
	return skynet.newservice(name)
end

-- Ends the agent of fd (the client is closed or closing).
local function drop(fd)
	local a = agents[fd]
	agents[fd] = nil
	if making[fd] then
		gone[fd] = true
	end
	skynet.call(gate, "lua", "kick", fd)
	if a then
		skynet.send(a, "lua", "disconnect")
	end
end

function SOCKET.open(fd)
	opened = opened + 1
	making[fd] = true
	local ok, a = pcall(new_service, "agent")
	making[fd] = nil
	if not ok or a == nil then
		log("error: watchdog: no agent for fd=%d: %s", fd, tostring(a))
		gone[fd] = nil
		skynet.call(gate, "lua", "kick", fd)
		return
	end
	if gone[fd] then
		gone[fd] = nil
		skynet.send(a, "lua", "disconnect")
		return
	end
	agents[fd] = a
	local conf = { gate = gate, client = fd, watchdog = skynet.self(), world = world, settings = S }
	local started, err = pcall(skynet.call, a, "lua", "start", conf)
	if not started and agents[fd] == a then
		log("error: watchdog: agent start failed fd=%d: %s", fd, tostring(err))
		drop(fd)
	end
end

function SOCKET.close(fd)
	drop(fd)
end

function SOCKET.error(fd)
	drop(fd)
end

function SOCKET.warning(fd, kb)
	log("warn: watchdog: %d KB unsent to fd=%d", kb, fd)
end

function SOCKET.data()
	-- frames from a client without an agent: none in this design
end

function CMD.start(_, s, world_addr)
	S = settings.make(s)
	world = world_addr
	gate = skynet.newservice("gate")
	return skynet.call(gate, "lua", "open", {
		address = S.gate_address, port = S.gate_port, maxclient = S.maxclient, nodelay = true,
		watchdog = skynet.self(),
	})
end

function CMD.close(_, fd)
	skynet.call(gate, "lua", "kick", fd)
end

function CMD.gone(source, fd)
	if fd == nil or agents[fd] ~= source then
		return
	end
	socket.write(fd, string.pack(">s2", "kick ended (the server ended your session)"))
	drop(fd)
end

function CMD.agents()
	return agents
end

function CMD.stats()
	local n = 0
	for _ in pairs(agents) do
		n = n + 1
	end
	return { opened = opened, agents = n }
end

skynet.start(function()
	skynet.dispatch("lua", function(session, source, cmd, sub, ...)
		if cmd == "socket" then
			local f = SOCKET[sub]
			if f then
				f(...)
			end
			return
		end
		local f = CMD[cmd]
		if f == nil then
			skynet.error(sformat("error: watchdog: unknown command (%s)", tostring(cmd)))
			if session ~= 0 then
				skynet.response()(false) -- the caller's call fails, not a nil answer
			end
			return
		end
		if session == 0 then
			f(source, sub, ...)
		else
			skynet.retpack(f(source, sub, ...))
		end
	end)
end)
