-- Bench helper: "go"(dest, n) sends n one-integer messages to dest.
local skynet = require "skynet"

local send = skynet.send

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, dest, n)
		if cmd == "go" then
			for _ = 1, n do
				send(dest, "lua", 1)
			end
		else
			error("bench_sender: unknown command (" .. tostring(cmd) .. ")")
		end
	end)
end)
