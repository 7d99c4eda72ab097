-- skynet.tz: time zones for skynet.timer's cron (loaded on first use).
--
--   local tz = require "skynet.tz"
--   local z = tz.zone "Europe/Berlin"   -- or "UTC", "local", "+08:00", a POSIX TZ rule
--   tz.offset(z, t)  -- seconds east of UTC in effect at epoch second t
--
-- A zone is a table { name = spec, offset = function(t), fixed = seconds|nil }.
-- Zone specs:
--   nil, "local"        the node's local zone, through os.date (localtime_r:
--                       the TZ variable or /etc/localtime, DST included).
--   "UTC", "GMT", "Z"   offset 0.
--   "+08:00", "-0530", "+8", "UTC+08:00"
--                       a fixed offset east of UTC (ISO 8601 signs: "+08:00"
--                       is eight hours ahead of UTC; note that POSIX TZ
--                       strings use the opposite sign).
--   "Area/City"         a TZif file of the system tz database
--                       ($TZDIR or /usr/share/zoneinfo), parsed here, with its
--                       POSIX footer rule for instants past the last listed
--                       transition.
--   "CET-1CEST,M3.5.0,M10.5.0/3"
--                       a POSIX TZ rule string (used when no file matches).
-- Why parse TZif in Lua rather than switch TZ and call localtime_r in C:
-- TZ is process-wide, and other threads (the logger, other services'
-- os.date) would read the wrong zone while it is switched. Parsing gives a
-- pure function of t, cached per service.
--
-- Civil times are handled as "civil seconds": the epoch-second count the
-- local date and time would have if they were UTC (days_from_civil * 86400
-- + seconds of the day). offset(t) = civil(t) - t.
local M = {}

local sunpack = string.unpack
local sformat = string.format

local DAY <const> = 86400

-- Days since 1970-01-01 of a proleptic Gregorian date (m 1..12, d 1..31).
local function days_from_civil(y, m, d)
	if m <= 2 then
		y = y - 1
	end
	local era = y // 400
	local yoe = y - era * 400
	local mp = (m + 9) % 12 -- March = 0
	local doy = (153 * mp + 2) // 5 + d - 1
	local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
	return era * 146097 + doe - 719468
end

-- Inverse of days_from_civil: y, m, d.
local function civil_from_days(z)
	z = z + 719468
	local era = z // 146097
	local doe = z - era * 146097
	local yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
	local doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
	local mp = (5 * doy + 2) // 153
	local d = doy - (153 * mp + 2) // 5 + 1
	local m = mp < 10 and mp + 3 or mp - 9
	local y = yoe + era * 400
	if m <= 2 then
		y = y + 1
	end
	return y, m, d
end

local function is_leap(y)
	return y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0)
end

local MONTH_DAYS <const> = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }

local function days_in_month(y, m)
	if m == 2 and is_leap(y) then
		return 29
	end
	return MONTH_DAYS[m]
end

M.days_from_civil = days_from_civil
M.civil_from_days = civil_from_days
M.days_in_month = days_in_month

-- Day of the week (0 = Sunday) of a day count: 1970-01-01 was a Thursday.
function M.weekday(days)
	return (days + 4) % 7
end

---------------------------------------------------------------- POSIX TZ rules

-- "[+-]hh[:mm[:ss]]" at pos: seconds (sign applied), next pos; nil if absent.
local function posix_time(s, pos)
	local sign, h, rest, e = s:match("^([+-]?)(%d%d?%d?)([:%d]*)()", pos)
	if not h then
		return nil
	end
	local secs = tonumber(h) * 3600
	local mm, ss = rest:match "^:(%d%d)(.*)$"
	if mm then
		secs = secs + tonumber(mm) * 60
		local s2 = ss:match "^:(%d%d)$"
		if s2 then
			secs = secs + tonumber(s2)
		elseif ss ~= "" then
			return nil
		end
	elseif rest ~= "" then
		return nil
	end
	return sign == "-" and -secs or secs, e
end

local function posix_name(s, pos)
	local name, e = s:match("^<([%w+-]+)>()", pos)
	if name then
		return name, e
	end
	return s:match("^(%a%a%a+)()", pos)
end

