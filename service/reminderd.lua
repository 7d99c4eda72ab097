-- reminderd (.reminder): the node's durable reminders. Started at boot by
-- bootstrap, before `start`, when the config names reminder_store; the API
-- is skynet.reminder (lualib/skynet/reminder.lua); docs/reminders.md is the
-- user's design document.
--
-- Data. The store (skynet/reminder/sqlite.lua or redis.lua) holds every
-- reminder: a record { key, due, at, target, payload, every, cron, tz,
-- misfire, attempt, run, missed, gen, state, error }. due is the instant of
-- the current run (epoch seconds of the wall clock), at the instant of its
-- next attempt (due, or later while retrying), gen a token new at each set
-- (an acknowledgement or a retry written for an older gen changes nothing).
-- This service holds in memory only the near records:
--   near[key] = rec   every pending record with at < horizon (the window:
--                     horizon is about now + reminder_window), delivering
--                     ones included (rec.inflight).
--   buckets[tick]     the near records waiting, by the tick at which their
--                     at has come (a monotonic millisecond in real time, a
--                     centisecond in virtual time: see ticks); one timer
--                     per bucket (a precise skynet.timeout_us in real
--                     time), so a near record fires within about a
--                     millisecond of its instant, not a poll's period.
-- Far records cost the node nothing: the loader brings them in as the
-- window reaches them (SQLite: it sleeps until the earliest stored `at`
-- comes within half a window; Redis: it polls every second, because other
-- nodes write too, and claims what it loads with a lease).
--
-- Invariant: a pending record with at < horizon is in near, or is being
-- set/cancelled right now (touched). A set or a retry of at < horizon goes
-- to near; later ones only to the store. While a load runs, records set
-- or cancelled are marked touched and the load skips them (it may have
-- read an older version).
--
-- A run: the bucket's timer fires; a record whose at has come (wall clock;
-- a clock set back re-arms it, so nothing fires early) is delivered by a
-- worker coroutine (at most MAX_ACTIVE at once, the rest queue in order):
-- store:begin (Redis: is it still ours?), then skynet.call(target, "lua",
-- "reminder", key, payload, info) with a deadline. An answer is settled:
-- the store removes the record or moves it to its next run (store:ack,
-- retried until it is stored: a run is delivered again only when its
-- acknowledgement was not stored). An error, a dead or missing target or
-- no answer counts an attempt: a retry after BACKOFF (0.5 s, doubling, at
-- most 300 s), and after reminder_attempts the record becomes a dead letter
-- (state "dead", kept until reminder.retry or a new set).
--
-- Misfires: a repeating record whose due is more than GRACE_S in the past
-- when it is placed (after a restart, or after its previous run retried
-- past it) follows rec.misfire: "all" delivers every run in turn, "once"
-- collapses the passed runs into one (the latest; info.missed counts the
-- others), "skip" moves to the next run after now without delivering.
--
-- Clock. Waits are skynet.timeouts (monotonic); the wall clock is read at
-- each fire. In real time a watcher compares the wall clock with the
-- monotonic one every second; a step re-arms every bucket and wakes the
-- loader, so runs a forward step made due fire within a second. In virtual
-- time (timer = "virtual") the wall clock moves with virtual time and
-- there is no watcher.
--
-- Locking: none (one service); the store's own thread or socket does the
-- I/O, so no worker waits on the disk or the network.
local skynet = require "skynet"
require "skynet.manager"
local core = require "skynet.core"
local plan = require "skynet.reminder.plan"
local timer = require "skynet.timer"
local loglimit = require "skynet.loglimit"

local sformat = string.format
local math_ceil, math_floor = math.ceil, math.floor
local core_walltime = core.walltime

