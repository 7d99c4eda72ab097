-- skynet.timer: repeating, wall-clock and cron schedules, and calls with a
-- deadline, for game logic.
--
--   local timer = require "skynet.timer"
--   local h = timer.every(10, function(missed) world_tick() end)   -- 100 ms
--   timer.every_after(50, regen)                    -- 500 ms after each run ends
--   timer.at(os.time { year = 2030, month = 1, day = 1, hour = 0 }, open_sale)
--   timer.cron("0 5 * * *", daily_reset, { tz = "+08:00" })
--   local ok, r = timer.timeout_call(300, addr, "lua", "query")  -- false, "timeout"
--   h:cancel()
--
-- Each live schedule has exactly one pending C timer. every and every_after
-- wait for their first run with a skynet.timeout; the coroutine that runs
-- it then stays with the schedule and sleeps between runs (a sleep per run
-- costs about a quarter less CPU than a new timeout per run: no timeout
-- object, no coroutine hand-off; the price is one parked coroutine, ~1 KiB,
-- per repeating schedule). at and cron, which fire rarely and wait long,
-- chain skynet.timeouts and hold no coroutine while they wait. cancel()
-- removes the pending C timer at once (skynet.killthread on the timeout
-- object or on the sleeping coroutine), so no message comes. When the
-- service exits, the core drops its timers, and its schedules with them.
--
-- Runs never overlap: the next wait starts when a run ends (a run may
-- block: call, sleep). cancel() stops later runs; it does not interrupt a
-- run in progress (called from inside f, the schedule ends when f returns).
--
-- every(period_cs, f): fixed rate on the grid start + k * period, where
-- start is skynet.now() when every() is called and the first run is at
-- start + period. The grid never moves, so slow runs and late ticks do not
-- drift later runs. Missed grid points are not replayed: when a run is due
-- while the previous one still runs (or the node stalled), one run happens
-- at once, for the latest grid point passed, and f(missed, handle) receives
-- the number of grid points skipped (0 normally).
--
-- Wall clock (at, cron). Deadlines are epoch seconds read from
-- skynet.core.walltime() (CLOCK_REALTIME; in virtual time it moves with
-- virtual time). A wait is made of C timer chunks of at most WALL_CHECK_CS,
-- and the wall clock is read again whenever one fires: a run never starts
-- before its wall time (a timer that fires early, because the clock was set
-- back or slewed, is re-armed for the rest), and a forward step of the
-- clock is noticed within one chunk (60 s). So uptime and monotonic drift
-- never matter.
--
-- cron(spec, f): the syntax of spec, time zones and DST rules are described in
-- skynet/cron.lua and skynet/tz.lua (both loaded on the first cron call).
-- Fire instants that pass while a run is going, the node stalls or the
-- clock steps forward collapse into one run; after a backward step a fired
-- instant never fires again.
--
-- Errors raised by f are logged with a traceback; the schedule goes on
-- unless opts.stop_on_error is set. opts.name is added to that log line.
--
-- Handles: h:cancel(); read-only fields kind, cancelled, due (every: the
-- skynet.now() of the next grid point) and target (at, cron: the epoch
-- second of the next run).
local skynet = require "skynet"
local core = require "skynet.core"

local M = {}

local xpcall = xpcall
local traceback = debug.traceback
local sformat = string.format
local mtype = math.type
local timeout = skynet.timeout
local sleep = skynet.sleep
local now = skynet.now
local running = coroutine.running

local WALL_CHECK_CS <const> = 6000 -- longest wall-clock wait between two readings
local WALL_EPS <const> = 0.001 -- a wall deadline is reached this close (seconds)
local MAX_CS <const> = 0x7fffffff -- longest C timer

local wallclock = core.walltime

local handle_mt = {}
handle_mt.__index = handle_mt

-- Stops the schedule: true if it was live, false if it had ended already.
function handle_mt:cancel()
	if self.cancelled then
		return false
	end
	self.cancelled = true
	local obj = self.obj
	if obj then
		self.obj = nil
		skynet.killthread(obj) -- removes the pending C timer
	elseif self.sleeping then
		self.sleeping = false
		skynet.killthread(self.co) -- ends its sleep and removes the C timer
		self.co = nil
	end -- else f is running: the schedule ends when it returns
	return true
end

function handle_mt:__tostring()
	return sformat("timer.%s: %s", self.kind, self.cancelled and "ended" or "live")
end

