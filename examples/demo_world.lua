-- The demo world: ticks at 10 Hz (one tick per 10 cs, kept on its grid)
-- and reports its state every second.
local skynet = require "skynet"

local players = {}
local ticks = 0

local CMD = {}

function CMD.join(addr, name)
	players[addr] = name
	return true
end

local function tick_loop()
	local start = skynet.now()
	while true do
		ticks = ticks + 1
		if ticks % 10 == 0 then
			local n = 0
			for _ in pairs(players) do
				n = n + 1
			end
			skynet.error(string.format("world: tick %d at %.2f s, %d players", ticks,
				(skynet.now() - start) / 100, n))
			for addr in pairs(players) do
				skynet.send(addr, "lua", "world_tick", ticks)
			end
		end
		-- Sleep to the next 10 cs grid point, so a slow tick does not drift.
		skynet.sleep(start + ticks * 10 - skynet.now())
	end
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = assert(CMD[cmd], cmd)
		skynet.retpack(f(...))
	end)
	skynet.fork(tick_loop)
end)
