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

---The spans of a trace still in the ring, oldest end first.
---@param trace_id string
---@return skynet.tracing.span[]
function core.find(trace_id) end

---The spans numbered from `from` on, one OTLP JSON line each.
---@param from integer
---@param resource string a JSON object: the spans' resource
---@param max? integer at most this many
---@return string text, integer next, integer lost
function core.drain(from, resource, max) end

---The next span number and the ring's size (0 before the first span).
---@return integer next, integer size
function core.head() end

return core
