-- diag.trace_overhead_pct: skynet.call between two services with tracing
-- off and on (a traced coroutine: each call carries the trace id and span
-- id, each answer is a span kept in the ring and written by the tracer as
-- an OpenTelemetry JSON line), in one node (bench/config.trace:
-- trace_lines = false, as a node that exports spans would run). "on" and
-- "off" run on the same two services, from a traced and from an untraced
-- coroutine: two different pairs of services differ by themselves (where
-- their states sit in memory), by 1-2 % either way from one process to the
-- next, which is what diag.trace_idle_overhead_pct shows: the same untraced
-- calls on the pair that traces against a pair that never traced (what an
-- untraced call of a service that once traced pays: one branch). PAIRS
-- pairs of CALLS calls each; prints the medians of the rates and of the
-- pairs' overheads: the calls per second lost, in percent.
local skynet = require "skynet"
local report = require "bench_report"
require "skynet.manager"

local PAIRS <const> = tonumber(os.getenv "BENCH_TRACE_PAIRS") or 31
local CALLS <const> = tonumber(os.getenv "BENCH_TRACE_CALLS") or 10000

-- BENCH_TRACE_ONLY=off|idle|on (environment): only that mode, PAIRS
-- times, nothing reported (off: the pair that never traced; idle: untraced
-- calls on the pair that traces); for callgrind or `perf stat`, which
-- count what the load of a shared machine does not change.
local only = os.getenv "BENCH_TRACE_ONLY"

local function median(t)
	local s = { table.unpack(t) }
	table.sort(s)
	return s[(#s + 1) // 2]
end

-- The elapsed ns of CALLS calls.
local function elapsed(client, server, cmd)
	return skynet.call(client, "lua", cmd, server, CALLS)
end

-- What the tracer pays per span: EXPORT spans kept by this service, then
-- drained as OTLP JSON lines into /dev/null; the median of 5 rounds.
local EXPORT <const> = 50000
local function export_ns()
	local core, tracing = require "skynet.tracing.core", require "skynet.tracing"
	local sink = assert(io.open("/dev/null", "w"))
	local per = {}
	for round = 1, 5 do
		local cursor = core.cursor()
		tracing.begin()
		for _ = 1, EXPORT - 1 do
			tracing.begin() -- ends the span before and begins one
		end
		tracing.finish()
		local t0 = skynet.hpc()
		local written = 0
		repeat
			local _, n, lost = core.drain(cursor, "{}", 256, sink)
			written = written + n + lost
		until n + lost == 0
		per[round] = (skynet.hpc() - t0) / written
	end
	sink:close()
	return median(per)
end

skynet.start(function()
	skynet.fork(function()
		local server, client = skynet.newservice("bench_echo"), skynet.newservice("bench_echo")
		local tserver, tclient = skynet.newservice("bench_echo"), skynet.newservice("bench_echo")
		skynet.call(client, "lua", "calls", server, 20000) -- warm up
		skynet.call(tclient, "lua", "traced_calls", tserver, 20000)
		if only then
			local c, s, cmd = client, server, "calls"
			if only ~= "off" then
				c, s, cmd = tclient, tserver, only == "on" and "traced_calls" or "calls"
			end
			for _ = 1, PAIRS do
				elapsed(c, s, cmd)
			end
			skynet.abort()
			return
		end
		-- Each pair measures off and on back to back (in turn off first and
		-- on first), so that a slow spell of the shared machine weighs on
		-- both sides of a pair; the overhead is the median of the pairs'.
		local off, on, over, idle_over = {}, {}, {}, {}
		for i = 1, PAIRS do
			local a, b
			if i % 2 == 1 then
				a = elapsed(tclient, tserver, "calls")
				b = elapsed(tclient, tserver, "traced_calls")
			else
				b = elapsed(tclient, tserver, "traced_calls")
				a = elapsed(tclient, tserver, "calls")
			end
			local never = elapsed(client, server, "calls")
			off[i], on[i] = CALLS / (a / 1e9), CALLS / (b / 1e9)
			over[i], idle_over[i] = (b - a) / b * 100, (a - never) / a * 100
		end
		print(string.format("bench: trace pairs: overhead %% from %.1f to %.1f", math.min(table.unpack(over)),
			math.max(table.unpack(over))))
		report("diag.trace_off_call_per_s", median(off), "calls/s")
		report("diag.trace_on_call_per_s", median(on), "calls/s")
		report("diag.trace_overhead_pct", median(over), "%")
		report("diag.trace_idle_overhead_pct", median(idle_over), "%")
		report("diag.trace_export_ns_per_span", export_ns(), "ns")
		skynet.abort()
	end)
end)
