-- gate: the standard client gate, built on snax.gateserver.
--
-- Commands (lua protocol, each replied to): open(conf) -> address, port;
-- close(); forward(fd, client, address); accept(fd); kick(fd).
-- Notices to the watchdog (lua sends, no reply): ("socket", "open", fd,
-- "ip:port"), ("socket", "close", fd), ("socket", "error", fd, text),
-- ("socket", "warning", fd, kb) and, for a client without an agent,
-- ("socket", "data", fd, payload).
-- A forwarded client's frames go to its agent as PTYPE_CLIENT messages with
-- session = fd and source = client (default 0), payload without header.
-- forward also makes the agent the connection's consumer for flow control
-- (the connection is not read while the agent is behind); accept makes the
-- gate the consumer again.
local skynet = require "skynet"
local gateserver = require "snax.gateserver"
local netpack = require "skynet.netpack"

local watchdog
local connection = {} -- fd -> { fd, addr, agent, client }

skynet.register_protocol { name = "client", id = skynet.PTYPE_CLIENT }

local handler = {}

function handler.open(source, conf)
	watchdog = conf.watchdog or source
	return conf.address, conf.port
end

function handler.message(fd, msg, sz)
	local c = connection[fd]
	local agent = c and c.agent
	if agent then
		-- the agent gets the buffer (redirect donates it)
		skynet.redirect(agent, c.client, "client", fd, msg, sz)
	else
		skynet.send(watchdog, "lua", "socket", "data", fd, netpack.tostring(msg, sz))
	end
end

function handler.connect(fd, addr)
	connection[fd] = { fd = fd, addr = addr }
	skynet.send(watchdog, "lua", "socket", "open", fd, addr)
end

function handler.disconnect(fd)
	connection[fd] = nil
	skynet.send(watchdog, "lua", "socket", "close", fd)
end

function handler.error(fd, text)
	connection[fd] = nil
	skynet.send(watchdog, "lua", "socket", "error", fd, text)
end

function handler.warning(fd, kb)
	skynet.send(watchdog, "lua", "socket", "warning", fd, kb)
end

local CMD = {}

function CMD.forward(source, fd, client, address)
	local c = assert(connection[fd], "gate.forward: unknown fd")
	c.client = client or 0
	c.agent = address or source
	gateserver.consumer(fd, c.agent)
	gateserver.openclient(fd)
end

function CMD.accept(_, fd)
	local c = assert(connection[fd], "gate.accept: unknown fd")
	c.agent = nil
	c.client = nil
	gateserver.consumer(fd, nil)
	gateserver.openclient(fd)
end

function CMD.kick(_, fd)
	gateserver.closeclient(fd)
end

function handler.command(cmd, source, ...)
	local f = CMD[cmd]
	if f == nil then
		error(string.format("gate: unknown command (%s)", tostring(cmd)))
	end
	return f(source, ...)
end

gateserver.start(handler)
