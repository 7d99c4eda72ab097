-- Helper for test_footprint: what a fresh service holds of the framework.
-- Its main chunk looks, before using anything else, at the skynet table and
-- skynet.private (both filled on first use) and at whether the message path
-- is C (skynet.kernel); "probe" returns that and the Lua heap of the idle
-- service, in KiB after a full collection.
local skynet = require "skynet"
local S = require "skynet.private"

local unused_name = rawget(skynet, "wakeup") == nil -- a function this chunk has not used
local unused_private = rawget(S, "killthread") == nil -- an S function nothing has used
-- S serves functions only: none of the kernel's tables answers to its old name
local only_functions = S.waiting == nil and S.timers == nil and S.proto == nil and S.pool == nil
	and S.exited == nil
local wakeup_is_function = type(skynet.wakeup) == "function"
local kept = rawget(skynet, "wakeup") == skynet.wakeup -- stored by the first use
local send_in_c = debug.getinfo(skynet.send, "S").what == "C"

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		assert(cmd == "probe", "svc_kernel: unknown command")
		collectgarbage "collect"
		skynet.retpack(unused_name, unused_private, wakeup_is_function, kept, send_in_c,
			collectgarbage "count", only_functions)
	end)
end)
