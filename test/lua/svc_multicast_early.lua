-- Calls multicast.new in its main chunk, before the init functions ran;
-- answers any call with what that gave (false, error text).
local skynet = require "skynet"
local mc = require "skynet.multicast"

local ok, err = pcall(mc.new)

skynet.start(function()
	skynet.dispatch("lua", function()
		skynet.retpack(ok, tostring(err))
	end)
end)
