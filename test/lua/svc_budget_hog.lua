-- Helper service for test_budget and test_top: a service that misbehaves
-- on request, under a budget it sets itself.
--   budget(t)        skynet.budget(t), returns what is in force
--   loop(ms, count)  sends itself count "spin" messages (count 0: without
--                    end), each burning ms of real CPU; answers at once
--   spins()          how many spin messages ran so far
--   grow(mb)         keeps mb more MB of strings alive
--   slow(ms)         burns ms of CPU (a flood of these fills its queue)
--   hold()           never answers (the request stays open)
--   ping()           "pong"
local skynet = require "skynet"

local mode = ...
local CMD = {}
local spins = 0
local left = 0
local kept = {}
local burn_ms = 1

local function burn(ms)
	local until_ns = skynet.hpc() + math.floor(ms * 1000000)
	while skynet.hpc() < until_ns do
	end
end

function CMD.budget(t)
	return skynet.budget(t)
end

function CMD.loop(ms, count)
	burn_ms = ms
	left = count == 0 and math.huge or count
	skynet.send(skynet.self(), "lua", "spin")
	return true
end

function CMD.spins()
	return spins
end

function CMD.grow(mb)
	for _ = 1, mb * 16 do
		kept[#kept + 1] = string.rep("x", 65536 - 32) .. #kept
	end
	return #kept
end

function CMD.slow(ms)
	burn(ms)
end

function CMD.ping()
	return "pong"
end

-- With the argument "grow_at_start": over a 1 MB kill budget in its main
-- chunk, and a start that waits, so the kill comes during the launch.
if mode == "grow_at_start" then
	skynet.budget { memory_mb = 1, policy = "kill" }
	CMD.grow(3)
end

skynet.start(function()
	if mode == "grow_at_start" then
		skynet.sleep(100)
	end
	skynet.dispatch("lua", function(session, _, cmd, ...)
		if cmd == "spin" then
			burn(burn_ms)
			spins = spins + 1
			left = left - 1
			if left > 0 then
				skynet.send(skynet.self(), "lua", "spin")
			end
			return
		elseif cmd == "hold" then
			skynet.wait()
			return
		end
		local f = assert(CMD[cmd], cmd)
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end)