-- ",Jn" / ",n" / ",Mm.w.d" then optional "/time": a rule table, next pos.
local function posix_rule(s, pos)
	local r
	local m, w, d, e = s:match("^M(%d%d?)%.(%d)%.(%d)()", pos)
	if m then
		r = { kind = "M", m = tonumber(m), w = tonumber(w), d = tonumber(d) }
		if r.m < 1 or r.m > 12 or r.w < 1 or r.w > 5 or r.d > 6 then
			return nil
		end
	else
		local j, n
		j, n, e = s:match("^(J?)(%d+)()", pos)
		if not n then
			return nil
		end
		r = { kind = j == "J" and "J" or "n", n = tonumber(n) }
		if r.n > 365 or (j == "J" and r.n < 1) then
			return nil
		end
	end
	r.time = 7200
	if s:sub(e, e) == "/" then
		local t
		t, e = posix_time(s, e + 1)
		if not t then
			return nil
		end
		r.time = t
	end
	return r, e
end

-- Civil seconds (local wall time) of a rule in year y.
local function rule_civil(r, y)
	local days
	if r.kind == "J" then
		local n = r.n -- 1..365, February 29 never counted
		days = days_from_civil(y, 1, 1) + n - 1
		if is_leap(y) and n >= 60 then
			days = days + 1
		end
	elseif r.kind == "n" then
		days = days_from_civil(y, 1, 1) + r.n
	else
		local first = days_from_civil(y, r.m, 1)
		local day = 1 + (r.d - M.weekday(first)) % 7 + (r.w - 1) * 7
		local dim = days_in_month(y, r.m)
		while day > dim do
			day = day - 7
		end
		days = first + day - 1
	end
	return days * DAY + r.time
end

-- Parses a POSIX TZ string: { std = utoff, dst = utoff|nil, start, stop }
-- (utoff in seconds east), or nil.
local function parse_posix(s)
	local std_name, pos = posix_name(s, 1)
	if not std_name then
		return nil
	end
	local off
	off, pos = posix_time(s, pos)
	if not off then
		return nil
	end
	local rule = { std = -off }
	if pos > #s then
		return rule
	end
	local dst_name
	dst_name, pos = posix_name(s, pos)
	if not dst_name then
		return nil
	end
	rule.dst = rule.std + 3600
	if pos <= #s and s:sub(pos, pos) ~= "," then
		off, pos = posix_time(s, pos)
		if not off then
			return nil
		end
		rule.dst = -off
	end
	if pos > #s then
		s, pos = s .. ",M3.2.0,M11.1.0", pos -- the usual default (US rules)
	end
	if s:sub(pos, pos) ~= "," then
		return nil
	end
	rule.start, pos = posix_rule(s, pos + 1)
	if not rule.start or s:sub(pos, pos) ~= "," then
		return nil
	end
	rule.stop, pos = posix_rule(s, pos + 1)
	if not rule.stop or pos <= #s then
		return nil
	end
	return rule
end

