-- skynet.reminder over the SQLite store, in virtual time: arguments checked
-- at the caller, a run never early and on time, replace and cancel, every
-- and cron, retries with backoff, dead letters and retry, targets (local
-- name, unique service, missing), far reminders outside memory, restarts
-- (pending kept, misfire policies), clock steps, unusable store files.
local skynet = require "skynet"
local core = require "skynet.core"
local reminder = require "skynet.reminder"
local t = require "testlib"

local dir
local svc -- the reminder service of the case
local target -- svc_reminder_target registered as .rt

local function start(file, ...)
	svc = skynet.newservice("reminderd", "sqlite:" .. dir .. "/" .. file, ".reminder", ...)
end

local function stop()
	skynet.kill(svc)
	svc = nil
end

local function deliveries(key)
	return skynet.call(target, "lua", "log", key)
end

local function sleep_s(s)
	skynet.sleep(math.floor(s * 100 + 0.5))
end

local function fresh(file, ...)
	if svc then
		stop()
	end
	skynet.call(target, "lua", "clear")
	start(file, ...)
end

t.case("set checks its arguments where the caller made them", function()
	fresh "args.db"
	local now = core.walltime()
	t.raises("key must be a non-empty string", reminder.set, "", now, ".rt")
	t.raises("key must be a non-empty string", reminder.set, 42, now, ".rt")
	t.raises("when must be epoch seconds", reminder.set, "k", "soon", ".rt")
	t.raises("when.after must be a number", reminder.set, "k", { after = -1 }, ".rt")
	t.raises("target must be a service name", reminder.set, "k", now, 7)
	t.raises("target must be a service name", reminder.set, "k", now, "")
	t.raises("payload cannot be packed", reminder.set, "k", now, ".rt", function() end)
	t.raises("unknown option evry", reminder.set, "k", now, ".rt", nil, { evry = 5 })
	t.raises("give every or cron, not both", reminder.set, "k", now, ".rt", nil, { every = 5, cron = "* * * * *" })
	t.raises("every must be a number of seconds", reminder.set, "k", now, ".rt", nil, { every = 0 })
	t.raises("timer.cron: bad hour field \"24\"", reminder.set, "k", nil, ".rt", nil, { cron = "0 24 * * *" })
	t.raises("unknown time zone", reminder.set, "k", nil, ".rt", nil, { cron = "0 5 * * *", tz = "Mars/Base" })
	t.raises("misfire must be", reminder.set, "k", now, ".rt", nil, { every = 5, misfire = "sometimes" })
	local ok, err = pcall(function()
		reminder.set("k", "soon", ".rt")
	end)
	t.ok(not ok and err:find("test_reminder.lua", 1, true), "the error points at the caller: " .. tostring(err))
	t.eq(#reminder.list "", 0, "nothing was kept")
end)

t.case("set, get, list and cancel", function()
	fresh "crud.db"
	local due = core.walltime() + 3600
	t.eq(reminder.set("mail:1", due, ".rt", { from = "guild", gold = 5 }), true, "set")
	reminder.set("mail:2", { after = 7200 }, ".rt", "two")
	reminder.set("chest:1", { after = 60 }, ".rt", nil, { every = 30, misfire = "skip" })
	local r = reminder.get "mail:1"
	t.eq(r.key, "mail:1", "key")
	t.eq(r.due, due, "due")
	t.eq(r.target, ".rt", "target")
	t.same(r.payload, { from = "guild", gold = 5 }, "payload")
	t.eq(r.state, "pending", "state")
	t.eq(r.run, 1, "run")
	t.eq(reminder.get("chest:1").every, 30, "every")
	t.eq(reminder.get("chest:1").misfire, "skip", "misfire")
	local keys = {}
	for _, x in ipairs(reminder.list "mail:") do
		keys[#keys + 1] = x.key
	end
	t.eq(table.concat(keys, ","), "mail:1,mail:2", "list by prefix, in key order")
	t.eq(#reminder.list("", 2), 2, "limit")
	t.eq(reminder.cancel "mail:1", true, "cancel")
	t.eq(reminder.cancel "mail:1", false, "cancel twice")
	t.eq(reminder.get "mail:1", nil, "gone")
	t.eq(#reminder.list "", 2, "two left")
end)

t.case("a run fires at its due, never before, with its payload and info", function()
	fresh "fire.db"
	local due = core.walltime() + 12.34
	reminder.set("build:7", due, ".rt", { building = 7 })
	sleep_s(12.3)
	t.eq(#deliveries(), 0, "not before due")
	sleep_s(0.2)
	local d = deliveries()
	t.eq(#d, 1, "fired once")
	t.eq(d[1].key, "build:7", "key")
	t.same(d[1].payload, { building = 7 }, "payload")
	t.eq(d[1].info.due, due, "info.due")
	t.eq(d[1].info.attempt, 1, "attempt")
	t.eq(d[1].info.run, 1, "run")
	t.ok(d[1].at >= due and d[1].at - due < 0.011, "within a centisecond: " .. (d[1].at - due))
	sleep_s(1)
	t.eq(reminder.get "build:7", nil, "acknowledged: removed")
	t.eq(#deliveries(), 1, "once")
end)

t.case("set again replaces, cancel stops", function()
	fresh "replace.db"
	reminder.set("k", { after = 5 }, ".rt", "first")
	reminder.set("k", { after = 8 }, ".rt", "second")
	reminder.set("gone", { after = 5 }, ".rt", "x")
	reminder.cancel "gone"
	sleep_s(10)
	local d = deliveries()
	t.eq(#d, 1, "one run")
	t.eq(d[1].payload, "second", "the last set wins")
	t.ok(d[1].at >= d[1].info.due, "not early")
end)

t.case("every: runs on its grid, numbered", function()
	fresh "every.db"
	local t0 = core.walltime()
	reminder.set("tick", t0 + 5, ".rt", "t", { every = 5 })
	sleep_s(16)
	local d = deliveries "tick"
	t.eq(#d, 3, "three runs in 16 s")
	for i, x in ipairs(d) do
		t.eq(x.info.run, i, "run " .. i)
		t.ok(math.abs(x.info.due - (t0 + 5 * i)) < 1e-6, "grid " .. i)
		t.ok(x.at >= x.info.due and x.at - x.info.due < 0.011, "on time " .. i)
	end
	t.eq(reminder.get("tick").due, t0 + 20, "the next run is stored")
	reminder.cancel "tick"
end)

t.case("cron: the instants of a cron spec in its zone", function()
	fresh "cron.db"
	reminder.set("minutely", nil, ".rt", "m", { cron = "* * * * *", tz = "UTC" })
	local first = reminder.get("minutely").due
	t.eq(first % 60, 0, "a minute boundary")
	sleep_s(first - core.walltime() + 61)
	local d = deliveries "minutely"
	t.eq(#d, 2, "two minutes")
	t.eq(d[2].info.due - d[1].info.due, 60, "a minute apart")
	reminder.cancel "minutely"
end)

t.case("a raising handler is retried with backoff, then acknowledged", function()
	fresh "retry.db"
	skynet.call(target, "lua", "fail", "r", 2)
	local due = core.walltime() + 2
	reminder.set("r", due, ".rt", "p")
	sleep_s(6)
	local d = deliveries "r"
	t.eq(#d, 3, "two failures and a success")
	for i, x in ipairs(d) do
		t.eq(x.info.attempt, i, "attempt " .. i)
		t.eq(x.info.due, due, "the same run")
	end
	t.ok(math.abs(d[2].at - d[1].at - 0.5) < 0.02, "first retry after 0.5 s: " .. (d[2].at - d[1].at))
	t.ok(math.abs(d[3].at - d[2].at - 1) < 0.02, "then 1 s: " .. (d[3].at - d[2].at))
	t.eq(reminder.get "r", nil, "acknowledged")
end)

t.case("dead letters: after the attempts, listed, replayed by retry", function()
	fresh("dead.db", "attempts=3", "timeout=2")
	skynet.call(target, "lua", "mute", "silent", 3)
	reminder.set("silent", { after = 1 }, ".rt", "s")
	reminder.set("nobody", { after = 1 }, ".nobody_here", "n")
	sleep_s(20)
	t.eq(#deliveries "silent", 3, "three attempts, each timed out")
	local r = reminder.get "silent"
	t.eq(r.state, "dead", "a dead letter")
	t.ok(r.error:find("no answer within 2 s", 1, true), "why: " .. tostring(r.error))
	local n = reminder.get "nobody"
	t.eq(n.state, "dead", "a missing target too")
	t.ok(n.error:find("no service named .nobody_here", 1, true), "why: " .. tostring(n.error))
	local s = reminder.stats()
	t.eq(s.dead, 2, "stats count them")
	t.eq(#s.dead_letters, 2, "and list them")
	sleep_s(60)
	t.eq(#deliveries "silent", 3, "a dead letter waits")
	t.eq(reminder.retry "silent", true, "retry")
	t.eq(reminder.retry "silent", false, "no longer dead")
	sleep_s(1)
	local d = deliveries "silent"
	t.eq(#d, 4, "replayed")
	t.eq(d[4].info.attempt, 1, "attempts start again")
	t.eq(reminder.get "silent", nil, "acknowledged")
end)

t.case("targets: a unique service, and one that starts late", function()
	fresh "targets.db"
	reminder.set("late", { after = 1 }, ".rt_late", "l")
	reminder.set("uniq", { after = 1 }, "svc_reminder_target", "u")
	skynet.uniqueservice("svc_reminder_target", ".rt_unique")
	sleep_s(1.3)
	local u = skynet.call(".rt_unique", "lua", "log")
	t.eq(#u, 1, "unique service reached by its name")
	skynet.newservice("svc_reminder_target", ".rt_late")
	sleep_s(1)
	local l = skynet.call(".rt_late", "lua", "log")
	t.eq(#l, 1, "retried until the target came")
	t.eq(l[1].info.attempt, 2, "second attempt")
	t.ok(l[1].at - l[1].info.due <= 1.0, "first retry within 1 s")
end)

t.case("a far reminder stays in the store until its window", function()
	fresh "far.db"
	local due = core.walltime() + 40 * 3600 -- the test's virtual time is bounded by 2 days
	reminder.set("far", due, ".rt", "f")
	reminder.set("near", { after = 10 }, ".rt", "n")
	local s = reminder.stats()
	t.eq(s.pending, 2, "both stored")
	t.eq(s.near, 1, "only the near one in memory")
	sleep_s(40 * 3600 - 100)
	t.eq(reminder.stats().near, 0, "40 hours on, the far one not yet loaded")
	sleep_s(100.01)
	local d = deliveries "far"
	t.eq(#d, 1, "fired after 40 hours")
	t.ok(d[1].at >= due and d[1].at - due < 0.011, "on time: " .. (d[1].at - due))
end)

t.case("a restart keeps pending reminders and fires what came due", function()
	fresh "restart.db"
	local t0 = core.walltime()
	reminder.set("while_down", t0 + 5, ".rt", "w")
	reminder.set("after_up", t0 + 30, ".rt", "a")
	stop()
	sleep_s(10)
	start "restart.db"
	sleep_s(0.1)
	local w = deliveries "while_down"
	t.eq(#w, 1, "came due while down: fired at start")
	t.ok(w[1].at >= t0 + 10 and w[1].at < t0 + 10.1, "at once")
	sleep_s(25)
	local a = deliveries "after_up"
	t.eq(#a, 1, "on schedule after the restart")
	t.ok(a[1].at >= t0 + 30 and a[1].at - (t0 + 30) < 0.011, "on time")
end)

t.case("misfire policies after the service was down across runs", function()
	fresh "misfire.db"
	local t0 = core.walltime()
	for _, m in ipairs { "once", "all", "skip" } do
		reminder.set(m, t0 + 10, ".rt", m, { every = 10, misfire = m })
	end
	sleep_s(10.5) -- run 1 of each fired
	stop()
	sleep_s(35) -- t0 + 45.5: runs at 20, 30, 40 passed
	start "misfire.db"
	sleep_s(1)
	local once, all, skip = deliveries "once", deliveries "all", deliveries "skip"
	t.eq(#once, 2, "once: one late run")
	t.eq(once[2].info.due, t0 + 40, "for the latest instant")
	t.eq(once[2].info.missed, 2, "two passed over")
	t.eq(#all, 4, "all: every passed run")
	t.eq(all[2].info.due, t0 + 20, "in order")
	t.eq(all[4].info.due, t0 + 40, "up to the latest")
	t.eq(#skip, 1, "skip: none late")
	sleep_s(4) -- t0 + 50.5
	t.eq(#deliveries "skip", 2, "skip: the next on schedule")
	t.eq(deliveries("skip")[2].info.due, t0 + 50, "at 50")
	t.eq(#deliveries "once", 3, "once goes on at 50")
	for _, m in ipairs { "once", "all", "skip" } do
		reminder.cancel(m)
	end
end)

t.case("the wall clock: set back never fires early, set forward fires", function()
	fresh "clock.db"
	local due = core.walltime() + 10
	reminder.set("back", due, ".rt", "b")
	skynet.call(svc, "lua", "step_clock", -5)
	sleep_s(11)
	t.eq(#deliveries "back", 0, "the service's clock reads due - 4")
	sleep_s(5)
	local d = deliveries "back"
	t.eq(#d, 1, "fired when its clock reached due")
	skynet.call(svc, "lua", "step_clock", 5)
	due = core.walltime() + 10
	reminder.set("unseen", due, ".rt", "u")
	skynet.call(svc, "lua", "step_clock", -5, true) -- before the watcher would notice
	sleep_s(11)
	t.eq(#deliveries "unseen", 0, "its timer fired, the wall clock said not yet")
	sleep_s(5)
	t.eq(#deliveries "unseen", 1, "re-armed, fired when the wall clock reached due")
	skynet.call(svc, "lua", "step_clock", 5)
	local fwd = core.walltime() + 600
	reminder.set("fwd", fwd, ".rt", "f")
	skynet.call(svc, "lua", "step_clock", 900)
	sleep_s(0.1)
	t.eq(#deliveries "fwd", 1, "fired at once after the step forward")
end)

t.case("an unusable store file is a clear error at start", function()
	local bad = dir .. "/corrupt.db"
	local f = assert(io.open(bad, "wb"))
	f:write(string.rep("not a database at all ", 300))
	f:close()
	local ok = pcall(skynet.newservice, "reminderd", "sqlite:" .. bad, ".reminder_bad")
	t.ok(not ok, "refused")
	f = assert(io.open(bad, "rb"))
	t.ok(f:read "a":find("not a database at all", 1, true), "the file was left alone")
	f:close()
	ok = pcall(skynet.newservice, "reminderd", "sqlite:/proc/no/such/r.db", ".reminder_bad")
	t.ok(not ok, "an unwritable place is refused")
	ok = pcall(skynet.newservice, "reminderd", "memcached://x", ".reminder_bad")
	t.ok(not ok, "an unknown store is refused")
	local sqlite = require "skynet.db.sqlite"
	local held = sqlite.open(dir .. "/locked.db", { exclusive = true })
	held:exec "CREATE TABLE other (x)"
	ok = pcall(skynet.newservice, "reminderd", "sqlite:" .. dir .. "/locked.db", ".reminder_bad")
	t.ok(not ok, "a file another connection holds is refused")
	held:close()
end)

t.case("a stored payload that cannot be unpacked becomes a dead letter", function()
	fresh("garbage.db", "attempts=2")
	reminder.set("garbage", { after = 5 }, ".rt", "fine")
	stop()
	local sqlite = require "skynet.db.sqlite"
	local db = sqlite.open(dir .. "/garbage.db")
	db:exec("UPDATE reminders SET payload = ? WHERE key = 'garbage'", sqlite.blob "\255\255\255")
	db:close()
	start("garbage.db", "attempts=2")
	sleep_s(10)
	t.eq(#deliveries "garbage", 0, "never delivered")
	local r = reminder.get "garbage"
	t.eq(r.state, "dead", "a dead letter")
	t.ok(r.error:find("payload cannot be unpacked", 1, true), "why: " .. tostring(r.error))
end)

t.case("the console's reminders and the metrics agree with stats", function()
	fresh("observe.db", "attempts=1")
	reminder.set("obs:1", { after = 1 }, ".rt", 1)
	reminder.set("obs:2", { after = 1 }, ".nobody", 2)
	reminder.set("obs:3", { after = 3600 }, ".rt", 3)
	sleep_s(2)
	local s = reminder.stats()
	t.eq(s.pending, 1, "one pending")
	t.eq(s.dead, 1, "one dead letter")
	t.eq(s.fires, 2, "two fired")
	t.eq(s.acked, 1, "one acknowledged")

	local socket = require "skynet.socket"
	local console = skynet.newservice("debug_console", "127.0.0.1", 0)
	local _, port = skynet.call(console, "lua", "ADDRESS")
	local c = assert(socket.open("127.0.0.1", port))
	socket.readline(c)
	socket.write(c, "reminders\n")
	local out = {}
	while true do
		local l = assert(socket.readline(c), "console closed")
		if l == "<CMD OK>" or l == "<CMD Error>" then
			t.eq(l, "<CMD OK>", "console status: " .. table.concat(out, "|"))
			break
		end
		out[#out + 1] = l
	end
	socket.close(c)
	local text = table.concat(out, "\n")
	t.ok(text:find("pending\t1", 1, true), "pending shown: " .. text)
	t.ok(text:find("dead\t1", 1, true), "dead shown")
	t.ok(text:find("obs:2 due", 1, true) and text:find("no service named .nobody", 1, true), "the dead letter and why")
	t.ok(text:find("sqlite:", 1, true) and text:find(" ok ", 1, true), "store health")
	skynet.kill(console)

	local metrics = skynet.newservice("metrics", "127.0.0.1", 0)
	local page = skynet.call(metrics, "lua", "render")
	skynet.kill(metrics)
	local function value(name)
		return tonumber(page:match("\n" .. name .. " (%S+)\n"))
	end
	t.eq(value "skynet_reminder_sets_total", 3, "sets")
	t.eq(value "skynet_reminder_fires_total", 2, "fires")
	t.eq(value "skynet_reminder_acks_total", 1, "acks")
	t.eq(value "skynet_reminder_dead_letters", 1, "dead letters")
	t.eq(value "skynet_reminder_pending", 1, "pending")
	t.eq(value "skynet_reminder_lateness_seconds_count", 2, "lateness observed per first attempt")
	t.ok(page:find('skynet_reminder_lateness_seconds_bucket{le="+Inf"} 2', 1, true), "the +Inf bucket")
	local p = io.popen "command -v promtool"
	local promtool = p:read "l"
	p:close()
	if promtool then
		local f = assert(io.open(dir .. "/metrics.txt", "w"))
		f:write(page)
		f:close()
		t.ok(os.execute(promtool .. " check metrics < '" .. dir .. "/metrics.txt' >/dev/null 2>&1"),
			"promtool accepts the page")
	end
end)

t.case("clean up", function()
	if svc then
		stop()
	end
	os.execute("rm -rf '" .. dir .. "'")
end)

t.start(nil, function()
	dir = t.tmpdir()
	target = skynet.newservice("svc_reminder_target", ".rt")
end)
