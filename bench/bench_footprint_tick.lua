-- Bench helper (footprint ticks): on "go", sleeps a random 1..10 ticks in a
-- loop until the deadline (a skynet.hpc stamp) and counts its wake-ups and
-- their lateness (wake-up time against the time of the sleep call plus the
-- ticks asked, in whole milliseconds); "stats" returns the count and the
-- lateness histogram as a string "ms=count ...". Seeded by the service's
-- address, so each run sleeps the same sequence.
local skynet = require "skynet"

local hpc = skynet.hpc
local sleep = skynet.sleep
local random = math.random
local floor = math.floor

local wakes = 0
local hist = {} -- whole ms of lateness -> count

local function tick_until(deadline)
	local now = hpc()
	while now < deadline do
		local ti = random(1, 10)
		local due = now + ti * 10000000
		sleep(ti)
		now = hpc()
		if now <= deadline then
			wakes = wakes + 1
			local ms = floor((now - due) / 1000000)
			hist[ms] = (hist[ms] or 0) + 1
		end
	end
end

skynet.start(function()
	math.randomseed(skynet.self())
	skynet.dispatch("lua", function(_, _, cmd, deadline)
		if cmd == "go" then
			tick_until(deadline)
		elseif cmd == "stats" then
			local parts = {}
			for ms, n in pairs(hist) do
				parts[#parts + 1] = ms .. "=" .. n
			end
			skynet.retpack(wakes, table.concat(parts, " "))
		else
			error("bench_footprint_tick: unknown command (" .. tostring(cmd) .. ")")
		end
	end)
end)
