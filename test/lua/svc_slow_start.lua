-- Helper: its start function sleeps (virtual time) before returning. The
-- first argument, when given, is the address told "started <self>" at start.
local skynet = require "skynet"

local notify = ...

skynet.start(function()
	if notify then
		skynet.send(tonumber(notify), "lua", "mark", "started " .. skynet.address(skynet.self()))
	end
	skynet.sleep(50)
	skynet.dispatch("lua", function(_, _, cmd)
		skynet.retpack(cmd == "ping" and "pong" or nil)
	end)
end)
