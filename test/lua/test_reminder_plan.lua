-- skynet.reminder.plan: the runs of every and cron schedules, the collapse
-- of passed runs (misfire "once") and the first run after a time ("skip").
local plan = require "skynet.reminder.plan"
local t = require "testlib"

local JAN1 <const> = 1798761600 -- 2027-01-01 00:00:00 UTC, a Friday

t.case("every: next run, first after, collapse", function()
	local rec = { due = 1000.5, every = 10 }
	t.eq(plan.next_run(rec), 1010.5, "next")
	t.eq(plan.first_after(rec, 1000.5), 1010.5, "after due itself")
	t.eq(plan.first_after(rec, 1034), 1040.5, "after 1034")
	t.eq(plan.first_after(rec, 1040.5), 1050.5, "strictly after")
	local latest, n = plan.collapse(rec, 1045)
	t.eq(latest, 1040.5, "latest passed")
	t.eq(n, 4, "four passed over")
	latest, n = plan.collapse(rec, 1000.5)
	t.eq(latest, 1000.5, "due itself")
	t.eq(n, 0, "none passed")
end)

t.case("cron: next run, first after, collapse, first at or after", function()
	local rec = { due = JAN1, cron = "0 * * * *", tz = "UTC" }
	t.eq(plan.next_run(rec), JAN1 + 3600, "next hour")
	t.eq(plan.first_after(rec, JAN1 + 5400), JAN1 + 7200, "after 01:30")
	local latest, n = plan.collapse(rec, JAN1 + 3 * 3600 + 59)
	t.eq(latest, JAN1 + 3 * 3600, "03:00")
	t.eq(n, 3, "01:00 02:00 03:00 collapse onto 03:00: three passed over")
	t.eq(plan.cron_first(rec, JAN1), JAN1, "at the instant itself")
	t.eq(plan.cron_first(rec, JAN1 + 0.5), JAN1 + 3600, "just after it")
	local daily = { due = JAN1, cron = "0 5 * * *", tz = "+08:00" }
	t.eq(plan.next_run(daily), JAN1 + 21 * 3600, "05:00 at +08:00 is 21:00 UTC")
	local never = { due = JAN1, cron = "0 0 1 1 *", tz = "UTC" }
	t.eq(plan.next_run(never), JAN1 + 365 * 86400, "a year on")
end)

t.case("one-shot: no next run", function()
	local rec = { due = 5 }
	t.eq(plan.next_run(rec), nil, "next")
	t.eq(plan.first_after(rec, 10), nil, "first after")
	local latest, n = plan.collapse(rec, 100)
	t.eq(latest, 5, "collapse keeps due")
	t.eq(n, 0, "nothing passed")
end)

t.case("check_opts", function()
	local every, spec, zone, misfire = plan.check_opts(nil)
	t.eq(misfire, "once", "default misfire")
	t.eq(every or spec or zone, nil, "no schedule")
	every, spec, zone, misfire = plan.check_opts { cron = "*/5 * * * *", tz = "UTC", misfire = "all" }
	t.eq(every, nil, "no every with cron")
	t.eq(spec, "*/5 * * * *", "cron")
	t.eq(zone, "UTC", "tz")
	t.eq(misfire, "all", "misfire")
	t.raises("tz is an option of cron reminders", plan.check_opts, { every = 5, tz = "UTC" })
	t.raises("need 5 fields", plan.check_opts, { cron = "* *" })
	t.raises("opts must be a table", plan.check_opts, 5)
end)

t.start()
