-- skynet.timer cron: fire instants across month ends, leap days (Feb 29
-- 2028) and DST changes (Europe/Berlin and America/New_York from the tz
-- database, and the same rules as POSIX TZ strings), fixed offsets, the
-- day-of-month / day-of-week rule, names and macros, invalid specs naming
-- the bad field; then schedules firing under virtual time at chosen dates
-- (through timer.set_wallclock), across a leap day and a DST gap, and after
-- wall-clock steps.
local skynet = require "skynet"
local core = require "skynet.core"
local timer = require "skynet.timer"
local t = require "testlib"

-- Epoch seconds of a UTC date, counted independently of the library.
local function utc(y, mo, d, h, mi)
	local days = 0
	for year = 1970, y - 1 do
		local leap = year % 4 == 0 and (year % 100 ~= 0 or year % 400 == 0)
		days = days + (leap and 366 or 365)
	end
	local month_days = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }
	if y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0) then
		month_days[2] = 29
	end
	for m = 1, mo - 1 do
		days = days + month_days[m]
	end
	return ((days + d - 1) * 24 + (h or 0)) * 3600 + (mi or 0) * 60
end

local function show(e)
	return e and os.date("!%Y-%m-%d %H:%M", e) or "nil"
end

-- Checks the chain of next instants of spec after `from`.
local function chain(spec, tz, from, want)
	local at = from
	for i, w in ipairs(want) do
		local got = timer.cron_next(spec, at, tz)
		if got ~= w then
			error(string.format("%s [%s] after %s, #%d: got %s, want %s UTC", spec, tz, show(at), i,
				show(got), show(w)), 2)
		end
		at = got
	end
end

local function have_zone(name)
	local f = io.open((os.getenv "TZDIR" or "/usr/share/zoneinfo") .. "/" .. name, "rb")
	if f then
		f:close()
		return true
	end
	print(string.format("  note: %s skipped the %s cases: no tz database file (install tzdata)",
		SERVICE_NAME, name))
	return false
end

local BERLIN <const> = "Europe/Berlin"
local BERLIN_RULE <const> = "CET-1CEST,M3.5.0,M10.5.0/3"
local NEW_YORK <const> = "America/New_York"
local NEW_YORK_RULE <const> = "EST5EDT,M3.2.0,M11.1.0"

t.case("month ends: a day that some months lack is skipped in them", function()
	chain("0 0 31 * *", "UTC", utc(2026, 1, 31), {
		utc(2026, 3, 31), utc(2026, 5, 31), utc(2026, 7, 31), utc(2026, 8, 31),
	})
	chain("0 0 1 * *", "UTC", utc(2026, 1, 31, 12), { utc(2026, 2, 1), utc(2026, 3, 1) })
	chain("59 23 30 * *", "UTC", utc(2026, 1, 31), { utc(2026, 3, 30, 23, 59) })
	chain("30 23 31 12 *", "UTC", utc(2026, 6, 1), { utc(2026, 12, 31, 23, 30), utc(2027, 12, 31, 23, 30) })
end)

t.case("leap days: Feb 29 2028 and after", function()
	chain("0 0 29 2 *", "UTC", utc(2026, 11, 22), { utc(2028, 2, 29), utc(2032, 2, 29) })
	chain("0 12 * * *", "UTC", utc(2028, 2, 28, 12), {
		utc(2028, 2, 29, 12), utc(2028, 3, 1, 12),
	})
	chain("0 12 * * *", "UTC", utc(2027, 2, 28, 12), { utc(2027, 3, 1, 12) })
	chain("0 0 * 2 tue", "UTC", utc(2028, 2, 28), { utc(2028, 2, 29), utc(2029, 2, 6) })
end)

t.case("day-of-month OR day-of-week when both are restricted", function()
	chain("0 0 13 * fri", "UTC", utc(2026, 1, 1), {
		utc(2026, 1, 2), utc(2026, 1, 9), utc(2026, 1, 13), utc(2026, 1, 16), utc(2026, 1, 23),
	})
	-- a field starting with * is unrestricted: both must match
	chain("0 0 */13 * 5", "UTC", utc(2026, 1, 1), { utc(2026, 2, 27), utc(2026, 3, 27), utc(2026, 5, 1) })
	chain("0 0 * * 7", "UTC", utc(2026, 1, 1), { utc(2026, 1, 4), utc(2026, 1, 11) })
end)

