-- Helper: this file does not compile ON PURPOSE. test_launch.lua checks
-- that launching it makes newservice raise while the node keeps running.
local skynet = require "skynet"

skynet.start(function()
	local x = = 1
end)
