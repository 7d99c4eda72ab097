-- Bench helper (footprint): the smallest useful Lua service, one that
-- installs a "lua" dispatch and waits for requests.
local skynet = require "skynet"

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		skynet.retpack(cmd)
	end)
end)
