-- Helper: "loop" tells the requester it started, then spins forever in Lua
-- until a SIGNAL breaks it; "count" reports how far the loop got.
local skynet = require "skynet"

local spins = 0

skynet.start(function()
	skynet.dispatch("lua", function(session, source, cmd)
		if cmd == "loop" then
			skynet.send(source, "lua", "mark", "looping")
			while true do
				spins = spins + 1
			end
		elseif cmd == "count" then
			skynet.retpack(spins)
		elseif cmd == "ping" then
			skynet.retpack("pong")
		else
			error("svc_loop: unknown command (" .. tostring(cmd) .. ")")
		end
	end)
end)
