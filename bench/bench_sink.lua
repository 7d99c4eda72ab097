-- Bench helper: counts messages; tells the reporter when the expected
-- number arrived (with the skynet.hpc stamp of the last one).
local skynet = require "skynet"

local target = 0
local count = 0
local reporter = nil

skynet.start(function()
	skynet.dispatch("lua", function(_, _, v, ...)
		if v == 1 then
			count = count + 1
			if count == target then
				skynet.send(reporter, "lua", "done", skynet.hpc())
			end
		elseif v == "expect" then
			target, reporter = ...
			count = 0
			skynet.retpack(true)
		else
			error("bench_sink: unknown command (" .. tostring(v) .. ")")
		end
	end)
end)
