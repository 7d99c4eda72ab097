-- tracer: writes the node's finished spans as OpenTelemetry JSON lines.
--
-- Started by bootstrap when the config names trace_output: "stdout", or a
-- file path (opened for appending). Every FLUSH_CS it takes the spans kept
-- in the node's ring (skynet.tracing.core: a shard per worker thread) since
-- its last turn and writes them as lines, each an OTLP/JSON
-- ExportTraceServiceRequest of up to 64 spans, with the resource attribute
-- service.name = trace_name (default "skywheel"). Spans the ring replaced
-- before they were written are counted and logged as lost (make
-- trace_spans larger). When the file refuses the lines, that is logged
-- once, and again when writing works again. The `lua` request FLUSH
-- writes at once and returns how many spans it wrote, and why it could not
-- write them (nil when it could).
local skynet = require "skynet"
local core = require "skynet.tracing.core"
require "skynet.manager"

local FLUSH_CS <const> = 20
local BATCH <const> = 256 -- spans per write

local out -- the file written
local cursor = {} -- where the ring's next unwritten spans are (every span at first)
local drained = 0 -- the spans written or lost so far
local resource
local failing -- why the last flush could not write (nil: it could)

local function json_string(s)
	return '"' .. s:gsub('[%c"\\]', function(c)
		return string.format("\\u%04x", c:byte())
	end) .. '"'
end

local function flush()
	local written, lost = 0, 0
	local pending = core.head() - drained -- a flush ends even while spans keep coming
	local err
	while written + lost < pending do
		local _, n, n_lost, why = core.drain(cursor, resource, BATCH, out)
		written, lost = written + n, lost + n_lost
		if why then
			err = why
			break
		end
		if n + n_lost == 0 then
			break
		end
	end
	drained = drained + written + lost
	local ok, why = out:flush()
	err = err or (not ok and why) or nil
	-- Logged when writing starts to fail and when it works again, not every turn.
	if err then
		if not failing then
			skynet.error(string.format("error: tracer: cannot write the spans (%s)", tostring(err)))
		end
		failing = err
	elseif failing and written > 0 then
		skynet.error "tracer: writing the spans again"
		failing = nil
	end
	if lost > 0 then
		skynet.error(string.format("warn: tracer: %d spans lost before they were written "
			.. "(raise trace_spans)", lost))
	end
	return written, err
end

local function tick()
	flush()
	skynet.timeout(FLUSH_CS, tick)
end

local CMD = {}

function CMD.FLUSH()
	return flush()
end

skynet.start(function()
	local path = skynet.getenv "trace_output"
	if path == nil or path == "" then
		error("tracer: trace_output is not set")
	end
	if path == "stdout" then
		out = io.stdout
	else
		local err
		out, err = io.open(path, "a")
		if out == nil then
			error(string.format("tracer: cannot open trace_output (%s)", tostring(err)))
		end
	end
	resource = string.format('{"attributes":[{"key":"service.name","value":{"stringValue":%s}}]}',
		json_string(skynet.getenv "trace_name" or "skywheel"))
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			error(string.format("tracer: unknown command (%s)", tostring(cmd)))
		end
		skynet.retpack(f(...))
	end)
	skynet.register ".tracer"
	skynet.timeout(FLUSH_CS, tick)
end)