local function check_cs(func, what, v)
	if mtype(v) ~= "integer" or v < 1 or v > MAX_CS then
		error(sformat("timer.%s: %s must be an integer of cs in 1..%d (%s)", func, what, MAX_CS,
			tostring(v)), 3)
	end
end

local function new_handle(kind, f, opts)
	if type(f) ~= "function" then
		error(sformat("timer.%s: f must be a function (%s)", kind, tostring(f)), 3)
	end
	if opts ~= nil and type(opts) ~= "table" then
		error(sformat("timer.%s: opts must be a table (%s)", kind, tostring(opts)), 3)
	end
	return setmetatable({
		kind = kind,
		f = f,
		stop_on_error = opts and opts.stop_on_error or false,
		name = opts and opts.name,
		cancelled = false,
		obj = nil, -- the pending timeout object
		tick = nil, -- the function each timeout runs (at, cron)
		co = nil, -- the coroutine of every, every_after after their first run
		sleeping = false, -- co waits in sleep between runs
	}, handle_mt)
end

-- Logs an error of h.f and stops h if configured.
local function failed(h, err)
	local stop = h.stop_on_error and not h.cancelled
	skynet.error(sformat("error: timer.%s: scheduled function failed%s%s: %s", h.kind,
		h.name and " name=" .. tostring(h.name) or "", stop and ", schedule stopped" or "",
		tostring(err)))
	if stop then
		h:cancel()
	end
end

-- Runs h.f(...) under xpcall.
local function run(h, ...)
	local ok, err = xpcall(h.f, traceback, ...)
	if not ok then
		failed(h, err)
	end
end

---------------------------------------------------------------- every, every_after

-- The loops keep their state in locals and sleep with the handle as token:
-- with thousands of services each wake-up finds the service's memory cold,
-- so every table touched per run costs.

-- h.co runs this from the first run on; cancel() kills it while it sleeps.
local function every_loop(h)
	local period, f = h.period, h.f
	local due = h.due
	while true do
		local missed = (now() - due) // period
		if missed < 0 then
			missed = 0
		end
		due = due + (missed + 1) * period
		h.due = due
		local ok, err = xpcall(f, traceback, missed, h)
		if not ok then
			failed(h, err)
		end
		if h.cancelled then
			break
		end
		h.sleeping = true
		sleep(due - now(), h)
		h.sleeping = false
	end
	h.co = nil
end

-- Fixed rate: f(missed, handle) at start + k * period_cs (see the top).
function M.every(period_cs, f, opts)
	check_cs("every", "period", period_cs)
	local h = new_handle("every", f, opts)
	h.period = period_cs
	h.due = now() + period_cs
	h.obj = timeout(period_cs, function()
		h.obj = nil
		h.co = running()
		every_loop(h)
	end)
	return h
end

local function after_loop(h)
	local delay, f = h.delay, h.f
	while true do
		local ok, err = xpcall(f, traceback, h)
		if not ok then
			failed(h, err)
		end
		if h.cancelled then
			break
		end
		h.sleeping = true
		sleep(delay, h)
		h.sleeping = false
	end
	h.co = nil
end

-- Fixed delay: f(handle) delay_cs after every_after() is called, then
-- delay_cs after each run ends.
function M.every_after(delay_cs, f, opts)
	check_cs("every_after", "delay", delay_cs)
	local h = new_handle("every_after", f, opts)
	h.delay = delay_cs
	h.obj = timeout(delay_cs, function()
		h.obj = nil
		h.co = running()
		after_loop(h)
	end)
	return h
end

---------------------------------------------------------------- wall clock

-- Centiseconds to wait for rem seconds of wall time, in one chunk.
local function wall_cs(rem)
	local cs = math.ceil((rem - WALL_EPS) * 100)
	if cs > WALL_CHECK_CS then
		return WALL_CHECK_CS
	end
	return cs < 1 and 1 or cs
end

-- Arms h for its wall deadline h.target; h.fire(h) runs once it is reached.
local function wall_arm(h)
	local rem = h.target - wallclock()
	h.obj = timeout(rem > WALL_EPS and wall_cs(rem) or 0, h.tick)
end

local function wall_tick(h)
	h.obj = nil
	if h.target - wallclock() > WALL_EPS then
		return wall_arm(h) -- early: the clock was set back, or a chunk ended
	end
	h.fire(h)
end

local function new_wall_handle(kind, f, opts, fire)
	local h = new_handle(kind, f, opts)
	h.fire = fire
	h.tick = function()
		wall_tick(h)
	end
	return h
end

