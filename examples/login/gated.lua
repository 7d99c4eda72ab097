-- The message server of the example (snax.msgserver), for the game server
-- "sample". Argument: this node's cluster name. Each login gets its own
-- agent (agent.lua); requests go to it as `client` messages and its answer
-- is the response. Logging out (or being kicked by a newer login) ends the
-- agent and tells the login node.
local skynet = require "skynet"
local cluster = require "skynet.cluster"
local msgserver = require "snax.msgserver"

local node = ...
local servername
local users = {} -- uid -> { username =, subid =, agent = }
local agents = {} -- username -> agent
local last_subid = 0

local server = {
	timeout = 10, -- seconds to send the handshake
}

function server.login_handler(uid, secret)
	if users[uid] then
		error(string.format("%s is already logged in", uid))
	end
	last_subid = last_subid + 1
	local subid = last_subid
	local username = msgserver.username(uid, subid, servername)
	local agent = skynet.newservice("agent", uid)
	users[uid] = { username = username, subid = subid, agent = agent }
	agents[username] = agent
	msgserver.login(username, secret)
	return subid
end

function server.logout_handler(uid, subid)
	local u = users[uid]
	if u == nil or u.subid ~= tonumber(subid) then
		return
	end
	users[uid] = nil
	agents[u.username] = nil
	msgserver.logout(u.username)
	skynet.send(u.agent, "lua", "exit")
	-- a call, not a send: when a newer login kicks this one, the login node
	-- must have forgotten it before the kick returns
	cluster.call("login", "@logind", "logout", uid, subid)
end

function server.kick_handler(uid, subid)
	server.logout_handler(uid, subid)
end

function server.disconnect_handler(username)
	local agent = agents[username]
	if agent then
		skynet.send(agent, "lua", "afk")
	end
end

function server.request_handler(username, msg)
	local agent = assert(agents[username], "no agent")
	return skynet.tostring(skynet.rawcall(agent, "client", msg))
end

function server.register_handler(name)
	servername = name
	cluster.call("login", "@logind", "register_gate", servername, node)
end

msgserver.start(server)