local MAX_ACTIVE <const> = 1024 -- deliveries in flight at once
local PAGE <const> = 2000 -- records per load query
local GRACE_S <const> = 1 -- a repeating run later than this is a misfire
local STORE_RETRY_CS <const> = 100 -- wait before trying a failed store write again
local MAX_BACKOFF_S <const> = 300
-- Float seconds: a run whose at is this close counts as come (epoch seconds
-- as doubles carry about 0.2 us of rounding).
local CLOCK_EPS <const> = 1e-6

-- Arguments (tests and tools start more than one): store spec, service
-- name, then key=value overrides of window, attempts, timeout (seconds),
-- lease (seconds) and sync.
local args = { ... }
local conf = {
	store = args[1] or skynet.getenv "reminder_store",
	name = args[2] or ".reminder",
	window = tonumber(skynet.getenv "reminder_window") or 60,
	attempts = tonumber(skynet.getenv "reminder_attempts") or 10,
	timeout = tonumber(skynet.getenv "reminder_timeout") or 10,
	lease = tonumber(skynet.getenv "reminder_lease") or 10,
	sync = skynet.getenv "reminder_sync" or "full",
	virtual = skynet.getenv "timer" == "virtual",
}
for i = 3, #args do
	local k, v = args[i]:match "^(%w+)=(.+)$"
	assert(k and conf[k] ~= nil and k ~= "virtual", "reminderd: bad argument " .. args[i])
	if type(conf[k]) == "number" then
		v = assert(tonumber(v), "reminderd: bad argument " .. args[i])
	end
	conf[k] = v
end
conf.timeout_cs = math_floor(conf.timeout * 100)

-- The wall clock; in virtual time a test may step it (CMD.step_clock).
local clock_offset = 0
local function wall()
	return core_walltime() + clock_offset
end

local log = loglimit.new(10, 10)
local store
local near = {}
local buckets = {}
local epoch = 0 -- bumped when the clock steps: older bucket timers do nothing
local horizon = -math.huge
local loading_hi -- the horizon a load in progress reaches, or nil
local touched = {} -- keys set or cancelled during the load in progress
local next_far -- the earliest stored at beyond the horizon (when known)
local loader_wake = math.huge -- wall time the loader sleeps until
local LOADER = {} -- the loader's sleep token
local ready, ready_h, ready_t = {}, 1, 0 -- runs waiting for a free delivery slot
local active = 0 -- delivery workers
local starting = 0 -- workers forked that have not taken a run yet
local gen_prefix
local gen_n = 0

local stats = {
	sets = 0, cancels = 0, fires = 0, acked = 0, retries = 0, dead = 0, misfired = 0,
	late_max_ms = 0, store_errors = 0, store_error = nil, store_ms = 0,
}

-- Histograms for the metrics service: counts per upper bound (seconds).
local BOUNDS <const> = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 }
local function histogram()
	local h = { sum = 0, count = 0 }
	for i = 1, #BOUNDS + 1 do
		h[i] = 0
	end
	return h
end
local function observe(h, v)
	local i = 1
	while i <= #BOUNDS and v > BOUNDS[i] do
		i = i + 1
	end
	h[i] = h[i] + 1
	h.sum = h.sum + v
	h.count = h.count + 1
end
local lateness = histogram() -- first attempts: from due to the call
local store_time = histogram() -- every store operation

local function new_gen()
	gen_n = gen_n + 1
	return gen_prefix .. gen_n
end

-- Records a store failure for the stats and the log.
local function store_failed(op, err)
	stats.store_errors = stats.store_errors + 1
	stats.store_error = sformat("%s: %s", op, tostring(err))
	log("reminder: store %s failed: %s", op, tostring(err))
end

-- Calls store[op](store, a, b, c, d) and times it; returns pcall's results
-- (every store function takes at most four arguments and returns one value).
-- A store operation begun at t0 (skynet.hpc()) has ended: its time goes
-- to the stats and the histogram.
local function store_timed(t0)
	local s = (skynet.hpc() - t0) / 1e9
	stats.store_ms = s * 1000
	observe(store_time, s)