local function at_fire(h)
	h.cancelled = true -- one shot: cancel() now reports false
	run(h, h)
end

-- Runs f(handle) once, when the wall clock reaches t (epoch seconds); a
-- time already past fires at once (on the next dispatch, not inside at).
function M.at(t, f, opts)
	if type(t) ~= "number" or t ~= t then
		error(sformat("timer.at: time must be a number of epoch seconds (%s)", tostring(t)), 2)
	end
	local h = new_wall_handle("at", f, opts, at_fire)
	h.target = t
	wall_arm(h)
	return h
end

---------------------------------------------------------------- cron

local cron_lib, tz_lib -- loaded on the first cron call

local function cron_libs()
	if not cron_lib then
		cron_lib = require "skynet.cron"
		tz_lib = require "skynet.tz"
	end
	return cron_lib, tz_lib
end

local function parse_cron(func, spec, tz)
	local cron, tzl = cron_libs()
	local ok, p = pcall(cron.parse, spec)
	if not ok then
		error(p, 3)
	end
	local z, err = tzl.zone(tz)
	if not z then
		error(sformat("timer.%s: %s", func, err), 3)
	end
	return p, z
end

local function cron_fire(h)
	local t = h.target
	run(h, t, h)
	if h.cancelled then
		return
	end
	local base = math.floor(wallclock())
	if base < t then
		base = t -- the clock went back: never fire t again
	end
	local nxt = cron_lib.next(h.spec, h.zone, base)
	if nxt == nil then
		h.cancelled = true
		skynet.error(sformat("error: timer.cron: spec never fires again (%s)", h.spec.text))
		return
	end
	h.target = nxt
	wall_arm(h)
end

-- Runs f(t, handle) at each fire instant t (epoch seconds) of the cron spec,
-- in time zone opts.tz (default "local").
function M.cron(spec, f, opts)
	if opts ~= nil and type(opts) ~= "table" then
		error(sformat("timer.cron: opts must be a table (%s)", tostring(opts)), 2)
	end
	local p, z = parse_cron("cron", spec, opts and opts.tz)
	local h = new_wall_handle("cron", f, opts, cron_fire)
	h.spec, h.zone = p, z
	local nxt = cron_lib.next(p, z, math.floor(wallclock()))
	if nxt == nil then
		error(sformat("timer.cron: spec never fires (%s)", spec), 2)
	end
	h.target = nxt
	wall_arm(h)
	return h
end

-- The first fire instant of spec after epoch second t (default: now), in
-- zone tz (default "local"); nil if none within 30 years.
function M.cron_next(spec, t, tz)
	local p, z = parse_cron("cron_next", spec, tz)
	if t == nil then
		t = wallclock()
	elseif type(t) ~= "number" then
		error(sformat("timer.cron_next: time must be a number of epoch seconds (%s)", tostring(t)), 2)
	end
	return cron_lib.next(p, z, t)
end

---------------------------------------------------------------- clock

-- The wall clock the library uses (epoch seconds, a float).
function M.walltime()
	return wallclock()
end

-- Test hook: replace the wall clock with f (nil restores core.walltime),
-- e.g. to start at a chosen date or to simulate a clock step. Schedules
-- already waiting read the new clock at their next chunk.
function M.set_wallclock(f)
	if f ~= nil and type(f) ~= "function" then
		error(sformat("timer.set_wallclock: f must be a function (%s)", tostring(f)), 2)
	end
	wallclock = f or core.walltime
end

---------------------------------------------------------------- timeout_call

local tpack, tunpack = table.pack, table.unpack

-- skynet.call with a deadline: true, results... when the answer comes within
-- ti cs; false, "timeout" otherwise. A late answer is dropped silently; an
-- answer that comes first cancels the timer. Errors (the callee failed or
-- is dead) are raised as skynet.call raises them.
function M.timeout_call(ti, addr, typename, ...)
	if mtype(ti) ~= "integer" then
		error(sformat("timer.timeout_call: time must be an integer of cs (%s)", tostring(ti)), 2)
	end
	local token = {}
	local result
	local caller = skynet.fork(function(...)
		result = tpack(pcall(skynet.call, addr, typename, ...))
		skynet.wakeup(token)
	end, ...)
	skynet.sleep(ti, token)
	if result == nil then
		skynet.killthread(caller) -- forgets its session: the answer is dropped
		return false, "timeout"
	end
	if result[1] then
		return true, tunpack(result, 2, result.n)
	end
	error(result[2], 0)
end

skynet.timeout_call = M.timeout_call

return M
