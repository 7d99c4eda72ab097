-- skynet.loglimit: a bounded rate of log lines, for the error paths that
-- outsiders (network peers, clients) can trigger once per event.
--
--   local loglimit = require "skynet.loglimit"
--   local log = loglimit.new()        -- 10 lines per 1 s; loglimit.new(lines, period_s)
--   log("cluster agent %s: %s", peer, err)
--
-- A limiter owns its state table (nothing is shared between limiters). A
-- period starts at the first call after the previous period ended
-- (skynet.now(), cs). Within a period the first `lines` calls are formatted
-- with string.format and written with skynet.error. The next call is
-- formatted once more, kept as the sample, and arms one skynet.timeout for
-- the end of the period; every later call of the period only adds one to a
-- counter. When the timer fires it writes the sample with the count of
-- suppressed calls, and the next call starts a new period. So a period
-- writes at most lines + 1 lines, and a limiter that stays under its limit
-- never arms a timer.
--
-- A count is never lost: if the service exits while a count waits for its
-- timer, the state's __gc writes it when the service's Lua state closes
-- (skynet.error does not block, so it may run from a finalizer; the pending
-- timer holds the state, so it is not collected earlier).
--
-- State (one table per limiter): period_end (cs; a call at or after it
-- starts a new period), period_start, written (lines written this period),
-- suppressed (calls counted since the sample, the sample included; > 0
-- while the report timer is pending), sample (the first suppressed call's
-- text).
local skynet = require "skynet"

local sformat = string.format
local mtointeger = math.tointeger
local mceil = math.ceil

local M = {}

local DEFAULT_LINES <const> = 10
local DEFAULT_PERIOD_S <const> = 1
local MAX_PERIOD_S <const> = 86400

local function check_lines(lines)
	if lines == nil then
		return DEFAULT_LINES
	end
	local n = mtointeger(lines)
	if n == nil or n < 1 then
		error(sformat("loglimit.new: lines must be an integer >= 1 (%s)", tostring(lines)), 3)
	end
	return n
end

local function check_period(period_s)
	if period_s == nil then
		return DEFAULT_PERIOD_S * 100
	end
	if type(period_s) ~= "number" or not (period_s > 0 and period_s <= MAX_PERIOD_S) then
		error(sformat("loglimit.new: period_s must be a number of seconds in (0, %d] (%s)",
			MAX_PERIOD_S, tostring(period_s)), 3)
	end
	return mceil(period_s * 100)
end

-- Writes the pending count of st, if any.
local function report(st)
	local n = st.suppressed
	if n == 0 then
		return
	end
	local elapsed = (skynet.now() - st.period_start) / 100
	st.suppressed = 0
	local text = st.sample
	st.sample = false
	skynet.error(sformat("%s (first of %d lines suppressed in %.2f s)", text, n, elapsed))
end

local STATE_MT <const> = { __gc = report }

function M.new(lines, period_s)
	local max_lines = check_lines(lines)
	local period_cs = check_period(period_s)
	local st = setmetatable({
		period_start = 0, period_end = 0, written = 0, suppressed = 0, sample = false,
	}, STATE_MT)

	local function on_period_end()
		report(st)
	end

	return function(fmt, ...)
		local n = st.suppressed
		if n > 0 then
			st.suppressed = n + 1
			return
		end
		local now = skynet.now()
		if now >= st.period_end then
			st.period_start, st.period_end = now, now + period_cs
			st.written = 0
		end
		if st.written < max_lines then
			st.written = st.written + 1
			skynet.error(sformat(fmt, ...))
			return
		end
		st.sample = sformat(fmt, ...)
		st.suppressed = 1
		skynet.timeout(st.period_end - now, on_period_end)
	end
end

return M
