---@meta skynet.reminder
-- Editor help: `require "skynet.reminder"`, durable reminders (docs/ref/skynet.reminder.md).

---A reminder as `get` and `list` return it.
---@class skynet.reminder.record
---@field key string
---@field due number the current run's instant, epoch seconds
---@field target string
---@field payload any
---@field every? number
---@field cron? string
---@field tz? string
---@field misfire "once"|"all"|"skip"
---@field attempt integer failed attempts of the current run
---@field run integer
---@field state "pending"|"dead"
---@field error? string the last failure
---@field next_attempt number when it is tried next, epoch seconds

---@class skynet.reminder.opts
---@field every? number repeat every so many seconds (at least 0.01)
---@field cron? string repeat at the instants of a cron spec
---@field tz? string the time zone of the cron spec (default "local")
---@field misfire? "once"|"all"|"skip" runs passed while the node was down (default "once")

local reminder = {}

---Keeps the reminder and returns once the store holds it; it fires as
---`skynet.call(target, "lua", "reminder", key, payload, info)`. Setting a key again replaces
---it. Raises on a bad argument or when the store did not keep it. Blocks.
---@param key string
---@param when number|{after: number}|nil epoch seconds, or { after = seconds }; nil for cron
---@param target string ".name", a unique service's name, or "node.name"
---@param payload any
---@param opts? skynet.reminder.opts
---@return true
function reminder.set(key, when, target, payload, opts) end

---Removes the reminder (pending or dead letter); true when it was there. Blocks.
---@param key string
---@return boolean
function reminder.cancel(key) end

---The reminder under key, or nil. Blocks.
---@param key string
---@return skynet.reminder.record?
function reminder.get(key) end

---The reminders whose key starts with prefix (default ""), in key order, at most limit
---(1..10000, default 100). Blocks.
---@param prefix? string
---@param limit? integer
---@return skynet.reminder.record[]
function reminder.list(prefix, limit) end

---Replays a dead letter now, its attempts counted from 1; true when key was one. Blocks.
---@param key string
---@return boolean
function reminder.retry(key) end

---The node's reminder service: store health, counts, up to 10 dead letters, counters. Blocks.
---@return table
function reminder.stats() end

return reminder