t.case("lists, ranges, steps, names and macros", function()
	chain("5,10-12,*/20 3 * * *", "UTC", utc(2026, 1, 1), {
		utc(2026, 1, 1, 3, 0), utc(2026, 1, 1, 3, 5), utc(2026, 1, 1, 3, 10), utc(2026, 1, 1, 3, 11),
		utc(2026, 1, 1, 3, 12), utc(2026, 1, 1, 3, 20), utc(2026, 1, 1, 3, 40), utc(2026, 1, 2, 3, 0),
	})
	chain("0 9 * JAN-Mar mon-fri", "UTC", utc(2026, 3, 31, 10), { utc(2027, 1, 1, 9), utc(2027, 1, 4, 9) })
	chain("10/25 * * * *", "UTC", utc(2026, 1, 1),
		{ utc(2026, 1, 1, 0, 10), utc(2026, 1, 1, 0, 35), utc(2026, 1, 1, 1, 10) })
	chain("0 20 * * sat", "UTC", utc(2026, 11, 22), { utc(2026, 11, 28, 20) })
	chain("@daily", "UTC", utc(2026, 1, 1, 5), { utc(2026, 1, 2) })
	chain("@hourly", "UTC", utc(2026, 1, 1, 5, 1), { utc(2026, 1, 1, 6) })
	chain("@weekly", "UTC", utc(2026, 1, 1), { utc(2026, 1, 4) })
	chain("@yearly", "UTC", utc(2026, 1, 1), { utc(2027, 1, 1) })
	t.eq(timer.cron_next("* * * * *", utc(2026, 1, 1) + 0.5, "UTC"), utc(2026, 1, 1, 0, 1), "fractional t")
end)

t.case("fixed offsets", function()
	chain("0 5 * * *", "+08:00", utc(2026, 1, 1), { utc(2026, 1, 1, 21), utc(2026, 1, 2, 21) })
	chain("0 5 * * *", "UTC+8", utc(2026, 1, 1), { utc(2026, 1, 1, 21) })
	chain("0 5 * * *", "-0530", utc(2026, 1, 1), { utc(2026, 1, 1, 10, 30) })
	chain("0 0 1 1 *", "-03:00", utc(2026, 6, 1), { utc(2027, 1, 1, 3) })
end)

local function berlin_cases(tz)
	-- spring: 02:00 CET -> 03:00 CEST at 01:00 UTC on 2026-03-29
	chain("30 2 * * *", tz, utc(2026, 3, 28, 12), {
		utc(2026, 3, 29, 1), -- 02:30 does not exist: fires at the change
		utc(2026, 3, 30, 0, 30), -- 02:30 CEST
	})
	chain("*/30 * * * *", tz, utc(2026, 3, 29, 0, 15), {
		utc(2026, 3, 29, 0, 30), utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 1, 30),
	})
	chain("0 5 * * *", tz, utc(2026, 3, 27, 12), { utc(2026, 3, 28, 4), utc(2026, 3, 29, 3) })
	-- autumn: 03:00 CEST -> 02:00 CET at 01:00 UTC on 2026-10-25
	chain("30 2 * * *", tz, utc(2026, 10, 24, 12), {
		utc(2026, 10, 25, 0, 30), -- first 02:30 only
		utc(2026, 10, 26, 1, 30),
	})
	chain("*/30 * * * *", tz, utc(2026, 10, 24, 23, 45), {
		utc(2026, 10, 25, 0, 0), utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 1, 0),
		utc(2026, 10, 25, 1, 30), utc(2026, 10, 25, 2, 0),
	})
	chain("0 * * * *", tz, utc(2026, 10, 24, 23, 30), {
		utc(2026, 10, 25, 0), utc(2026, 10, 25, 1), utc(2026, 10, 25, 2),
	})
	-- starting inside the repeated hour: 02:30 had its first pass already
	chain("30 2 * * *", tz, utc(2026, 10, 25, 1, 10), { utc(2026, 10, 26, 1, 30) })
	chain("0 5 * * *", tz, utc(2026, 10, 24, 12), { utc(2026, 10, 25, 4), utc(2026, 10, 26, 4) })
