-- Priority lane benchmark (issue: a timer late behind its own service's
-- backlog). One BENCH line per lane setting, then the node aborts:
--   guard.timer_behind_backlog_p99_ms      lane on (skynet.priority(true))
--   guard.timer_behind_backlog_off_p99_ms  lane off (skynet's order)
-- The lateness of a 10 ms skynet.timeout armed while the service has a
-- backlog of BACKLOG ordinary messages queued: fired time minus (armed time
-- + 10 ms), by skynet.hpc. A timer is due on a centisecond tick, so a value
-- can be below 0 by up to one tick. Before each timer the subject has the
-- flooder top its queue up to BACKLOG and spins (dispatching nothing) until
-- they are queued; then it arms the timer and goes back to its backlog,
-- whose messages cost what a Lua dispatch costs (an empty handler). For
-- scale, a "bench:" line also gives the same timer with no backlog at all
-- (what the timer thread and the machine's load cost alone).
-- Roles (the service argument): none for the driver, "subject", "flooder".
local skynet = require "skynet"
local core = require "skynet.core"
local report = require "bench_report"

local role = ...

local BACKLOG <const> = 100000
local SAMPLES_ON <const> = 200
local SAMPLES_OFF <const> = 20 -- each waits behind the whole backlog (~0.1-0.3 s)
local TIMER_CS <const> = 1
local SPIN_LIMIT_NS <const> = 30 * 1000000000
local WATCHDOG_CS <const> = 24000

local hpc = skynet.hpc
local PTYPE_TEXT <const> = skynet.PTYPE_TEXT

local function percentile(sorted, p)
	local i = math.max(1, math.min(#sorted, math.ceil(#sorted * p)))
	return sorted[i]
end

local function flooder()
	local send = core.send
	skynet.dispatch("lua", function(_, _, cmd, to, n)
		assert(cmd == "flood", cmd)
		for _ = 1, n do
			send(to, PTYPE_TEXT, 0, "")
		end
	end)
end

local function subject()
	skynet.register_protocol {
		name = "text",
		id = PTYPE_TEXT,
		unpack = function() end,
		dispatch = function() end,
	}
	local flood
	local backlog
	-- Have the flooder bring our queue to the backlog; spin until it did.
	local function top_up()
		local need = backlog - skynet.mqlen()
		if need > 0 then
			skynet.send(flood, "lua", "flood", skynet.self(), need)
		end
		local deadline = hpc() + SPIN_LIMIT_NS
		while skynet.mqlen() < backlog do
			assert(hpc() < deadline, "bench_lane: the backlog never filled")
		end
	end
	local CMD = {}
	function CMD.run(on, samples, flooder_addr, n)
		flood, backlog = flooder_addr, n
		skynet.priority(on)
		local late, me = {}, coroutine.running()
		local function arm()
			top_up()
			local due = hpc() + TIMER_CS * 10000000
			skynet.timeout(TIMER_CS, function()
				late[#late + 1] = (hpc() - due) / 1e6
				if #late < samples then
					arm()
				else
					skynet.wakeup(me)
				end
			end)
		end
		arm()
		skynet.wait(me)
		skynet.priority(false)
		table.sort(late)
		return late
	end
	function CMD.drained() -- behind the backlog: answers once it is gone
		return true
	end
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
end

local function driver()
	skynet.timeout(WATCHDOG_CS, function()
		print("bench: lane benchmark timed out")
		skynet.abort()
	end)
	skynet.fork(function()
		local ok, err = xpcall(function()
			local flood = skynet.newservice("bench_lane", "flooder")
			local runs = {
				{ "no backlog", false, SAMPLES_ON, 0 },
				{ "lane on", true, SAMPLES_ON, BACKLOG, "guard.timer_behind_backlog_p99_ms" },
				{ "lane off", false, SAMPLES_OFF, BACKLOG, "guard.timer_behind_backlog_off_p99_ms" },
			}
			for _, r in ipairs(runs) do
				local what, on, samples, backlog, name = table.unpack(r)
				local s = skynet.newservice("bench_lane", "subject")
				local late = skynet.call(s, "lua", "run", on, samples, flood, backlog)
				skynet.call(s, "lua", "drained")
				skynet.kill(s)
				local p50, p99 = percentile(late, 0.5), percentile(late, 0.99)
				print(string.format("bench: %s: %d timers behind %d messages: p50 %.3f ms, "
					.. "p99 %.3f ms, max %.3f ms", what, #late, backlog, p50, p99, late[#late]))
				if name then
					report(name, p99, "ms")
				end
			end
		end, debug.traceback)
		if not ok then
			print("bench: lane benchmark failed: " .. tostring(err))
		end
		skynet.abort()
	end)
end

skynet.start(function()
	if role == "subject" then
		subject()
	elseif role == "flooder" then
		flooder()
	else
		driver()
	end
end)
