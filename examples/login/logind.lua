-- The login server of the example (snax.loginserver). The token a client
-- sends is b64(user) "@" b64(server) ":" b64(password); every user's
-- password is "password". Game servers (gate nodes) register themselves
-- with `register_gate(server, node)`; a login hands the player to its gate
-- node's "@gated" service. A user still online is kicked first.
local skynet = require "skynet"
local cluster = require "skynet.cluster"
local crypt = require "skynet.crypt"
local login = require "snax.loginserver"

local server = {
	host = "0.0.0.0",
	port = assert(tonumber(skynet.getenv "login_port"), "config: login_port"),
	multilogin = false, -- a second login of a uid in progress gets 406
	name = "login_master",
	instance = 4,
	timeout = 10, -- seconds to log in, else the connection is closed
	linger = 30, -- seconds a connection may stay open after its reply
}

local nodes = {} -- server name -> gate node name (master)
local online = {} -- uid -> { server =, subid = } (master)

function server.auth_handler(token)
	local user, srv, password = token:match "^([^@]*)@([^:]*):(.*)$"
	assert(user, "bad token")
	assert(crypt.base64decode(password) == "password", "wrong password")
	return crypt.base64decode(srv), crypt.base64decode(user)
end

function server.login_handler(srv, uid, secret)
	skynet.error(string.format("%s@%s is logging in, secret %s", uid, srv, crypt.hexencode(secret)))
	local node = assert(nodes[srv], "unknown server")
	local last = online[uid]
	if last then
		cluster.call(nodes[last.server], "@gated", "kick", uid, last.subid)
	end
	if online[uid] then
		error(string.format("user %s is already online", uid))
	end
	local subid = tostring(cluster.call(node, "@gated", "login", uid, secret))
	online[uid] = { server = srv, subid = subid }
	return subid
end

local CMD = {}

function CMD.register_gate(srv, node)
	nodes[srv] = node
	skynet.error(string.format("game server %s is on node %s", srv, node))
end

function CMD.logout(uid, subid)
	local u = online[uid]
	if u and u.subid == tostring(subid) then
		online[uid] = nil
		skynet.error(string.format("%s logged out", uid))
	end
end

function server.command_handler(cmd, ...)
	local f = assert(CMD[cmd], "unknown command")
	return f(...)
end

login(server)
