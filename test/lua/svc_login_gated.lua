-- test/node/test_login.sh's message server (snax.msgserver), server name
-- "sample". Arguments: the two login masters, expired_number, cache_bytes,
-- timeout (seconds). Requests (content -> response content):
--   "fail"          raises: an error response
--   "count"         the user's counter, increased: "count <n>"
--   "slow:<cs>"     sleeps cs centiseconds: "slow <cs>"
--   "big:<n>"       n bytes: "<counter>:" then "x"s (the counter increases)
--   "disconnects"   how often disconnect_handler ran for this user
--   "ip"            msgserver.ip(username)
--   "mem"           KiB of Lua heap of the whole node after a full GC
--   anything else   echoed
local skynet = require "skynet"
local msgserver = require "snax.msgserver"

local logind, strict, expired, cache_bytes, timeout = ...
local logins = { tonumber(logind), tonumber(strict) }

local servername
local users = {} -- uid -> u
local by_name = {} -- username -> u
local last_subid = 0

local server = {
	expired_number = tonumber(expired),
	cache_bytes = tonumber(cache_bytes),
	timeout = tonumber(timeout),
}

function server.login_handler(uid, secret)
	if users[uid] then
		error(uid .. " is already logged in")
	end
	last_subid = last_subid + 1
	local subid = last_subid
	local username = msgserver.username(uid, subid, servername)
	local u = { uid = uid, subid = subid, username = username, count = 0, disconnects = 0 }
	msgserver.login(username, secret)
	users[uid] = u
	by_name[username] = u
	return subid
end

function server.logout_handler(uid, subid)
	local u = users[uid]
	if u and u.subid == tonumber(subid) then
		msgserver.logout(u.username)
		users[uid] = nil
		by_name[u.username] = nil
		for _, login in ipairs(logins) do
			skynet.call(login, "lua", "logout", uid, subid)
		end
	end
end

function server.kick_handler(uid, subid)
	server.logout_handler(uid, subid)
end

function server.disconnect_handler(username)
	local u = by_name[username]
	if u then
		u.disconnects = u.disconnects + 1
	end
end

local function node_kb()
	local kb = 0
	for _, v in pairs(skynet.call(".launcher", "lua", "GC")) do
		kb = kb + (tonumber(v:match "^([%d.]+) Kb") or 0)
	end
	return string.format("%.0f", kb)
end

function server.request_handler(username, msg)
	local u = by_name[username] or { count = 0, disconnects = 0 }
	local cmd, arg = msg:match "^(%a+):?(.*)$"
	if msg == "fail" then
		error("fail on purpose")
	elseif msg == "count" then
		u.count = u.count + 1
		return "count " .. u.count
	elseif cmd == "slow" then
		skynet.sleep(tonumber(arg))
		return "slow " .. arg
	elseif cmd == "big" then
		u.count = u.count + 1
		local head = u.count .. ":"
		return head .. string.rep("x", tonumber(arg) - #head)
	elseif msg == "disconnects" then
		return u.disconnects
	elseif msg == "ip" then
		return msgserver.ip(username) or "nil"
	elseif msg == "mem" then
		return node_kb()
	end
	return msg
end

function server.register_handler(name)
	servername = name
	for _, login in ipairs(logins) do
		skynet.call(login, "lua", "register_gate", name, skynet.self())
	end
end

msgserver.start(server)
