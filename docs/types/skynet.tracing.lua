---@meta skynet.tracing
-- Editor help: `require "skynet.tracing"`, trace ids across services and nodes.

local tracing = {}

---@class skynet.tracing.span
---@field trace string 32 hex digits
---@field span string 16 hex digits
---@field parent? string the parent span's id; nil for a root
---@field name string
---@field address string ":0000000a"
---@field source string
---@field start_ns integer wall clock, nanoseconds
---@field end_ns integer
---@field status "ok"|"error"

---The running coroutine's trace id and span id; nil when it is not traced.
---@return string? trace_id, string? span_id
function tracing.id() end

---Begin a span in the running coroutine (ending the one it had).
---@param trace_id? string 32 hex digits; nil: a new trace
---@param parent? string 16 hex digits; nil: a root span
---@param name? string added to the service's name
---@return string trace_id, string span_id
function tracing.begin(trace_id, parent, name) end

---End the running coroutine's span; it is traced no more.
---@param failed? boolean its outcome is an error
function tracing.finish(failed) end

---True for the share of calls config trace_sample asks for.
---@return boolean
function tracing.sampled() end

---A request enters the node: begin a new trace when sampled.
---@param name? string
---@return boolean traced
function tracing.enter(name) end

---The parts of a W3C traceparent value; nil when malformed (never raises).
---@param value any
---@return string? trace_id, string? parent, integer? flags
function tracing.parse(value) end

---Join the trace of an incoming traceparent, or tracing.enter when it is missing or malformed.
---@param value any
---@param name? string
---@return boolean traced
function tracing.adopt(value, name) end

---The traceparent header value of the running coroutine's span, or nil.
---@return string?
function tracing.traceparent() end

---The spans of a trace the node's ring still holds.
---@param trace_id string
---@return skynet.tracing.span[]
function tracing.spans(trace_id) end

---The spans of a trace as the console's `trace ID` prints them; nil when none.
---@param trace_id string
---@return string?
function tracing.report(trace_id) end

return tracing
