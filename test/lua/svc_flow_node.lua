-- The node of test/node/test_flow.sh and bench/bench_flow.sh: a standard
-- gate (service/gate.lua) on 127.0.0.1, a free port, with this service as
-- its watchdog; each connection gets its own svc_flow_agent, to which the
-- gate forwards it (so the agent is the connection's consumer for flow
-- control). Log lines the scripts read:
--   "flow: listen port=<n>"            once the gate listens
--   "flow: open fd=<fd> addr=<a>"      a client connected
--   "flow: warning fd=<fd> kb=<kb>"    output piles up for fd
--   "flow: close fd=<fd>"              fd closed (close or error)
local skynet = require "skynet"

local gate
local agents = {} -- fd -> agent

local SOCKET = {}

function SOCKET.open(fd, addr)
	skynet.error(string.format("flow: open fd=%d addr=%s", fd, addr))
	local agent = skynet.newservice("svc_flow_agent", fd, gate)
	agents[fd] = agent
	skynet.call(gate, "lua", "forward", fd, 0, agent)
end

local function gone(fd)
	skynet.error(string.format("flow: close fd=%d", fd))
	local agent = agents[fd]
	agents[fd] = nil
	if agent then
		skynet.send(agent, "lua", "exit")
	end
end

SOCKET.close = gone

function SOCKET.error(fd)
	gone(fd)
end

function SOCKET.warning(fd, kb)
	skynet.error(string.format("flow: warning fd=%d kb=%d", fd, kb))
end

function SOCKET.data() end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, what, sub, ...)
		if what == "socket" then
			local f = SOCKET[sub]
			if f then
				f(...)
			end
		end
	end)
	gate = skynet.newservice("gate")
	local _, port = skynet.call(gate, "lua", "open", {
		address = "127.0.0.1",
		port = 0,
		maxclient = 64,
		watchdog = skynet.self(),
	})
	skynet.error(string.format("flow: listen port=%d", port))
end)
