-- Helper for the smoke tests: a proxy built on skynet.forward_type. Lua
-- requests are dispatched as protocol "system" with their buffer kept, and
-- redirected to the target (source and session unchanged), so the target
-- answers the original caller. Text messages are counted by a filter-free
-- handler; argument "filter" starts a filter-based echo instead.
local skynet = require "skynet"
require "skynet.manager"

local mode, target = ...

if mode == "filter" then
	local seen = 0
	skynet.filter(function(ptype, msg, sz, session, source)
		seen = seen + 1
		return ptype, msg, sz, session, source
	end, function()
		skynet.dispatch("lua", function(_, _, cmd)
			assert(cmd == "seen")
			skynet.retpack(seen)
		end)
	end)
else
	target = tonumber(target)
	skynet.register_protocol {
		name = "system",
		id = skynet.PTYPE_SYSTEM,
		unpack = function(msg, sz)
			return msg, sz
		end,
		dispatch = function(session, source, msg, sz)
			skynet.ignoreret()
			skynet.redirect(target, source, "lua", session, msg, sz)
		end,
	}
	skynet.forward_type({ [skynet.PTYPE_LUA] = skynet.PTYPE_SYSTEM }, function() end)
end
