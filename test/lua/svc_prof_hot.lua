-- A service for test_profiler: burns CPU in a known function when told.
--   burn(cs)         spin in burn_hot (called through outer_work) for cs of real time
--   burn_c(cs)       spin in string.rep (a C function) for cs
--   burn_exit(cs)    burn, then exit (the reply comes first)
local skynet = require "skynet"

local hpc = skynet.hpc

-- The hot function: Lua arithmetic between clock reads.
local function burn_hot(deadline)
	local x = 0
	while hpc() < deadline do
		for i = 1, 2000 do
			x = x + i * i % 7
		end
	end
	return x
end

local function outer_work(cs)
	local x = burn_hot(hpc() + cs * 10000000) -- not a tail call: outer_work stays on the stack
	return x
end

local function burn_c(cs)
	local deadline = hpc() + cs * 10000000
	local n = 0
	while hpc() < deadline do
		n = n + #string.rep("x", 1 << 20)
	end
	return n
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, cs)
		if cmd == "burn" then
			skynet.retpack(outer_work(cs))
		elseif cmd == "burn_c" then
			skynet.retpack(burn_c(cs))
		elseif cmd == "burn_exit" then
			skynet.retpack(true)
			outer_work(cs)
			skynet.exit()
		else
			error("svc_prof_hot: unknown command " .. tostring(cmd))
		end
	end)
end)