end

local function try_store(op, a, b, c, d)
	local t0 = skynet.hpc()
	local ok, r = pcall(store[op], store, a, b, c, d)
	store_timed(t0)
	if not ok then
		store_failed(op, r)
	end
	return ok, r
end

-- Calls store[op] until it succeeds or still() turns false (then nil).
local function must_store(op, still, a, b, c)
	while true do
		local ok, r = try_store(op, a, b, c)
		if ok then
			return r
		end
		skynet.sleep(STORE_RETRY_CS)
		if not still() then
			return nil
		end
	end
end

---------------------------------------------------------------- timers

local arm, deliver_ready

local function fire_bucket(tick, ep)
	if ep ~= epoch then
		return
	end
	local b = buckets[tick]
	buckets[tick] = nil
	local now = wall()
	for i = 1, #b do
		local rec = b[i]
		if near[rec.key] == rec and rec.tick == tick and not rec.inflight then
			if rec.at <= now + CLOCK_EPS then
				rec.tick = nil
				rec.inflight = true
				ready_t = ready_t + 1
				ready[ready_t] = rec
			else
				arm(rec) -- the wall clock went back: never early
			end
		end
	end
	deliver_ready()
end

-- The tick whose timer fires once `at` has come, and the wait until it.
-- Real time: ticks are milliseconds of CLOCK_MONOTONIC, at mapped through
-- the offset between the wall and monotonic clocks now, and the wait is a
-- precise timer (skynet.timeout_us, microseconds): a run fires at the first
-- millisecond after its instant plus the timer thread's wake-up, never
-- before it. Virtual time: ticks are the node's centiseconds (the wall
-- clock moves with them) and the wait a skynet.timeout.
local function ticks(at)
	if conf.virtual then
		local tick = math_ceil(at * 100 - CLOCK_EPS * 100)
		return tick, tick - math_floor(wall() * 100)
	end
	local mono = skynet.hpc()
	local tick = math_ceil((mono + (at - wall()) * 1e9) / 1e6)
	return tick, tick * 1000 - mono // 1000
end

function arm(rec)
	local tick, delay = ticks(rec.at)
	rec.tick = tick
	local b = buckets[tick]
	if b then
		b[#b + 1] = rec
		return
	end
	buckets[tick] = { rec }
	local ep = epoch
	local fire = function()
		fire_bucket(tick, ep)
	end
	if delay <= 0 then
		skynet.timeout(0, fire)
	elseif conf.virtual then
		skynet.timeout(delay, fire)
	else
		skynet.timeout_us(delay, fire)
	end
end

-- A step of the wall clock: every waiting near record is armed again.
local function rearm_all()
	epoch = epoch + 1
	buckets = {}
	for _, rec in pairs(near) do
		if not rec.inflight then
			arm(rec)
		end
	end
end

local function nudge_loader()
	skynet.wakeup(LOADER)
end

-- True when a record of this at belongs in memory (a shared store is told,
-- so that it claims the record for this node).
local function holds(at)
	return at < (loading_hi and math.max(horizon, loading_hi) or horizon)
end

-- A write of key's record (a set, cancel, retry, acknowledgement, failed
-- attempt or skip): a load in progress must not place what it read of key
-- before.
local function touch(key)
	if loading_hi then
		touched[key] = true
	end
end

-- Applies the misfire policy to a repeating record overdue by more than
-- GRACE_S; returns false when the record needs no delivery now ("skip").
local function misfire(rec, now)
	if rec.attempt > 0 or not (rec.every or rec.cron) or rec.due >= now - GRACE_S then
		return true
	end
	if rec.misfire == "all" then
		return true
	end
	stats.misfired = stats.misfired + 1
	if rec.misfire == "once" then
		local latest, n = plan.collapse(rec, now)
		rec.due, rec.at, rec.missed = latest, latest, rec.missed + n
		return true
	end
	local nxt = plan.first_after(rec, now) -- skip
	if nxt == nil then
		return false
	end
	rec.due, rec.at, rec.missed = nxt, nxt, 0
	try_store("update", rec, holds(nxt))
	touch(rec.key)
	return true
