-- skynet.timer every over a simulated day (virtual time): runs stay on
-- the grid start + k * period to the tick, with a body that sleeps 40% of
-- the period and blocks on a call, for three schedules with co-prime
-- periods (1 minute, ~50 s, ~6 min).
--
-- The span is 24 hours when the runner's limit (config key test_timeout,
-- virtual cs for the whole test) leaves an hour to spare, else the limit
-- minus an hour.
local skynet = require "skynet"
local timer = require "skynet.timer"
local t = require "testlib"

local HOUR <const> = 360000
local DAY <const> = 24 * HOUR

local function span()
	local limit = tonumber(skynet.getenv "test_timeout") or DAY
	return math.min(DAY, limit - HOUR)
end

t.case("every stays on its grid for a simulated day", function()
	local len = span()
	local t0 = skynet.now()
	local schedules = {}
	for _, period in ipairs({ 6000, 5003, 36007 }) do -- a minute, and two primes
		local s = { period = period, n = 0, off_grid = 0, missed = 0 }
		s.h = timer.every(period, function(missed)
			s.n = s.n + 1
			s.missed = s.missed + missed
			if skynet.now() - t0 ~= s.n * period then
				s.off_grid = s.off_grid + 1
				s.first_off = s.first_off or (skynet.now() - t0)
			end
			skynet.sleep(period * 4 // 10)
			skynet.call(skynet.self(), "lua", "ping")
		end)
		schedules[#schedules + 1] = s
	end
	skynet.sleep(len + 1)
	for _, s in ipairs(schedules) do
		s.h:cancel()
		local what = "period " .. s.period
		t.eq(s.n, len // s.period, what .. ": runs")
		t.eq(s.off_grid, 0, what .. ": runs off the grid (first at " .. tostring(s.first_off) .. ")")
		t.eq(s.missed, 0, what .. ": missed")
	end
	skynet.sleep(36007) -- the last bodies finish
	t.eq(skynet.stat "timers", 0, "no timer left")
end)

t.start({
	ping = function()
		skynet.retpack(true)
	end,
})
