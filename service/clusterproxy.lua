-- clusterproxy <node> <address> <sender>: a local stand-in for a remote
-- service (started by clusterd, which resolves the node's sender first, so
-- the start waits, or fails, like a first cluster.call).
--
-- lua and snax messages sent here go to <address> on cluster node <node> as
-- they are (their payload is not unpacked): a message with session 0
-- becomes a push, any other a call whose raw reply is sent back, so
-- skynet.call(proxy, "lua", ...) behaves like cluster.call(node, address,
-- ...) and skynet.send like cluster.send. An address made of digits only is
-- a numeric handle. In forward mode the framework frees no message, so this
-- service makes no call of its own (a reply to it would never be freed):
-- every reply it gets is handed on.
local skynet = require "skynet"
require "skynet.manager"

local node, address, sender = ...
address = math.tointeger(tonumber(address)) or address
sender = math.tointeger(tonumber(sender))

skynet.register_protocol {
	name = "system",
	id = skynet.PTYPE_SYSTEM,
	unpack = function(msg, sz)
		return msg, sz
	end,
}

local forward_map = {
	[skynet.PTYPE_SNAX] = skynet.PTYPE_SYSTEM,
	[skynet.PTYPE_LUA] = skynet.PTYPE_SYSTEM,
	[skynet.PTYPE_RESPONSE] = skynet.PTYPE_RESPONSE,
}

skynet.forward_type(forward_map, function()
	if sender == nil then
		error(string.format("clusterproxy %s %s: no sender", node, tostring(address)), 0)
	end
	skynet.dispatch("system", function(session, _, msg, sz)
		if session == 0 then
			skynet.send(sender, "lua", "push", address, msg, sz)
		else
			skynet.ret(skynet.rawcall(sender, "lua", skynet.pack("req", address, msg, sz)))
		end
	end)
end)