end

-- Puts rec (pending, not delivering) where it belongs: near and armed, or
-- only in the store. hold: what the store was told (default: holds(at)).
local function place_rec(rec, hold)
	if not misfire(rec, wall()) then
		near[rec.key] = nil
		return
	end
	if hold == nil then
		hold = holds(rec.at)
	end
	if hold then
		near[rec.key] = rec
		arm(rec)
		return
	end
	if near[rec.key] == rec then
		near[rec.key] = nil
	end
	if next_far == nil or rec.at < next_far then
		next_far = rec.at
	end
	if rec.at - conf.window / 2 < loader_wake then
		nudge_loader()
	end
end

---------------------------------------------------------------- delivery

local cluster

local function resolve(target)
	if target:byte(1) == 46 then -- ".name"
		return skynet.localname(target)
	end
	return skynet.call(".service", "lua", "PEEK", target)
end

-- Delivers one run; true, or false and why.
local function call_target(rec, info)
	local ok, payload = pcall(skynet.unpack, rec.payload)
	if not ok then
		return false, "payload cannot be unpacked: " .. tostring(payload)
	end
	local node, name = rec.target:match "^([^.]+)%.(.+)$"
	local done
	if node then
		cluster = cluster or require "skynet.cluster"
		ok, done = pcall(cluster.timeout_call, conf.timeout_cs, node, name, "reminder", rec.key, payload, info)
	else
		local addr
		ok, addr = pcall(resolve, rec.target)
		if not ok or addr == nil then
			return false, "no service named " .. rec.target
		end
		ok, done = pcall(timer.timeout_call, conf.timeout_cs, addr, "lua", "reminder", rec.key, payload, info)
	end
	if not ok then
		return false, tostring(done)
	elseif not done then
		return false, sformat("no answer within %g s", conf.timeout_cs / 100)
	end
	return true
end

local function still(rec)
	return function()
		return near[rec.key] == rec
	end
end

-- The run was answered: remove the record or move it to its next run.
local function settle(rec)
	local nxt = plan.next_run(rec)
	local upd = nxt and { due = nxt, at = nxt, run = rec.run + 1, attempt = 0, missed = 0 }
	local hold = nxt and holds(nxt)
	local kept = must_store("ack", still(rec), rec, upd, hold)
	touch(rec.key)
	if near[rec.key] ~= rec then
		return -- cancelled or set again meanwhile
	end
	stats.acked = stats.acked + 1
	rec.inflight = false
	if not upd or not kept then
		near[rec.key] = nil
		return
	end
	rec.due, rec.at, rec.run, rec.attempt, rec.missed, rec.error = nxt, nxt, upd.run, 0, 0, nil
	place_rec(rec, hold)
end

local function backoff(attempt)
	return math.min(0.5 * 2 ^ (attempt - 1), MAX_BACKOFF_S)
end

-- The run failed: retry later, or make it a dead letter.
local function fail(rec, err)
	rec.attempt = rec.attempt + 1
	rec.error = err
	if rec.attempt >= conf.attempts then
		rec.state = "dead"
		must_store("update", still(rec), rec, false)
		touch(rec.key)
		if near[rec.key] == rec then
			near[rec.key] = nil
		end
		stats.dead = stats.dead + 1
		log("reminder: %s is a dead letter after %d attempts: %s", rec.key, rec.attempt, err)
		return
	end
	stats.retries = stats.retries + 1
	rec.at = wall() + backoff(rec.attempt)
	local hold = holds(rec.at)
	try_store("update", rec, hold)
	touch(rec.key)
	if near[rec.key] == rec then
		rec.inflight = false
		place_rec(rec, hold)
	end
