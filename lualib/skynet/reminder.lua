-- skynet.reminder: durable reminders, timers kept in a store so that they
-- survive a restart, a crash and (on a shared store) the loss of a node.
--
--   local reminder = require "skynet.reminder"
--   reminder.set("chest:42", { after = 120 }, ".world", { player = 42 })
--   reminder.set("daily", nil, "mailer", "reset", { cron = "0 5 * * *", tz = "UTC" })
--   reminder.cancel(key)  reminder.get(key)  reminder.list(prefix [, limit])
--   reminder.retry(key)   reminder.stats()
--
-- This file is the caller's side: it checks the arguments where the caller
-- made them (errors point at the caller's line), packs the payload and asks
-- the node's reminder service, .reminder (service/reminderd.lua, started at
-- boot when the config names reminder_store), which owns the store and the
-- timers. Every function blocks the calling coroutine until the service
-- answered; set returns only once the store holds the reminder. The design
-- (windows, delivery, stores, guarantees) is in docs/reminders.md.
local skynet = require "skynet"
local core = require "skynet.core"
local plan = require "skynet.reminder.plan"

local M = {}

local sformat = string.format

local MAX_KEY <const> = 1024

local function service(func)
	local addr = skynet.localname ".reminder"
	if addr == nil then
		error(sformat("reminder.%s: no reminder service on this node (set reminder_store in the config)", func), 3)
	end
	return addr
end

-- Calls the service, which answers (true, result) or (false, reason); a
-- reason is raised as "reminder.<func>: reason".
local function ask(func, ...)
	local addr = service(func)
	local ok, done, r = pcall(skynet.call, addr, "lua", func, ...)
	if not ok then
		error(sformat("reminder.%s: the reminder service failed (%s)", func, tostring(done)), 3)
	end
	if not done then
		error(sformat("reminder.%s: %s", func, tostring(r)), 3)
	end
	return r
end

local function check_key(func, key)
	if type(key) ~= "string" or key == "" or #key > MAX_KEY then
		error(sformat("reminder.%s: key must be a non-empty string of at most %d bytes (%s)", func,
			MAX_KEY, tostring(key)), 3)
	end
end

local function check_when(when, cron_spec)
	if when == nil then
		if cron_spec then
			return nil
		end
		error("reminder.set: when must be epoch seconds or { after = seconds }", 3)
	end
	local t
	if type(when) == "table" then
		local after = when.after
		if math.type(after) == nil or after < 0 or after ~= after or after == math.huge then
			error(sformat("reminder.set: when.after must be a number of seconds >= 0 (%s)", tostring(after)), 3)
		end
		t = core.walltime() + after
	elseif math.type(when) ~= nil and when == when and when > 0 and when < math.huge then
		t = when
	else
		error(sformat("reminder.set: when must be epoch seconds or { after = seconds } (%s)", tostring(when)), 3)
	end
	return t
end

local function check_target(target)
	if type(target) ~= "string" or target == "" or target:sub(-1) == "." then
		error(sformat("reminder.set: target must be a service name (.name, a unique service, node.name) (%s)",
			tostring(target)), 3)
	end
end

-- Keeps payload (any skynet.pack-able value) for (key, due) runs at target.
function M.set(key, when, target, payload, opts)
	check_key("set", key)
	local ok, every, spec, zone, misfire = pcall(plan.check_opts, opts)
	if not ok then
		error(every, 2)
	end
	local due = check_when(when, spec)
	check_target(target)
	local packed_ok, packed = pcall(skynet.packstring, payload)
	if not packed_ok then
		error(sformat("reminder.set: payload cannot be packed (%s)", tostring(packed)), 2)
	end
	if spec then
		due = plan.cron_first({ cron = spec, tz = zone }, due or core.walltime())
		if due == nil then
			error(sformat("reminder.set: cron spec never fires (%s)", spec), 2)
		end
	end
	return ask("set", key, due, target, packed, every, spec, zone, misfire)
end

-- Removes key; true when it was there.
function M.cancel(key)
	check_key("cancel", key)
	return ask("cancel", key)
end

-- Unpacks r.payload in place; a payload that cannot be unpacked (a store
-- edited by hand) becomes nil, with the reason in r.payload_error.
local function unpack_payload(r)
	local ok, v = pcall(skynet.unpack, r.payload)
	if ok then
		r.payload = v
	else
		r.payload, r.payload_error = nil, tostring(v)
	end
	return r
end

-- The reminder under key ({ key, due, target, payload, every, cron, tz,
-- misfire, attempt, run, state = "pending" | "dead", error }) or nil.
function M.get(key)
	check_key("get", key)
	local r = ask("get", key)
	return r and unpack_payload(r) or nil
end

-- The reminders whose key starts with prefix, in key order, at most limit
-- (default 100, at most 10000); the same records as get.
function M.list(prefix, limit)
	prefix = prefix or ""
	if type(prefix) ~= "string" then
		error(sformat("reminder.list: prefix must be a string (%s)", tostring(prefix)), 2)
	end
	limit = limit or 100
	if math.type(limit) ~= "integer" or limit < 1 or limit > 10000 then
		error(sformat("reminder.list: limit must be an integer in 1..10000 (%s)", tostring(limit)), 2)
	end
	local list = ask("list", prefix, limit)
	for _, r in ipairs(list) do
		unpack_payload(r)
	end
	return list
end

-- Replays a dead letter (a run that failed every attempt) now; true when
-- key was a dead letter.
function M.retry(key)
	check_key("retry", key)
	return ask("retry", key)
end

-- Counters and the store's health (the console's `reminders`).
function M.stats()
	return ask("stats")
end

return M
