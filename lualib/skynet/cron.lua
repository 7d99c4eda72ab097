-- skynet.cron: cron expressions for skynet.timer (loaded on first use).
--
--   local cron = require "skynet.cron"
--   local spec = cron.parse "0 5 * * *"      -- raises on a bad spec
--   cron.next(spec, zone, t)                  -- first fire instant > t
--
-- Syntax: five fields, "minute hour day-of-month month day-of-week", each a
-- comma list of `*`, `n`, `a-b`, with an optional `/step` (`*/15`, `1-30/2`,
-- and `5/15` meaning 5-max/15). Months may be written jan..dec and days of
-- the week sun..sat (any case); day-of-week 0 and 7 are both Sunday. The
-- macros @yearly (@annually), @monthly, @weekly, @daily (@midnight) and
-- @hourly stand for their usual expansions.
--
-- Day rule (as in Debian's cron): when both day-of-month and day-of-week are
-- restricted (neither field starts with `*`), a day matches if EITHER
-- matches; otherwise both must match (a `*` field matches every day).
--
-- Instants. The fire instants of a spec in a zone are a pure function of
-- time (cron.next(spec, zone, t) is the first one after t), with these DST
-- rules:
--   * a local time skipped by a forward change (the spring gap) fires at the
--     instant of the change: several skipped matches collapse into one run;
--   * a local time repeated by a backward change (the autumn overlap) fires
--     once, at its first occurrence, unless the minute or hour field starts
--     with `*` (a job that repeats within the day: "*/15 * * * *" or
--     "0 * * * *"), which fires in both passes, like real time passes.
local tz = require "skynet.tz"

local M = {}

local sformat = string.format
local days_from_civil = tz.days_from_civil
local civil_from_days = tz.civil_from_days
local days_in_month = tz.days_in_month
local weekday = tz.weekday

local DAY <const> = 86400
local SEARCH_YEARS <const> = 30 -- a matching date recurs within 28 years
local MAX_TRANSITIONS <const> = 128 -- offset changes one search may cross

local MONTHS <const> = {
	jan = 1, feb = 2, mar = 3, apr = 4, may = 5, jun = 6,
	jul = 7, aug = 8, sep = 9, oct = 10, nov = 11, dec = 12,
}
local WEEKDAYS <const> = { sun = 0, mon = 1, tue = 2, wed = 3, thu = 4, fri = 5, sat = 6 }

local FIELDS <const> = {
	{ key = "minute", name = "minute", min = 0, max = 59 },
	{ key = "hour", name = "hour", min = 0, max = 23 },
	{ key = "dom", name = "day-of-month", min = 1, max = 31 },
	{ key = "month", name = "month", min = 1, max = 12, names = MONTHS },
	{ key = "dow", name = "day-of-week", min = 0, max = 7, names = WEEKDAYS },
}

local MACROS <const> = {
	["@yearly"] = "0 0 1 1 *",
	["@annually"] = "0 0 1 1 *",
	["@monthly"] = "0 0 1 * *",
	["@weekly"] = "0 0 * * 0",
	["@daily"] = "0 0 * * *",
	["@midnight"] = "0 0 * * *",
	["@hourly"] = "0 * * * *",
}

local function bad(field, text, spec, why)
	error(sformat("timer.cron: bad %s field %q: %s (%s)", field.name, text, why, spec), 0)
end

local function value(field, s, text, spec)
	local n = tonumber(s:match "^%d+$")
	if n == nil and field.names then
		n = field.names[s:lower()]
	end
	if n == nil then
		bad(field, text, spec, sformat("%q is not a number", s))
	end
	if n < field.min or n > field.max then
		bad(field, text, spec, sformat("%d is out of %d-%d", n, field.min, field.max))
	end
	return n
end

-- Adds the values of one comma item to set.
local function parse_item(field, item, set, text, spec)
	local range, step = item:match "^([^/]*)/(.*)$"
	local stepped = range ~= nil
	if stepped then
		if not step:match "^%d+$" or tonumber(step) == 0 then
			bad(field, text, spec, sformat("bad step %q", step))
		end
		step = tonumber(step)
	else
		range, step = item, 1
	end
	local lo, hi
	if range == "*" then
		lo, hi = field.min, field.max
		if field.key == "dow" then
			hi = 6
		end
	else
		local a, b = range:match "^([^-]+)-([^-]+)$"
		if a then
			lo, hi = value(field, a, text, spec), value(field, b, text, spec)
			if lo > hi then
				bad(field, text, spec, sformat("range %s starts after its end", range))
			end
		elseif range ~= "" and not range:find("-", 1, true) then
			lo = value(field, range, text, spec)
			hi = stepped and field.max or lo -- "a/step": from a to the end
		else
			bad(field, text, spec, sformat("bad item %q", item))
		end
	end
	for v = lo, hi, step do
		set[field.key == "dow" and v % 7 or v] = true
	end
end

local function parse_field(field, text, spec)
	local set = {}
	if text:sub(-1) == "," then
		bad(field, text, spec, "empty list item")
	end
	for item in (text .. ","):gmatch "([^,]*)," do
		if item == "" then
			bad(field, text, spec, "empty list item")
		end
		parse_item(field, item, set, text, spec)
	end
	return set
end

-- Parses a spec; raises "timer.cron: ..." naming the bad field.
function M.parse(spec)
	if type(spec) ~= "string" then
		error(sformat("timer.cron: spec must be a string (%s)", tostring(spec)), 0)
	end
	local text = spec:match "^%s*(.-)%s*$"
	text = MACROS[text:lower()] or text
	local parts = {}
	for w in text:gmatch "%S+" do
		parts[#parts + 1] = w
	end
	if #parts ~= 5 then
		error(sformat("timer.cron: need 5 fields (minute hour day-of-month month day-of-week), got %d (%s)",
			#parts, spec), 0)
	end
	local p = { text = spec }
	for i, field in ipairs(FIELDS) do
		p[field.key] = parse_field(field, parts[i], spec)
	end
	p.dom_star = parts[3]:sub(1, 1) == "*"
	p.dow_star = parts[5]:sub(1, 1) == "*"
	p.either = not p.dom_star and not p.dow_star -- the OR rule
	p.wild = parts[1]:sub(1, 1) == "*" or parts[2]:sub(1, 1) == "*"
	if not p.either then -- day-of-month must fit some month
		local fits = false
		for m = 1, 12 do
			if p.month[m] then
				for d = 1, m == 2 and 29 or days_in_month(2001, m) do
					fits = fits or p.dom[d] == true
				end
			end
		end
		if not fits then
			bad(FIELDS[3], parts[3], spec, sformat("no such day in month field %q", parts[4]))
		end
	end
	return p
end

local function day_ok(p, days, d)
	local dom, dow = p.dom[d], p.dow[weekday(days)]
	if p.either then
		return dom or dow
	end
	return dom and dow
end

-- The first civil minute >= c (civil seconds) that matches p, or nil.
local function next_civil(p, c)
	c = -(-c // 60) * 60
	local days = c // DAY
	local sod = c % DAY
	local y, mo, d = civil_from_days(days)
	local h, mi = sod // 3600, sod % 3600 // 60
	local last_year = y + SEARCH_YEARS
	local month, hour, minute = p.month, p.hour, p.minute
	while y <= last_year do
		if mi > 59 then
			h, mi = h + 1, 0
		end
		if h > 23 then
			d, h, mi = d + 1, 0, 0
		end
		if mo <= 12 and d > days_in_month(y, mo) then
			mo, d, h, mi = mo + 1, 1, 0, 0
		end
		if mo > 12 then
			y, mo, d, h, mi = y + 1, 1, 1, 0, 0
		end
		if not month[mo] then
			mo, d, h, mi = mo + 1, 1, 0, 0
		else
			days = days_from_civil(y, mo, d)
			if not day_ok(p, days, d) then
				d, h, mi = d + 1, 0, 0
			elseif not hour[h] then
				h, mi = h + 1, 0
			elseif not minute[mi] then
				mi = mi + 1
			else
				return days * DAY + h * 3600 + mi * 60
			end
		end
	end
	return nil
end

-- When t lies in the second pass of a backward change (a repeated local
-- hour), the civil second at which the repetition ends; else nil.
local function repeat_end(z, t)
	local o = z.offset(t)
	local back = t - DAY
	local ob = z.offset(back)
	if ob <= o then
		return nil
	end
	local x = tz.first_change(z, back, t)
	if x and t + o < x + ob then
		return x + ob
	end
	return nil
end

-- The first fire instant of p in zone z strictly after epoch second t (an
-- integer), or nil when none comes within SEARCH_YEARS.
function M.next(p, z, t)
	t = math.floor(t) + 1
	if z.fixed then
		local m = next_civil(p, t + z.fixed)
		return m and m - z.fixed
	end
	local until_civil = not p.wild and repeat_end(z, t)
	for _ = 1, MAX_TRANSITIONS do
		local o = z.offset(t)
		local c = t + o
		if until_civil and c < until_civil then
			c = until_civil -- a repeated local time: it fired in the first pass
		end
		local m = next_civil(p, c)
		if m == nil then
			return nil
		end
		local candidate = m - o
		local x = tz.first_change(z, t, candidate)
		if x == nil then
			return candidate
		end
		local o2 = z.offset(x)
		if o2 > o then -- gap: local times [x + o, x + o2) never happen
			if m < x + o2 then
				return x
			end
			until_civil = nil
		else -- overlap: local times [x + o2, x + o) come again
			until_civil = not p.wild and x + o or nil
		end
		t = x
	end
	return nil
end

return M