end

local function new_york_cases(tz)
	-- 2026-03-08 02:00 EST -> 03:00 EDT (07:00 UTC); 2026-11-01 02:00 EDT -> 01:00 EST (06:00 UTC)
	chain("30 2 * * *", tz, utc(2026, 3, 7, 12), { utc(2026, 3, 8, 7), utc(2026, 3, 9, 6, 30) })
	chain("30 1 * * *", tz, utc(2026, 10, 31, 12), { utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30) })
	chain("0 20 * * sat", tz, utc(2026, 10, 30), { utc(2026, 11, 1, 0), utc(2026, 11, 8, 1) })
end

t.case("DST in Europe/Berlin (tz database)", function()
	if have_zone(BERLIN) then
		berlin_cases(BERLIN)
	end
end)

t.case("DST in America/New_York (tz database)", function()
	if have_zone(NEW_YORK) then
		new_york_cases(NEW_YORK)
		-- past the last transition the file lists: its POSIX footer rule
		chain("30 2 * * *", NEW_YORK, utc(2099, 3, 7, 12), { utc(2099, 3, 8, 7) })
	end
end)

t.case("DST from POSIX TZ rule strings", function()
	berlin_cases(BERLIN_RULE)
	new_york_cases(NEW_YORK_RULE)
	chain("0 3 * * *", "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", utc(2026, 1, 1), { utc(2026, 1, 1, 16) })
end)

t.case("the local zone agrees with os.date", function()
	local from = utc(2026, 1, 1)
	for _, c in ipairs({ { "0 5 * * *", 0 }, { "0 0 1 * *", 0 }, { "15 */7 * * 1-5", 15 } }) do
		local spec, minute = c[1], c[2]
		local at = from
		for _ = 1, 20 do
			local nxt = timer.cron_next(spec, at)
			local d = os.date("*t", nxt)
			t.ok(nxt > at, spec .. ": moves forward")
			t.eq(d.sec, 0, spec .. ": second")
			t.eq(d.min, minute, spec .. ": minute")
			t.eq(timer.cron_next(spec, at, "local"), nxt, spec .. ": same as tz local")
			at = nxt
		end
	end
	t.eq(os.date("*t", timer.cron_next("0 5 * * *", from)).hour, 5, "hour in the local zone")
end)

t.case("invalid specs raise an error naming the bad field", function()
	local bad = {
		{ "61 * * * *", "bad minute field \"61\": 61 is out of 0-59" },
		{ "* 24 * * *", "bad hour field \"24\"" },
		{ "0 0 0 * *", "bad day-of-month field \"0\"" },
		{ "0 0 32 * *", "bad day-of-month field" },
		{ "0 0 * 13 *", "bad month field \"13\"" },
		{ "0 0 * foo *", "bad month field \"foo\": \"foo\" is not a number" },
		{ "0 0 * * 8", "bad day-of-week field \"8\"" },
		{ "0 0 * * mon-sun", "bad day-of-week field" },
		{ "*/0 * * * *", "bad minute field \"*/0\": bad step" },
		{ "5-1 * * * *", "bad minute field \"5-1\": range 5-1 starts after its end" },
		{ "1,,2 * * * *", "bad minute field \"1,,2\": empty list item" },
		{ "0 0 30 2 *", "bad day-of-month field \"30\": no such day in month field \"2\"" },
		{ "* * * *", "need 5 fields" },
		{ "* * * * * *", "got 6" },
		{ "@never", "need 5 fields" },
	}
	for _, b in ipairs(bad) do
		local err = t.raises(b[2], timer.cron_next, b[1], 0, "UTC")
		t.ok(err:find("timer.cron: ", 1, true), "module prefix: " .. err)
		t.ok(err:find("(" .. b[1] .. ")", 1, true), "spec in parentheses: " .. err)
		t.raises(b[2], timer.cron, b[1], print, { tz = "UTC" })
	end
	t.raises("timer.cron: unknown time zone (Mars/Olympus)", timer.cron, "* * * * *", print, { tz = "Mars/Olympus" })
	t.raises("unknown time zone (../etc/passwd)", timer.cron_next, "* * * * *", 0, "../etc/passwd")
	t.raises("timer.cron: spec must be a string (nil)", timer.cron, nil, print)
	t.eq(skynet.stat "timers", 0, "no timer set")
end)

