-- Helper for test_footprint: what a fresh service holds of the framework.
-- Its main chunk looks, before using anything else, at the skynet table and
-- skynet.private (both filled on first use) and at whether the message path
-- is C (skynet.kernel); "probe" returns that and the Lua heap of the idle
-- service, in KiB after a full collection.
local skynet = require "skynet"
local S = require "skynet.private"

local unused_name = rawget(skynet, "wakeup") == nil -- a function this chunk has not used
local unused_table = rawget(S, "fired") == nil -- a state table nothing has used
local wakeup_is_function = type(skynet.wakeup) == "function"
local kept = rawget(skynet, "wakeup") == skynet.wakeup -- stored by the first use
local send_in_c = debug.getinfo(skynet.send, "S").what == "C"

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		assert(cmd == "probe", "svc_kernel: unknown command")
		collectgarbage "collect"
		skynet.retpack(unused_name, unused_table, wakeup_is_function, kept, send_in_c,
			collectgarbage "count")
	end)
end)
