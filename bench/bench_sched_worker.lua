-- Bench helper for bench_sched: one game-like service ticking every 100 ms,
-- either with skynet.timer every(10, f) or with a skynet.sleep(10) loop.
-- Lateness of tick k is its skynet.hpc time minus (first tick + k * 100 ms),
-- kept as a sparse histogram of 0.1 ms buckets.
--   start(mode, delay_cs)  after delay_cs, tick in mode "every" | "sleeploop"
--   reset()                forget the samples so far (end of the warm-up)
--   stop()                 stop ticking
--   hist() -> {bucket = count}
local skynet = require "skynet"
local timer = require "skynet.timer"

local hpc = skynet.hpc
local floor = math.floor

local PERIOD_MS <const> = 100

local hist = {}
local first, k = nil, 0
local running = false
local handle

local function sample()
	local h = hpc()
	if first == nil then
		first = h
		return
	end
	k = k + 1
	local b = floor(((h - first) / 1e6 - k * PERIOD_MS) * 10)
	hist[b] = (hist[b] or 0) + 1
end

local CMD = {}

function CMD.start(mode, delay)
	skynet.sleep(delay)
	first, k = nil, 0
	running = true
	if mode == "every" then
		handle = timer.every(10, function(missed)
			k = k + missed
			sample()
		end)
	else
		skynet.fork(function()
			while true do
				skynet.sleep(10)
				if not running then
					break
				end
				sample()
			end
		end)
	end
end

function CMD.reset()
	hist = {}
end

function CMD.stop()
	running = false
	if handle then
		handle:cancel()
		handle = nil
	end
end

function CMD.hist()
	return hist
end

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, ...)
		local f = CMD[cmd]
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end)
