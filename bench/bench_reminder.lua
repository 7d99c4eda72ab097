-- Durable reminders on SQLite (bench/config.reminder, real time):
--   reminder.set_per_s         sets through .reminder, 256 setters, sync "full"
--                              (with the CPU per set of the node, the reminder
--                              service and the setting service: profile = true)
--   reminder.set_per_s_normal  the same with reminder_sync "normal"
--   reminder.recover_s         a reminder service started on a store of 1M
--                              pending reminders: start to the first late run
--   reminder.node_bytes_per_far  node RSS growth per pending reminder due in a
--                              day (1M of them, after that start)
--   reminder.fire_late_p99_ms  lateness at the target of 2,000 runs due over
--                              the next 4 s, with the 1M far ones pending
local skynet = require "skynet"
require "skynet.manager"
local core = require "skynet.core"
local reminder = require "skynet.reminder"
local sqlite = require "skynet.db.sqlite"
local proc = require "bench_proc"

local SETS <const> = tonumber(os.getenv "REMINDER_BENCH_SETS") or 60000
-- Not a power of two: Lua 5.4 rehashes a table on every insert while its
-- live integer keys churn at exactly 2^k entries (measured: 34 us per insert
-- at 2048 keys, 33 ns at 2000 or 2049), and the sessions of 256 callers in
-- flight are such a table; that worst case is a finding of its own.
local SETTERS <const> = 250
local FAR <const> = tonumber(os.getenv "REMINDER_BENCH_FAR") or 1000000
local NEAR <const> = 2000

local dir
local late = {}
local first_late_at

local CMD = {}

function CMD.reminder(key, _, info)
	local now = core.walltime()
	if key == "came_due" then
		first_late_at = first_late_at or now
	elseif key:sub(1, 5) == "near:" then
		late[#late + 1] = (now - info.due) * 1000
	end
	return true
end

local function tmpdir()
	local p = assert(io.popen "mktemp -d")
	local d = p:read "l"
	p:close()
	return d
end

local function set_rate(file, ...)
	local svc = skynet.newservice("reminderd", "sqlite:" .. dir .. "/" .. file, ".reminder", ...)
	local due = core.walltime() + 86400
	local left, done = SETS, 0
	local t0, cpu0, own0 = skynet.hpc(), proc.cpu_s(), skynet.stat "cpu"
	local co = coroutine.running()
	for _ = 1, SETTERS do
		skynet.fork(function()
			while left > 0 do
				left = left - 1
				reminder.set("s" .. left, due, ".bt", left)
			end
			done = done + 1
			if done == SETTERS then
				skynet.wakeup(co)
			end
		end)
	end
	skynet.wait(co)
	local rate = SETS / ((skynet.hpc() - t0) / 1e9)
	local st = skynet.call(svc, "debug", "STAT")
	print(string.format("bench: %s: %.1f us of CPU per set (the reminder service %.1f, the setters %.1f)", file,
		(proc.cpu_s() - cpu0) * 1e6 / SETS, st.cpu * 1e6 / SETS, (skynet.stat "cpu" - own0) * 1e6 / SETS))
	skynet.kill(svc)
	return rate
end

-- A store of FAR reminders due in a day and one that came due 10 s ago.
local function fill(path)
	local svc = skynet.newservice("reminderd", "sqlite:" .. path, ".reminder")
	skynet.kill(svc) -- it made the schema
	local db = sqlite.open(path, { sync = "off" })
	local due = core.walltime() + 86400
	db:exec(string.format([[
		WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d)
		INSERT INTO reminders (key, due, at, target, payload, misfire, attempt, run, missed, gen, state)
		SELECT 'far:' || i, %.3f + i * 0.01, %.3f + i * 0.01, '.bt', x'%s', 'once', 0, 1, 0, 'bulk', 'p'
		FROM c]], FAR, due, due, (skynet.packstring(1):gsub(".", function(c)
		return string.format("%02x", c:byte())
	end))))
	local now = core.walltime()
	db:exec("INSERT INTO reminders (key, due, at, target, payload, misfire, attempt, run, missed, gen, state)"
		.. " VALUES ('came_due', ?, ?, '.bt', ?, 'once', 0, 1, 0, 'bulk', 'p')", now - 10, now - 10,
		sqlite.blob(skynet.packstring(1)))
	db:close()
end

local function p99(list)
	table.sort(list)
	return list[math.max(1, math.ceil(#list * 0.99))]
end

local function main()
	dir = tmpdir()
	print(string.format("BENCH name=reminder.set_per_s value=%.0f unit=sets/s", set_rate("full.db")))
	print(string.format("BENCH name=reminder.set_per_s_normal value=%.0f unit=sets/s",
		set_rate("normal.db", "sync=normal")))

	local path = dir .. "/million.db"
	fill(path)
	collectgarbage "collect"
	local rss0 = proc.vmrss_kib()
	local t0 = core.walltime()
	skynet.newservice("reminderd", "sqlite:" .. path, ".reminder")
	while first_late_at == nil and core.walltime() - t0 < 30 do
		skynet.sleep(1)
	end
	print(string.format("BENCH name=reminder.recover_s value=%.3f unit=s", (first_late_at or math.huge) - t0))
	-- set from 64 coroutines, due 6 to 10 s ahead: all kept before the first is due
	local base = core.walltime() + 6
	local next_i, done = 0, 0
	for _ = 1, 64 do
		skynet.fork(function()
			while next_i < NEAR do
				next_i = next_i + 1
				local i = next_i
				reminder.set("near:" .. i, base + (i % 400) / 100, ".bt", i)
			end
			done = done + 1
		end)
	end
	skynet.sleep(math.ceil((base + 4.5 - core.walltime()) * 100))
	print(string.format("bench: %d setters of near runs finished before the first was due", done))
	print(string.format("bench: reminder runs fired %d of %d", #late, NEAR))
	print(string.format("BENCH name=reminder.fire_late_p99_ms value=%.2f unit=ms", p99(late)))
	collectgarbage "collect"
	skynet.send(".reminder", "debug", "GC")
	skynet.call(".reminder", "debug", "MEM")
	local rss1 = proc.vmrss_kib()
	print(string.format("BENCH name=reminder.node_bytes_per_far value=%.1f unit=bytes",
		math.max(0, rss1 - rss0) * 1024 / FAR))
	os.execute("rm -rf '" .. dir .. "'")
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
	skynet.register ".bt"
	skynet.fork(function()
		local ok, err = xpcall(main, debug.traceback)
		if not ok then
			print("bench: reminder failed: " .. tostring(err))
		end
		skynet.abort(ok and 0 or 1)
	end)
end)
