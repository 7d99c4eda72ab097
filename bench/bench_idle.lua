-- Bench helper: an idle service (the footprint of a minimal Lua service).
local skynet = require "skynet"

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		skynet.retpack(cmd)
	end)
end)
