-- Reminders on the Redis store (bench/bench_reminder_redis.sh starts the
-- private redis-server and the nodes). The config key rb_mode picks:
--   "set"   reminder.set_per_s_redis: SETTERS services of COROUTINES
--           coroutines each call reminder.set (due 10 min ahead, beyond the
--           window: the cost of keeping one) until SECONDS passed or
--           MAX_SETS were made; prints the BENCH line and stops the node.
--   "hold"  node a of reminder.failover_s: sets RUNS reminders due
--           rb_due (epoch seconds) at .rb, prints "rb: set" and waits to
--           be killed.
--   "fire"  node b: the target .rb; at the first run it writes "fired
--           <wall time>" to rb_out.
local skynet = require "skynet"
require "skynet.manager"
local core = require "skynet.core"
local reminder = require "skynet.reminder"

local mode = ...
local SETTERS <const> = 4
local COROUTINES <const> = 64
local SECONDS <const> = 2.5
local MAX_SETS <const> = 50000
local RUNS <const> = 100

-- One setter service: COROUTINES coroutines set keys s<id>.<c>.<n> until
-- quota sets returned or the monotonic clock passed deadline_ns.
local function setter(id, quota, deadline_ns)
	local token, running, sets = {}, COROUTINES, 0
	for c = 1, COROUTINES do
		skynet.fork(function()
			local n = 0
			while sets < quota and skynet.hpc() < deadline_ns do
				n = n + 1
				sets = sets + 1
				reminder.set(string.format("s%d.%d.%d", id, c, n), { after = 600 }, ".rb", n)
			end
			running = running - 1
			if running == 0 then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
end

local function bench_set()
	local t0 = skynet.hpc()
	local deadline = t0 + math.floor(SECONDS * 1e9)
	local done, token, setters = 0, {}, {}
	for i = 1, SETTERS do
		local s = skynet.newservice("bench_reminder_redis", "setter")
		setters[i] = s
		skynet.fork(function()
			skynet.call(s, "lua", "run", i, MAX_SETS // SETTERS, deadline)
			done = done + 1
			if done == SETTERS then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
	local s = (skynet.hpc() - t0) / 1e9
	local st = reminder.stats()
	print(string.format("bench: %d sets in %.2f s (%d setters x %d coroutines), store pending %d",
		st.sets, s, SETTERS, COROUTINES, st.pending))
	local rcpu = skynet.call(".reminder", "debug", "STAT").cpu
	local scpu = 0
	for _, a in ipairs(setters) do
		scpu = scpu + skynet.call(a, "debug", "STAT").cpu
	end
	print(string.format("bench: cpu s: reminderd %.2f, setters %.2f", rcpu, scpu))
	print(string.format("BENCH name=reminder.set_per_s_redis value=%.0f unit=sets/s", st.sets / s))
	skynet.abort(0)
end

local function hold()
	local due = tonumber(skynet.getenv "rb_due")
	for i = 1, RUNS do
		reminder.set("f" .. i, due, ".rb", i)
	end
	print "rb: set"
end

local function fire()
	local out = assert(skynet.getenv "rb_out")
	local first = true
	skynet.dispatch("lua", function(_, _, cmd, key, _, info)
		assert(cmd == "reminder")
		if first then
			first = false
			local f = assert(io.open(out, "w"))
			f:write(string.format("fired %.6f %s %.6f\n", core.walltime(), key, info.due))
			f:close()
		end
		skynet.ret(skynet.pack(true))
	end)
	skynet.register ".rb"
end

skynet.start(function()
	if mode == "setter" then
		skynet.dispatch("lua", function(_, _, cmd, id, quota, deadline_ns)
			assert(cmd == "run")
			setter(id, quota, deadline_ns)
			skynet.ret(skynet.pack(true))
		end)
		return
	end
	local m = skynet.getenv "rb_mode"
	if m == "set" then
		skynet.fork(bench_set)
	elseif m == "hold" then
		skynet.register ".rb" -- would fire here, were the node not killed
		skynet.dispatch("lua", function()
			skynet.ret(skynet.pack(true))
		end)
		skynet.fork(hold)
	else
		fire()
	end
end)