local function posix_offset(rule, t)
	local dst = rule.dst
	if dst == nil then
		return rule.std
	end
	local y = civil_from_days((t + rule.std) // DAY)
	local start = rule_civil(rule.start, y) - rule.std -- given in standard time
	local stop = rule_civil(rule.stop, y) - dst -- given in daylight time
	local in_dst
	if start < stop then
		in_dst = t >= start and t < stop
	else -- southern hemisphere: daylight time spans the new year
		in_dst = not (t >= stop and t < start)
	end
	return in_dst and dst or rule.std
end

---------------------------------------------------------------- TZif files

-- Parses TZif data (RFC 8536): { times = {...}, offs = {...}, first = utoff,
-- rule = posix rule|nil }, or nil.
local function parse_tzif(data)
	if #data < 44 or data:sub(1, 4) ~= "TZif" then
		return nil
	end
	local version = data:byte(5)
	local ok, z = pcall(function()
		local isut, isstd, leap, timecnt, typecnt, charcnt = sunpack(">i4i4i4i4i4i4", data, 21)
		local pos, tfmt, tsize = 45, ">i4", 4
		if version >= 0x32 then -- skip the 32-bit block, read the 64-bit one
			pos = pos + timecnt * 5 + typecnt * 6 + charcnt + leap * 8 + isstd + isut
			isut, isstd, leap, timecnt, typecnt, charcnt = sunpack(">i4i4i4i4i4i4", data, pos + 20)
			pos, tfmt, tsize = pos + 44, ">i8", 8
		end
		local times, idx = {}, {}
		for i = 1, timecnt do
			times[i], pos = sunpack(tfmt, data, pos)
		end
		for i = 1, timecnt do
			idx[i], pos = sunpack("B", data, pos)
		end
		local types = {}
		for i = 1, typecnt do
			types[i], pos = sunpack(">i4", data, pos)
			pos = pos + 2 -- isdst, desigidx
		end
		pos = pos + charcnt + leap * (tsize + 4) + isstd + isut
		local offs = {}
		for i = 1, timecnt do
			offs[i] = assert(types[idx[i] + 1])
		end
		local zone = { times = times, offs = offs, first = assert(types[1]) }
		if version >= 0x32 then
			local footer = data:match("^\n([^\n]*)\n", pos)
			if footer and footer ~= "" then
				zone.rule = parse_posix(footer)
			end
		end
		return zone
	end)
	return ok and z or nil
end

local function tzif_offset(z, t)
	local times = z.times
	local n = #times
	if n == 0 or t < times[1] then
		if n == 0 and z.rule then
			return posix_offset(z.rule, t)
		end
		return z.first
	end
	if t >= times[n] and z.rule then
		return posix_offset(z.rule, t)
	end
	local lo, hi = 1, n -- times[lo] <= t
	while lo < hi do
		local mid = (lo + hi + 1) // 2
		if times[mid] <= t then
			lo = mid
		else
			hi = mid - 1
		end
	end
	return z.offs[lo]
end

local function read_zone_file(name)
	if not name:match "^[%w_+-][%w_+/-]*$" or name:find("..", 1, true) then
		return nil
	end
	local dir = os.getenv "TZDIR" or "/usr/share/zoneinfo"
	local f = io.open(dir .. "/" .. name, "rb")
	if not f then
		return nil
	end
	local data = f:read "a"
	f:close()
	return data and parse_tzif(data)
end

---------------------------------------------------------------- zones

local function local_offset(t)
	local d = os.date("*t", t)
	return days_from_civil(d.year, d.month, d.day) * DAY + d.hour * 3600 + d.min * 60 + d.sec - t
end

-- "+08:00", "-0530", "+8", with an optional "UTC"/"GMT" prefix: seconds east.
local function parse_fixed(spec)
	local s = spec:gsub("^UTC", ""):gsub("^GMT", "")
	if s == "" or s == "Z" then
		return 0
	end
	local sign, h, m = s:match "^([+-])(%d%d?):?(%d?%d?)$"
	if not sign or (#m == 1) then
		return nil
	end
	h, m = tonumber(h), tonumber(m) or 0
	if h > 18 or m > 59 then
		return nil
	end
	local off = h * 3600 + m * 60
	return sign == "-" and -off or off
end

local cache = {}

local function fixed_zone(name, off)
	return { name = name, fixed = off, offset = function()
		return off
	end }
end

-- Returns the zone for spec (see the top comment), or nil, "reason".
function M.zone(spec)
	spec = spec or "local"
	if type(spec) == "table" and spec.offset then
		return spec
	end
	if type(spec) ~= "string" then
		return nil, sformat("bad time zone (%s)", tostring(spec))
	end
	local z = cache[spec]
	if z then
		return z
	end
	if spec == "local" then
		z = { name = spec, offset = local_offset }
	else
		local off = parse_fixed(spec)
		if off then
			z = fixed_zone(spec, off)
		else
			local file = read_zone_file(spec)
			local rule = not file and parse_posix(spec)
			if file then
				z = { name = spec, offset = function(t)
					return tzif_offset(file, t)
				end }
				if #file.times == 0 and (file.rule == nil or file.rule.dst == nil) then
					z.fixed = file.rule and file.rule.std or file.first
				end
			elseif rule then
				z = { name = spec, offset = function(t)
					return posix_offset(rule, t)
				end }
				if rule.dst == nil then
					z.fixed = rule.std
				end
			else
				return nil, sformat("unknown time zone (%s)", spec)
			end
		end
	end
	cache[spec] = z
	return z
end

function M.offset(z, t)
	return z.offset(t)
end

-- The local date and time of epoch second t in zone z:
-- year, month, day, hour, min, sec, weekday (0 = Sunday).
function M.civil(z, t)
	local c = t + z.offset(t)
	local days = c // DAY
	local sod = c % DAY
	local y, m, d = civil_from_days(days)
	return y, m, d, sod // 3600, sod % 3600 // 60, sod % 60, M.weekday(days)
end

-- The first instant x in (a, b] whose offset differs from offset(a), or
-- nil. Probes once a day, then bisects to the second: it assumes no zone
-- changes its offset twice within 24 hours (none in the tz database does).
function M.first_change(z, a, b)
	if z.fixed then
		return nil
	end
	local offset = z.offset
	local o = offset(a)
	local lo = a
	while lo < b do
		local hi = lo + DAY
		if hi > b then
			hi = b
		end
		if offset(hi) ~= o then
			while hi - lo > 1 do -- offset(lo) == o, offset(hi) ~= o
				local mid = (lo + hi) // 2
				if offset(mid) == o then
					lo = mid
				else
					hi = mid
				end
			end
			return hi
		end
		lo = hi
	end
	return nil
end

return M
