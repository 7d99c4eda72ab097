-- Bench helper: "echo" answers its argument; "calls"(dest, n) makes n
-- sequential calls to dest and returns the elapsed skynet.hpc ns;
-- "traced_calls"(dest, n) the same from a traced coroutine (skynet.tracing:
-- each call carries the trace, each answer is a span).
local skynet = require "skynet"

local call = skynet.call
local hpc = skynet.hpc

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, a, b)
		if cmd == "echo" then
			skynet.retpack(a)
		elseif cmd == "calls" or cmd == "traced_calls" then
			if cmd == "traced_calls" then
				require("skynet.tracing").begin()
			end
			local t0 = hpc()
			for i = 1, b do
				call(a, "lua", "echo", i)
			end
			skynet.retpack(hpc() - t0)
		else
			error("bench_echo: unknown command (" .. tostring(cmd) .. ")")
		end
	end)
end)
