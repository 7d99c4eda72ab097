-- A demo player: every world report it casts a buff that expires after a
-- random 0.3-1.5 s through skynet.timeout; a new cast replaces (cancels) the
-- running one with skynet.killthread.
local skynet = require "skynet"

local name = ...
local buff -- the pending expiry timer of the current buff

local function cast(tick)
	local duration = math.random(30, 150)
	if buff then
		skynet.killthread(buff) -- replaced: the old expiry never fires
		skynet.error(string.format("%s: buff replaced at tick %d", name, tick))
	end
	buff = skynet.timeout(duration, function()
		buff = nil
		skynet.error(string.format("%s: buff expired after %.2f s", name, duration / 100))
	end)
end

skynet.start(function()
	math.randomseed(skynet.self())
	skynet.dispatch("lua", function(_, _, cmd, tick)
		if cmd == "world_tick" then
			cast(tick)
		end
	end)
end)
