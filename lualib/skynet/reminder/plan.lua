-- skynet.reminder.plan: when the runs of a reminder come due. Pure functions
-- of a record and a time (no I/O, no clock), shared by skynet.reminder (the
-- checks at set) and service/reminderd.lua (the next run, misfires).
--
-- A record's schedule: rec.every (seconds, a number > 0) or rec.cron (a spec
-- of skynet.cron, in zone rec.tz, default "local"), or neither (one run).
-- rec.due is the instant of the current run (epoch seconds). Instants of a
-- repeating schedule: due + k * every, or the cron instants after the first.
local cron = require "skynet.cron"
local tz = require "skynet.tz"

local M = {}

local sformat = string.format
local math_floor = math.floor

local MISFIRE <const> = { once = true, all = true, skip = true }
local OPTS <const> = { every = true, cron = true, tz = true, misfire = true }
local MAX_EVERY <const> = 100 * 365 * 86400
local MAX_COLLAPSE <const> = 100000 -- cron instants counted in one collapse

local specs = setmetatable({}, { __mode = "k" }) -- rec -> { spec, zone } parsed

-- Checks opts (nil or a table) of reminder.set; returns every, cron, tz,
-- misfire, or raises "reminder.set: ..." (cron errors are skynet.cron's).
function M.check_opts(opts)
	if opts == nil then
		return nil, nil, nil, "once"
	end
	if type(opts) ~= "table" then
		error(sformat("reminder.set: opts must be a table (%s)", tostring(opts)), 0)
	end
	for k in pairs(opts) do
		if not OPTS[k] then
			error(sformat("reminder.set: unknown option %s (every, cron, tz, misfire)", tostring(k)), 0)
		end
	end
	local every, spec, zone, misfire = opts.every, opts.cron, opts.tz, opts.misfire or "once"
	if every ~= nil and spec ~= nil then
		error("reminder.set: give every or cron, not both", 0)
	end
	if every ~= nil and (math.type(every) == nil or every < 0.01 or every > MAX_EVERY) then
		error(sformat("reminder.set: every must be a number of seconds in 0.01..%d (%s)", MAX_EVERY,
			tostring(every)), 0)
	end
	if spec ~= nil then
		cron.parse(spec) -- raises "timer.cron: ..."
	end
	if zone ~= nil then
		if spec == nil then
			error("reminder.set: tz is an option of cron reminders", 0)
		end
		local z, err = tz.zone(zone)
		if not z then
			error("reminder.set: " .. err, 0)
		end
	end
	if not MISFIRE[misfire] then
		error(sformat("reminder.set: misfire must be \"once\", \"all\" or \"skip\" (%s)", tostring(misfire)), 0)
	end
	return every, spec, zone, misfire
end

local function parsed(rec)
	local p = specs[rec]
	if p == nil or p.text ~= rec.cron or p.tz ~= rec.tz then
		p = { text = rec.cron, tz = rec.tz, spec = cron.parse(rec.cron), zone = assert(tz.zone(rec.tz)) }
		specs[rec] = p
	end
	return p
end

-- The first cron instant of rec >= t, or nil when the cron schedule never fires again.
function M.cron_first(rec, t)
	local p = parsed(rec)
	return cron.next(p.spec, p.zone, math.ceil(t) - 1)
end

-- The instant of the run after the one due at rec.due, or nil (no more runs).
function M.next_run(rec)
	if rec.every then
		return rec.due + rec.every
	elseif rec.cron then
		local p = parsed(rec)
		return cron.next(p.spec, p.zone, math_floor(rec.due))
	end
	return nil
end

-- The first instant of rec's schedule after t (t >= rec.due), or nil.
function M.first_after(rec, t)
	if rec.every then
		local k = math_floor((t - rec.due) / rec.every) + 1
		return rec.due + k * rec.every
	elseif rec.cron then
		local p = parsed(rec)
		return cron.next(p.spec, p.zone, math_floor(t))
	end
	return nil
end

-- The latest instant of rec's schedule <= now (now >= rec.due) and how many
-- instants before it were passed over (0: rec.due itself is the latest).
function M.collapse(rec, now)
	if rec.every then
		local k = math_floor((now - rec.due) / rec.every)
		return rec.due + k * rec.every, k
	elseif rec.cron then
		local p = parsed(rec)
		local latest, n = rec.due, 0
		while n < MAX_COLLAPSE do
			local t = cron.next(p.spec, p.zone, math_floor(latest))
			if t == nil or t > now then
				break
			end
			latest, n = t, n + 1
		end
		return latest, n
	end
	return rec.due, 0
end

M.MISFIRE = MISFIRE

return M
