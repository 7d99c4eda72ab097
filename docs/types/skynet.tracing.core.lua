---@meta skynet.tracing.core
-- Editor help: `require "skynet.tracing.core"`, the ids and the node's ring of spans (C).

local core = {}

---A new random trace id (32 hex digits).
---@return string
function core.newtrace() end

---A new span id (16 hex digits, never zero).
---@return string
function core.newspan() end

---The trace id of a tag (itself when it is 32 hex digits, after an optional "(...)" prefix).
---@param tag string
---@return string
function core.traceof(tag) end

---The spans of a trace still in the ring, in the order they ended.
---@param trace_id string
---@return skynet.tracing.span[]
function core.find(trace_id) end

---Where each of the ring's shards is now: `drain` from it reads the spans kept after.
---@return table cursor
function core.cursor() end

---The spans kept since `cursor` (`{}`: all), one OTLP JSON line each; moves the cursor past them.
---@param cursor table
---@param resource string a JSON object: the spans' resource
---With `file`, the lines are written to it as they are made and `text` is "";
---`err` says why the file refused one (the drain stops there).
---@param max? integer at most this many
---@param file? file* where to write the lines
---@return string text, integer written, integer lost, string? err
function core.drain(cursor, resource, max, file) end

---How many spans the ring ever kept, and its slots per shard (0 before the first span).
---@return integer kept, integer size
function core.head() end

return core
