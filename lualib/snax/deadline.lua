-- snax.deadline: the per-connection deadlines of snax.loginserver and
-- snax.msgserver. A connection record c holds at most one pending deadline
-- (c.timer); cancelling it drops the timer, so a closed connection is not
-- kept alive until its deadline would have fired.
local skynet = require "skynet"

local M = {}

-- c's pending deadline (c.timer) is dropped.
function M.cancel(c)
	if c.timer then
		skynet.killthread(c.timer)
		c.timer = nil
	end
end

-- f runs in cs centiseconds unless M.cancel(c) comes first.
function M.arm(c, cs, f)
	c.timer = skynet.timeout(cs, function()
		c.timer = nil
		f()
	end)
end

return M
