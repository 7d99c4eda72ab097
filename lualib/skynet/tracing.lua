-- skynet.tracing: trace ids across services and nodes.
--
-- A traced coroutine has a trace id (its skynet trace tag: 32 hex digits)
-- and a span (16 hex digits). Every call, send and redirect it makes carries
-- both, so the request it causes runs in a child span of the same trace
-- (the kernel does that: lualib-src/kernel/trace.c), also through
-- skynet.cluster to another skywheel node. A span ends when its coroutine
-- does (or at tracing.finish) and is kept in the node's ring of spans
-- (trace_spans), which the console's `trace ID` reads and the `tracer`
-- service writes out as OpenTelemetry JSON lines (trace_output).
--
-- Entry points (the http server library, the gates) call tracing.enter,
-- which begins a trace for a sample of the requests (config trace_sample,
-- 0 by default: none), or tracing.adopt with an incoming W3C traceparent.
local skynet = require "skynet"
local core = require "skynet.tracing.core"
local S = require "skynet.private"

local M = {}

local TRACE_HEX <const> = 32
local SPAN_ID_HEX <const> = 16
local ZERO_TRACE <const> = string.rep("0", TRACE_HEX)
local ZERO_SPAN <const> = string.rep("0", SPAN_ID_HEX)

local sample_rate -- config trace_sample, read on first use

-- The trace id and span id of the running coroutine, or nil when untraced.
function M.id()
	local tag, span = S.trace_context()
	if tag == nil then
		return nil
	end
	return core.traceof(tag), span
end

-- The running coroutine begins a span (ending the one it had). trace_id:
-- 32 hex digits, nil for a new trace; parent: the 16 hex digits of the
-- parent span, nil for a root; name: what the span is called after the
-- service's name. Returns the trace id and the new span id.
function M.begin(trace_id, parent, name)
	if trace_id ~= nil and not (type(trace_id) == "string" and #trace_id == TRACE_HEX
		and trace_id:match "^%x+$") then
		error(string.format("tracing.begin: bad trace id (%s)", tostring(trace_id)), 2)
	end
	if parent ~= nil and not (type(parent) == "string" and #parent == SPAN_ID_HEX
		and parent:match "^%x+$") then
		error(string.format("tracing.begin: bad parent span id (%s)", tostring(parent)), 2)
	end
	local tag = trace_id and trace_id:lower() or core.newtrace()
	local span = S.trace_begin(tag, parent and parent:lower(), name and tostring(name))
	return tag, span
end

-- The running coroutine's span ends (failed: its outcome is an error); the
-- coroutine is traced no more.
function M.finish(failed)
	S.trace_end(failed and true or false)
end

-- True for the share of calls the config key trace_sample asks for (a
-- number from 0 to 1; 0 or unset: never).
function M.sampled()
	if sample_rate == nil then
		sample_rate = tonumber(skynet.getenv "trace_sample") or 0
	end
	return sample_rate > 0 and (sample_rate >= 1 or math.random() < sample_rate)
end

-- A request enters the node: begin a new trace when it is sampled. Returns
-- true when the running coroutine is traced then.
function M.enter(name)
	if not M.sampled() then
		return false
	end
	M.begin(nil, nil, name)
	return true
end

-- The parts of a W3C traceparent header value: trace id, parent span id,
-- flags (an integer); nil when the value is malformed (never raises).
function M.parse(value)
	if type(value) ~= "string" or #value < 55 then
		return nil
	end
	local version, trace_id, parent, flags = value:match "^(%x%x)%-(%x+)%-(%x+)%-(%x%x)"
	if version == nil or #trace_id ~= TRACE_HEX or #parent ~= SPAN_ID_HEX then
		return nil
	end
	if version == "ff" or value:sub(1, 55):find "[A-F]" then -- W3C Trace Context: lower-case hex only
		return nil
	end
	if #value > 55 and (version == "00" or value:sub(56, 56) ~= "-") then
		return nil
	end
	if trace_id == ZERO_TRACE or parent == ZERO_SPAN then
		return nil
	end
	return trace_id, parent, tonumber(flags, 16)
end

-- Adopt an incoming traceparent (the value of the header): the running
-- coroutine begins a span of that trace, child of its parent span. A missing
-- or malformed value is ignored: then a sampled request begins a new trace
-- (tracing.enter). Returns true when the coroutine is traced.
function M.adopt(value, name)
	local trace_id, parent = M.parse(value)
	if trace_id then
		M.begin(trace_id, parent, name)
		return true
	end
	return M.enter(name)
end

-- The W3C traceparent of the running coroutine's span (for an outgoing
-- request), or nil when it is not traced.
function M.traceparent()
	local trace_id, span = M.id()
	if trace_id == nil or span == nil then
		return nil
	end
	return "00-" .. trace_id .. "-" .. span .. "-01"
end

-- The spans of a trace (its id, or a tag) that the node's ring still holds,
-- oldest first: { trace, span, parent, name, address, source, start_ns,
-- end_ns, status }.
function M.spans(trace_id)
	if type(trace_id) ~= "string" or trace_id == "" then
		error(string.format("tracing.spans: bad trace id (%s)", tostring(trace_id)), 2)
	end
	return core.find(trace_id)
end

-- The spans of a trace as text, one line each, oldest first (the console's
-- `trace ID`): start (UTC, to the microsecond), duration, outcome, the
-- service's address and the span's name, its id and its parent's. nil when
-- the ring holds none.
function M.report(trace_id)
	local spans = M.spans(trace_id)
	if #spans == 0 then
		return nil
	end
	local lines = {}
	for i, s in ipairs(spans) do
		local sec = s.start_ns // 1000000000
		lines[i] = string.format("%s.%06dZ %10.3f ms  %-5s %s %-24s span=%s parent=%s",
			os.date("!%Y-%m-%dT%H:%M:%S", sec), (s.start_ns % 1000000000) // 1000,
			(s.end_ns - s.start_ns) / 1e6, s.status, s.address, s.name, s.span, s.parent or "-")
	end
	return string.format("trace %s: %d spans\n%s", spans[1].trace, #spans, table.concat(lines, "\n"))
end

return M