end

local function deliver(rec)
	local ok, go = try_store("begin", rec)
	if near[rec.key] ~= rec then
		return
	end
	if not ok then -- the store is down: try again, no attempt counted
		rec.inflight = false
		rec.at = wall() + STORE_RETRY_CS / 100
		place_rec(rec)
		return
	end
	if not go then -- replaced or cancelled on another node
		near[rec.key] = nil
		return
	end
	local now = wall()
	local info = { due = rec.due, fired_at = now, attempt = rec.attempt + 1, run = rec.run }
	if rec.missed > 0 then
		info.missed = rec.missed
	end
	if rec.attempt == 0 then
		stats.fires = stats.fires + 1
		local late = now - rec.due
		observe(lateness, late > 0 and late or 0)
		if late * 1000 > stats.late_max_ms then
			stats.late_max_ms = late * 1000
		end
	end
	local good, err = call_target(rec, info)
	if near[rec.key] ~= rec then
		return
	end
	if good then
		settle(rec)
	else
		fail(rec, err)
	end
end

local function pop_ready()
	while ready_h <= ready_t do
		local rec = ready[ready_h]
		ready[ready_h] = nil
		ready_h = ready_h + 1
		if near[rec.key] == rec then
			return rec
		end
	end
	ready_h, ready_t = 1, 0
	return nil
end

local function delivery_worker()
	starting = starting - 1
	local rec = pop_ready()
	while rec do
		deliver(rec)
		rec = pop_ready()
	end
	active = active - 1
end

-- Starts workers for the queued runs, up to MAX_ACTIVE.
function deliver_ready()
	while active < MAX_ACTIVE and ready_t - ready_h + 1 > starting do
		active = active + 1
		starting = starting + 1
		skynet.fork(delivery_worker)
	end
end

---------------------------------------------------------------- loading

