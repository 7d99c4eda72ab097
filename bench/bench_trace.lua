-- diag.trace_overhead_pct: skynet.call between two services with tracing
-- off and on (a traced coroutine: each call carries the trace id and span
-- id, each answer is a span kept in the ring and written by the tracer as
-- an OpenTelemetry JSON line), ROUNDS rounds of each, alternating, in one
-- node (bench/config.trace: trace_lines = false, as a node that exports
-- spans would run). "off" runs on a pair of services that never traced;
-- "idle" on the pair that traces, from an untraced coroutine (what every
-- untraced call of a service that once traced pays: one branch and a table
-- lookup). Prints every round, then the medians and the overheads against
-- off, in percent of the untraced rate.
local skynet = require "skynet"
local report = require "bench_report"
require "skynet.manager"

local ROUNDS <const> = 5
local CALLS <const> = tonumber(os.getenv "BENCH_TRACE_CALLS") or 100000

-- BENCH_TRACE_ONLY=off|idle|on (environment): only that mode, ROUNDS
-- times, nothing reported; for `perf stat -e instructions:u`, which counts
-- what the load of a shared machine does not change.
local only = os.getenv "BENCH_TRACE_ONLY"

local function median(t)
	local s = { table.unpack(t) }
	table.sort(s)
	return s[(#s + 1) // 2]
end

local function rate(client, server, cmd)
	local ns = skynet.call(client, "lua", cmd, server, CALLS)
	return CALLS / (ns / 1e9)
end

skynet.start(function()
	skynet.fork(function()
		local server, client = skynet.newservice("bench_echo"), skynet.newservice("bench_echo")
		local tserver, tclient = skynet.newservice("bench_echo"), skynet.newservice("bench_echo")
		skynet.call(client, "lua", "calls", server, 20000) -- warm up
		skynet.call(tclient, "lua", "traced_calls", tserver, 20000)
		local off, idle, on = {}, {}, {}
		if only then
			local c, s, cmd = client, server, "calls"
			if only ~= "off" then
				c, s, cmd = tclient, tserver, only == "on" and "traced_calls" or "calls"
			end
			for _ = 1, ROUNDS do
				rate(c, s, cmd)
			end
			skynet.abort()
			return
		end
		for i = 1, ROUNDS do
			off[i] = rate(client, server, "calls")
			on[i] = rate(tclient, tserver, "traced_calls")
			idle[i] = rate(tclient, tserver, "calls")
			print(string.format("bench: trace round %d: off %.0f, idle %.0f, on %.0f calls/s", i,
				off[i], idle[i], on[i]))
		end
		local moff, midle, mon = median(off), median(idle), median(on)
		report("diag.trace_off_call_per_s", moff, "calls/s")
		report("diag.trace_on_call_per_s", mon, "calls/s")
		report("diag.trace_overhead_pct", (moff - mon) / moff * 100, "%")
		report("diag.trace_idle_overhead_pct", (moff - midle) / moff * 100, "%")
		skynet.abort()
	end)
end)
