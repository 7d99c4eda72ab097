-- The handlers of the test login servers (svc_login_logind.lua and
-- svc_login_strict.lua, run by test/node/test_login.sh): a module, so that
-- both scripts and their slaves build the same conf.
--   token    b64(user) "@" b64(server) ":" b64(password); the password
--            must be "password" (else auth_handler raises: 401)
--   login    an unknown server raises (403); the user "slow" sleeps 2 s
--            in login_handler (so that a second login meets the uid lock:
--            406); "nil-subid" gets subid nil, "number-subid" 42 (neither
--            reaches a gate); a user online is kicked through its gate first
--   commands register_gate(server, gate), logout(uid, subid)
local skynet = require "skynet"
local crypt = require "skynet.crypt"

local M = {}

function M.conf(fields)
	local gates = {} -- server -> gate (master)
	local online = {} -- uid -> { gate =, subid = } (master)
	local conf = {
		host = "127.0.0.1",
		port = 0,
		instance = 2,
	}
	for k, v in pairs(fields) do
		conf[k] = v
	end

	function conf.auth_handler(token)
		local user, server, password = token:match "^([^@]*)@([^:]*):(.*)$"
		assert(user, "bad token")
		assert(crypt.base64decode(password) == "password", "wrong password")
		return crypt.base64decode(server), crypt.base64decode(user)
	end

	function conf.login_handler(server, uid, secret)
		local gate = gates[server]
		if gate == nil then
			error("unknown server " .. server)
		end
		if uid == "slow" then
			skynet.sleep(200)
		elseif uid == "nil-subid" then
			return nil
		elseif uid == "number-subid" then
			return 42
		end
		local last = online[uid]
		if last then
			skynet.call(last.gate, "lua", "kick", uid, last.subid)
		end
		if online[uid] then
			error("user " .. uid .. " is still online")
		end
		local subid = tostring(skynet.call(gate, "lua", "login", uid, secret))
		online[uid] = { gate = gate, subid = subid }
		return subid
	end

	local CMD = {}

	function CMD.register_gate(server, gate)
		gates[server] = gate
	end

	function CMD.logout(uid, subid)
		local u = online[uid]
		if u and u.subid == tostring(subid) then
			online[uid] = nil
		end
	end

	function conf.command_handler(cmd, ...)
		return assert(CMD[cmd], "unknown command")(...)
	end

	return conf
end

return M