-- Brings the stored records with at < hi into memory, page by page; false
-- when the store failed (the horizon stays where the pages reached).
local function load_until(hi)
	loading_hi = hi
	touched = {}
	local after_at, after_key = horizon, ""
	if after_at == -math.huge then
		after_at = -1e300
	end
	local loaded = true
	while true do
		local ok, recs = try_store("load", after_at, after_key, hi, PAGE)
		if not ok then
			loaded = false
			break
		end
		for i = 1, #recs do
			local rec = recs[i]
			if near[rec.key] == nil and not touched[rec.key] then
				place_rec(rec)
			end
		end
		if #recs < PAGE then
			horizon = hi
			break
		end
		local last = recs[#recs]
		after_at, after_key = last.at, last.key
		horizon = math.max(horizon, after_at) -- a full page: what is loaded so far
	end
	loading_hi = nil
	touched = {}
	return loaded
end

local function loader()
	while true do
		local now = wall()
		local loaded = load_until(now + conf.window)
		local poll = store.poll
		local wake = now + conf.window / 2
		if not loaded then
			wake = now + STORE_RETRY_CS / 100
		elseif poll then
			wake = now + poll
		else
			next_far = nil -- a set beyond the horizon during the query lowers it
			local ok, t = try_store("next_at", horizon)
			if ok and t and (next_far == nil or t < next_far) then
				next_far = t
			end
			if ok and next_far == nil then
				wake = now + 3600 -- nothing stored beyond: a set wakes the loader
			elseif ok then
				wake = math.max(wake, math.min(next_far - conf.window / 2, now + 3600))
			end
		end
		loader_wake = wake
		skynet.sleep(math.max(1, math_ceil((wake - wall()) * 100)), LOADER)
		loader_wake = math.huge
	end
end

-- Real time only: notices a step of the wall clock against the monotonic one.
local function clock_watcher()
	local offset = wall() - skynet.now() / 100
	while true do
		skynet.sleep(100)
		local o = wall() - skynet.now() / 100
		if math.abs(o - offset) > 0.5 then
			log("reminder: the wall clock stepped by %.2f s; re-arming", o - offset)
			rearm_all()
			nudge_loader()
		end
		offset = o
	end
end

---------------------------------------------------------------- requests

local CMD = {}
-- What a command returns when it answers the caller by itself, later.
local ANSWERED <const> = {}

-- The record as the caller sees it (the internal fields left out).
local function public(rec)
	return {
		key = rec.key, due = rec.due, target = rec.target, payload = rec.payload,
		every = rec.every, cron = rec.cron, tz = rec.tz, misfire = rec.misfire,
		attempt = rec.attempt, run = rec.run, state = rec.state, error = rec.error,
		next_attempt = rec.at,
	}
end

local function is_string(v)
	return type(v) == "string"
end

-- The store holds rec (set by a caller): forget what was near of its key,
-- place rec.
local function set_kept(rec, hold)
	stats.sets = stats.sets + 1
	touch(rec.key)
	near[rec.key] = nil
	place_rec(rec, hold)
end

-- A store with put_then (both have it) writes without suspending the
-- request: the answer goes out through a response once the write
-- committed, so a burst of sets costs no coroutine each. Returns ANSWERED.
local function set_then(rec, hold)
	local resp = skynet.response()
	local t0 = skynet.hpc()
	local queued, qerr = pcall(store.put_then, store, rec, hold, function(ok, err)
		store_timed(t0)
		if not ok then
			store_failed("put", err)
			resp(true, false, "the store did not keep it: " .. tostring(err))
			return
		end
		local placed, perr = pcall(set_kept, rec, hold)
		if not placed then
			log("reminder: %s kept but not placed: %s", rec.key, tostring(perr))
		end
		resp(true, true, true)
	end)
	if not queued then -- refused before anything was queued (a closed store)
		store_failed("put", qerr)
		resp(true, false, "the store did not keep it: " .. tostring(qerr))
	end
	return ANSWERED
end

-- set key, due, target, payload (packed), every, cron, tz, misfire: the
-- arguments were checked by skynet.reminder; a malformed request is refused.
function CMD.set(key, due, target, payload, every, cron, tz, policy)
	if not (is_string(key) and math.type(due) and is_string(target) and is_string(payload)
			and plan.MISFIRE[policy]) then
		return false, "malformed set request"
	end
	local rec = {
		key = key, due = due + 0.0, at = due + 0.0, target = target, payload = payload,
		every = every, cron = cron, tz = tz, misfire = policy,
		attempt = 0, run = 1, missed = 0, state = "pending", gen = new_gen(),
	}
	local hold = holds(rec.at)
	if store.put_then then
		return set_then(rec, hold)
	end
	local ok, err = try_store("put", rec, hold)
	if not ok then
		return false, "the store did not keep it: " .. tostring(err)
	end
	set_kept(rec, hold)
	return true, true
end

function CMD.cancel(key)
	local ok, existed = try_store("delete", key)
	if not ok then
		return false, "the store failed: " .. tostring(existed)
	end
	touch(key)
	near[key] = nil
	stats.cancels = stats.cancels + 1
	return true, existed
end

function CMD.get(key)
	local ok, rec = try_store("get", key)
	if not ok then
		return false, "the store failed: " .. tostring(rec)
	end
	return true, rec and public(rec) or false
end

function CMD.list(prefix, limit)
	local ok, recs = try_store("list", prefix, limit)
	if not ok then
		return false, "the store failed: " .. tostring(recs)
	end
	for i, rec in ipairs(recs) do
		recs[i] = public(rec)
	end
	return true, recs
end

function CMD.retry(key)
	local ok, rec = try_store("get", key)
	if not ok then
		return false, "the store failed: " .. tostring(rec)
	end
	if rec == nil or rec.state ~= "dead" then
		return true, false
	end
	rec.state, rec.attempt, rec.at, rec.error = "pending", 0, wall(), nil
	local kept
	local hold = holds(rec.at)
	ok, kept = try_store("update", rec, hold)
	if not ok then
		return false, "the store failed: " .. tostring(kept)
	end
	if kept then
		touch(key)
		near[key] = nil
		place_rec(rec, hold)
	end
	return true, kept
end

-- Virtual time only (tests): steps this service's wall clock by s seconds,
-- as an operator's clock change would, and does what the watcher does
-- (unless unseen: a step the watcher has not noticed yet).
function CMD.step_clock(s, unseen)
	if not conf.virtual then
		return false, "step_clock needs timer = \"virtual\""
	end
	clock_offset = clock_offset + s
	if not unseen then
		rearm_all()
		nudge_loader()
	end
	return true, true
end

function CMD.stats()
	local ok, s = try_store("stats")
	local r = {
		store = store.name, store_ok = ok, store_error = stats.store_error, store_ms = stats.store_ms,
		near = 0, inflight = active, queued = ready_t - ready_h + 1,
		sets = stats.sets, cancels = stats.cancels, fires = stats.fires, acked = stats.acked,
		retries = stats.retries, dead_total = stats.dead, misfired = stats.misfired,
		late_max_ms = stats.late_max_ms, store_errors = stats.store_errors,
	}
	for _ in pairs(near) do
		r.near = r.near + 1
	end
	if ok then
		r.pending, r.dead, r.next_due = s.pending, s.dead, s.next_due
		local dok, dead = try_store("dead", 10)
		if dok then
			for i, rec in ipairs(dead) do
				dead[i] = { key = rec.key, due = rec.due, target = rec.target, error = rec.error }
			end
			r.dead_letters = dead
		end
	else
		r.store_error = tostring(s)
	end
	return true, r
end

-- For the metrics service: the counters, and both histograms as
-- { bounds, counts (not cumulative, the last one past the bounds), sum }.
function CMD.metrics()
	local ok, s = try_store("stats")
	return true, {
		sets = stats.sets, fires = stats.fires, acked = stats.acked, retries = stats.retries,
		dead_total = stats.dead, store_errors = stats.store_errors,
		pending = ok and s.pending or nil, dead = ok and s.dead or nil,
		bounds = BOUNDS, lateness = lateness, store = store_time,
	}
end

---------------------------------------------------------------- start

local function open_store(spec)
	if type(spec) ~= "string" or spec == "" then
		error("reminderd: no store: set reminder_store in the config (e.g. \"sqlite:./data/reminders.db\")", 0)
	end
	local kind = spec:match "^(%a+):"
	local ok, driver = pcall(require, "skynet.reminder." .. tostring(kind))
	if not kind or not ok then
		error(sformat("reminderd: unknown store %q (use sqlite:PATH or redis://HOST:PORT/DB)", spec), 0)
	end
	return driver.open(spec, { lease = conf.lease, sync = conf.sync })
end

skynet.start(function()
	-- A set's tables and closures live for a store round trip: long enough
	-- to outlive two minor collections of the generational mode (which snlua
	-- starts), so they die old and each major collection walks the whole
	-- heap. The incremental mode collects them for less.
	collectgarbage "incremental"
	store = open_store(conf.store)
	gen_prefix = sformat("%x.%x.%x.", math_floor(wall() * 1e6), skynet.self(), math.random(0, 0x7fffffff))
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			skynet.retpack(false, "unknown command " .. tostring(cmd))
			return
		end
		local ok, done, r = pcall(f, ...)
		if done == ANSWERED and ok then
			return
		end
		if not ok then
			skynet.retpack(false, tostring(done))
		else
			skynet.retpack(done, r)
		end
	end)
	skynet.register(conf.name)
	skynet.fork(loader)
	if not conf.virtual then
		skynet.fork(clock_watcher)
	end
end)
