-- Helper service of test_loglimit: its skynet.error sends each line to the
-- test (the `mark` command of testlib); it logs 5 lines through a limiter of
-- 2 lines per 1 s, then exits at once, before the count's timer: the count
-- must still be written (by the limiter's __gc when the state closes).
local skynet = require "skynet"
local loglimit = require "skynet.loglimit"

local test = math.tointeger(tonumber((...)))

skynet.start(function()
	skynet.error = function(line)
		skynet.send(test, "lua", "mark", line)
	end
	local log = loglimit.new(2, 1)
	for i = 1, 5 do
		log("exiting %d", i)
	end
	skynet.exit()
end)