-- Runs body with the library's wall clock starting at epoch second `start`.
local function at_date(start, body)
	local base = core.walltime()
	timer.set_wallclock(function()
		return core.walltime() - base + start
	end)
	local ok, err = xpcall(body, debug.traceback)
	timer.set_wallclock(nil)
	if not ok then
		error(err, 0)
	end
end

local function near(a, b)
	return math.abs(a - b) < 0.005
end

t.case("cron fires at the right instants across Feb 29 2028 (virtual time)", function()
	at_date(utc(2028, 2, 28, 23, 58), function()
		local fired = {}
		local function rec(name)
			return function(at)
				t.ok(near(timer.walltime(), at), name .. " runs at its instant")
				fired[#fired + 1] = name .. "@" .. os.date("!%d %H:%M", at)
			end
		end
		local hs = {
			timer.cron("* * * * *", rec("minute"), { tz = "UTC" }),
			timer.cron("0 0 29 2 *", rec("leap"), { tz = "UTC" }),
			timer.cron("0 0 1 3 *", rec("march"), { tz = "UTC" }),
		}
		skynet.sleep(60 * 100 * 3 + 1) -- to 00:01
		t.eq(table.concat(fired, " "), "minute@28 23:59 minute@29 00:00 leap@29 00:00 minute@29 00:01",
			"runs")
		for _, h in ipairs(hs) do
			h:cancel()
		end
	end)
	t.eq(skynet.stat "timers", 0, "no timer left")
end)

t.case("cron in Europe/Berlin across the spring gap (virtual time)", function()
	local tz = have_zone(BERLIN) and BERLIN or BERLIN_RULE
	at_date(utc(2026, 3, 29, 0, 50), function()
		local fired = {}
		local h = timer.cron("*/30 * * * *", function(at, handle)
			t.ok(near(timer.walltime(), at), "runs at its instant")
			fired[#fired + 1] = os.date("!%H:%M", at)
			if #fired == 2 then
				handle:cancel()
			end
		end, { tz = tz })
		skynet.sleep(3600 * 100)
		t.eq(table.concat(fired, " "), "01:00 01:30", "UTC run times")
		t.eq(h:cancel(), false, "cancelled")
	end)
end)

t.case("wall-clock steps: back never repeats a run, forward collapses missed runs", function()
	local start = utc(2026, 6, 1, 12)
	local base = core.walltime()
	local step = 0
	timer.set_wallclock(function()
		return core.walltime() - base + start + step
	end)
	local fired = {}
	local h = timer.cron("*/10 * * * *", function(at)
		fired[#fired + 1] = os.date("!%H:%M", at)
	end, { tz = "UTC" })
	skynet.sleep(10 * 60 * 100 + 1) -- 12:10 fires
	step = -5 * 60 -- back to 12:05: 12:10 must not fire again
	skynet.sleep(10 * 60 * 100) -- to 12:15 (wall)
	t.eq(table.concat(fired, " "), "12:10", "after the backward step")
	step = step + 3600 -- forward to 13:15: 12:20 .. 13:10 collapse into one run
	skynet.sleep(60 * 100 + 1)
	t.eq(table.concat(fired, " "), "12:10 12:20", "one run for the missed instants")
	skynet.sleep(5 * 60 * 100) -- 13:21
	t.eq(table.concat(fired, " "), "12:10 12:20 13:20", "back on the schedule")
	h:cancel()
	timer.set_wallclock(nil)
end)

t.start()
