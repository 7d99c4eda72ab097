-- The demo game's mailbox: what happened to a player while offline (a
-- player's mail, a chest that opened, the daily reset), kept until the next
-- login. A library of the world (world.lua is its only user).
--
-- Each item is a durable reminder (skynet.reminder), so it survives a
-- restart of the node with no store of its own: the key is
-- "mail:<player>:<id>", the payload the item, the target the world, and the
-- due time the item's expiry (mail_keep_cs after it was posted, 30 days by
-- default). Until then the reminder only waits in the store (a reminder due
-- beyond the reminder service's window costs the node no memory); at the
-- player's next login the world lists the keys under "mail:<player>:",
-- pushes each item and cancels its reminder. An item that is never
-- collected fires at its expiry and the world drops it.
--
-- Ids sort in posting order: the posting time in centiseconds (12 digits),
-- a dash and a counter. A caller may give the id instead, so that posting
-- again replaces the item rather than adding one: the chest of one run
-- (posted twice if its run is delivered twice), the daily reset (one
-- waits at most, whatever the days missed).
--
-- Owns: nothing in memory but its settings and a counter; the items are in
-- the reminder store. Every function that touches the store blocks the
-- calling coroutine and raises when the store fails.
local skynet = require "skynet"
local core = require "skynet.core"
local reminder = require "skynet.reminder"

local M = {}

local sformat = string.format

M.LIST_MAX = 100 -- items delivered at one login at most (the rest wait for the next)

local target -- the world's service name: where an expired item fires
local keep_s -- how long an item waits
local seq = 0

-- target: the world's name (".world"); keep_cs: how long an item waits.
function M.init(world_name, keep_cs)
	target, keep_s = world_name, keep_cs / 100
end

-- True when the node keeps reminders (its config sets reminder_store) and
-- the world has a name they can call.
function M.on()
	return target ~= nil and target ~= "" and skynet.localname ".reminder" ~= nil
end

local function prefix(name)
	return "mail:" .. name .. ":"
end

-- The id of an item sent at epoch seconds sent, with tag after the time
-- (default: a counter).
function M.id(sent, tag)
	if tag == nil then
		seq = (seq + 1) % 10000
		tag = sformat("%04d", seq)
	end
	return sformat("%012d-%s", math.floor(sent * 100), tag)
end

-- Keeps item (a table: kind, and what that kind needs) for player name
-- under id (default: a new one); item.sent defaults to now. Returns the key.
function M.post(name, item, id)
	item.sent = item.sent or core.walltime()
	local key = prefix(name) .. (id or M.id(item.sent))
	reminder.set(key, { after = keep_s }, target, item)
	return key
end

-- Items waiting for name, oldest first, at most limit (default LIST_MAX):
-- a list of { key = key, item = item }.
function M.waiting(name, limit)
	local list = {}
	for _, r in ipairs(reminder.list(prefix(name), limit or M.LIST_MAX)) do
		list[#list + 1] = { key = r.key, item = r.payload }
	end
	return list
end

-- How many items wait for name, counting up to limit.
function M.count(name, limit)
	return #reminder.list(prefix(name), limit)
end

-- Drops the item under key (delivered).
function M.remove(key)
	reminder.cancel(key)
end

-- The player an item's key belongs to, or nil when key is no mail key.
function M.owner(key)
	return key:match "^mail:([%w_]+):"
end

return M
