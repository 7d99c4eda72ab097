-- Trace ids inside a node (skynet.tracing; test/node/test_trace.sh covers
-- two nodes, HTTP and the OpenTelemetry output): untraced messages carry
-- nothing; a traced coroutine's call, send, rawsend and redirect each carry
-- its trace id and span id (in the message's trace trailer); the callee runs in a child span; a failed
-- request's span ends in error; W3C traceparent parsing refuses what is
-- malformed without raising; the ring of spans is bounded; the console's
-- report; a sampled gate frame begins a trace; with trace_lines = false
-- a request's span is the same though no record is made for it.
local skynet = require "skynet"
local tracing = require "skynet.tracing"
local core = require "skynet.tracing.core"
local t = require "testlib"

skynet.register_protocol { name = "client", id = skynet.PTYPE_CLIENT }

local raw, probe

-- Run f in a coroutine of its own (its trace ends with it); wait for it.
local function in_coroutine(f)
	local done, r = {}, nil
	skynet.fork(function()
		r = table.pack(pcall(f))
		skynet.wakeup(done)
	end)
	skynet.wait(done)
	assert(r[1], r[2])
	return table.unpack(r, 2, r.n)
end

-- The spans of trace_id once there are n: a callee's span ends after its
-- answer left, on a worker of its own, so the caller may read the ring first.
local function spans_of(trace_id, n)
	t.wait_until(function()
		return #tracing.spans(trace_id) >= n
	end, 100)
	return tracing.spans(trace_id)
end

-- Each way of sending a message, to raw.
local function send_all()
	skynet.call(raw, "lua", "ctx")
	skynet.send(raw, "lua", "ctx_send")
	skynet.rawsend(raw, "lua", skynet.pack("ctx_send"))
	skynet.redirect(raw, skynet.self(), "client", 0, "hi")
end

t.case("untraced messages carry nothing", function()
	in_coroutine(send_all)
	t.same(skynet.call(raw, "lua", "seen"), { "-", "-", "-", "-" }, "no trace before tracing")
	in_coroutine(function()
		tracing.begin()
		tracing.finish()
		send_all() -- traced no more
	end)
	t.same(skynet.call(raw, "lua", "seen"), { "-", "-", "-", "-" }, "none from an untraced coroutine")
end)

t.case("call, send, rawsend and redirect carry the trace id and span id", function()
	local trace_id, span = in_coroutine(function()
		local id, s = tracing.begin()
		send_all()
		return id, s
	end)
	t.ok(trace_id:match("^" .. string.rep("%x", 32) .. "$"), "a trace id")
	t.ok(span:match("^" .. string.rep("%x", 16) .. "$"), "a span id")
	t.same(skynet.call(raw, "lua", "seen"), { trace_id, trace_id, trace_id, trace_id }, "one each")
	local children = {}
	for _, s in ipairs(spans_of(trace_id, 5)) do
		if s.address == skynet.address(raw) then
			t.eq(s.parent, span, "a child of the sender's span: " .. s.name)
			children[#children + 1] = s.name
		end
	end
	table.sort(children)
	t.same(children, { "svc_trace_probe ctx", "svc_trace_probe ctx_send", "svc_trace_probe ctx_send",
		"svc_trace_probe hi" }, "the four requests' spans")
end)

t.case("the callee runs in a child span of the same trace", function()
	local trace_id, span, got_id, got_span = in_coroutine(function()
		local id, s = tracing.begin(nil, nil, "case")
		return id, s, skynet.call(probe, "lua", "ctx")
	end)
	t.eq(got_id, trace_id, "the callee's trace id")
	t.ok(got_span ~= span, "a span of its own")
	local spans = spans_of(trace_id, 2)
	t.eq(#spans, 2, "the callee's span and the caller's")
	local callee, caller = spans[1], spans[2]
	t.eq(callee.span, got_span, "the callee's ended first")
	t.eq(callee.parent, span, "child of the caller's span")
	t.eq(callee.name, "svc_trace_probe ctx", "named by service and command")
	t.eq(callee.address, skynet.address(probe), "address")
	t.eq(callee.source, skynet.address(skynet.self()), "source")
	t.eq(callee.status, "ok", "outcome")
	t.eq(caller.span, span, "the caller's")
	t.eq(caller.parent, nil, "a root")
	t.eq(caller.name, "test_trace case", "the name given")
	t.ok(callee.end_ns >= callee.start_ns and caller.end_ns >= callee.end_ns, "times")
	-- the callee's span starts at its request's dispatch, after the call began
	t.ok(callee.start_ns >= caller.start_ns, "the callee began after the caller")
	t.ok(math.abs(caller.start_ns // 1000000000 - os.time()) <= 60, "wall-clock times")
	-- a send and a redirect are requests in a child span too
	local sent = in_coroutine(function()
		local id = tracing.begin()
		skynet.send(probe, "lua", "ctx_send")
		return id
	end)
	t.eq(skynet.call(probe, "lua", "last"), sent, "a send's trace")
	local redirected = in_coroutine(function()
		local id = tracing.begin()
		skynet.redirect(probe, skynet.self(), "client", 0, "x")
		return id
	end)
	t.eq(skynet.call(probe, "lua", "last"), redirected, "a redirect's trace")
end)

-- skynet.pack leaves room for the trailer and tells the send how much it
-- left (luaseri_packed): payloads small and large (past pack's inline
-- buffer, then grown), sent and called, arrive whole with the trace.
t.case("payloads of every size carry the trace, whole", function()
	local sizes = { 0, 1, 40, 200, 240, 250, 255, 256, 300, 1000, 70000 }
	local trace_id, ids = in_coroutine(function()
		local id = tracing.begin()
		local got = {}
		for _, n in ipairs(sizes) do
			local text = string.rep(string.char(65 + n % 26), n)
			local back = skynet.call(probe, "lua", "leaf", text)
			t.eq(#back, n, "the size back: " .. n)
			t.ok(back == text, "the bytes back: " .. n)
			skynet.send(probe, "lua", "ctx_send", text)
			got[#got + 1] = skynet.call(probe, "lua", "last")
		end
		return id, got
	end)
	for i, n in ipairs(sizes) do
		t.eq(ids[i], trace_id, "the send of " .. n .. " bytes carried the trace")
	end
end)

t.case("a request that raises ends its span with an error", function()
	local trace_id = in_coroutine(function()
		local id = tracing.begin()
		t.ok(not pcall(skynet.call, probe, "lua", "fail"), "the call failed")
		return id
	end)
	local spans = spans_of(trace_id, 2)
	t.eq(spans[1].name, "svc_trace_probe fail", "the callee's span")
	t.eq(spans[1].status, "error", "its outcome")
	t.eq(spans[2].status, "ok", "the caller's")
end)

t.case("skynet.trace: the tag is the trace id the calls carry", function()
	local tag, id, seen = in_coroutine(function()
		skynet.trace "case"
		local callee = skynet.call(probe, "lua", "ctx")
		return skynet.tracetag(), tracing.id(), callee
	end)
	t.eq(id, tag, "tracing.id is the tag")
	t.eq(seen, tag, "the callee's")
	t.eq(#spans_of(tag, 2), 2, "spans of skynet.trace")
end)

t.case("traceparent: valid ones parse, malformed ones are nil without an error", function()
	local id, parent, flags = tracing.parse "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	t.eq(id, "4bf92f3577b34da6a3ce929d0e0e4736", "trace id")
	t.eq(parent, "00f067aa0ba902b7", "parent")
	t.eq(flags, 1, "flags")
	t.eq(tracing.parse "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-more", id,
		"a later version may add fields")
	for _, bad in ipairs {
		"", "00", "garbage", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
		"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
		"00-4bf92f3577b34da6a3ce929d0e0e47361-00f067aa0ba902b7-01",
	} do
		t.eq(tracing.parse(bad), nil, "malformed: " .. bad)
	end
	t.eq(tracing.parse(nil), nil, "nil")
	t.eq(tracing.parse { "x" }, nil, "a table (a repeated header)")
	t.eq(in_coroutine(function()
		return tracing.adopt "garbage"
	end), false, "adopt ignores a malformed one (and trace_sample is 0)")
	local tp = in_coroutine(function()
		t.eq(tracing.adopt "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, "adopted")
		return tracing.traceparent()
	end)
	t.ok(tp:match "^00%-4bf92f3577b34da6a3ce929d0e0e4736%-%x+%-01$", "the traceparent out: " .. tp)
	t.raises("bad trace id", tracing.begin, "xyz")
end)

t.case("the ring keeps the last trace_spans spans", function()
	local _, cap = core.head()
	t.ok(cap > 0, "a ring")
	local trace_id = core.newtrace()
	local first
	in_coroutine(function()
		for i = 1, cap + 10 do
			local _, span = tracing.begin(trace_id)
			if i == 1 then
				first = span
			end
		end
		tracing.finish()
	end)
	local spans = tracing.spans(trace_id)
	t.eq(#spans, cap, "as many as the ring holds")
	for _, s in ipairs(spans) do
		t.ok(s.span ~= first, "the oldest was replaced")
	end
	local report = tracing.report(trace_id)
	t.ok(report:find("^trace " .. trace_id .. ": " .. cap .. " spans\n"), "the report's head")
	t.ok(select(2, report:gsub("\n", "")) == cap, "one line per span")
	t.eq(tracing.report(core.newtrace()), nil, "no span: nil")
end)

t.case("drain into a file: the same lines as the text; a refused write is an error", function()
	local json = require "json_min"
	local trace_a, trace_b = core.newtrace(), core.newtrace()
	local start, into_text, into_file = core.cursor(), core.cursor(), core.cursor()
	in_coroutine(function()
		for i = 1, 150 do -- more than one line of 64 spans, and past a stage
			tracing.begin(i % 3 == 0 and trace_b or trace_a) -- a run of a, then b
		end
		tracing.finish()
	end)
	local text, n = core.drain(into_text, "{}")
	local f = assert(io.tmpfile())
	local empty, n2, lost, err = core.drain(into_file, "{}", nil, f)
	t.eq(empty, "", "nothing returned")
	t.eq(n2, n, "as many spans written")
	t.eq(lost, 0, "none lost")
	t.eq(err, nil, "no error")
	f:seek "set"
	-- Each drain reads the clocks' difference anew: the times may differ by ns.
	local function timeless(s)
		return (s:gsub('UnixNano":"%d+"', ""))
	end
	local got = f:read "a"
	t.ok(timeless(got) == timeless(text), "the file holds the text's lines")
	f:close()
	local in_json = {}
	for line in text:gmatch "[^\n]+" do
		for _, span in ipairs(json.decode(line).resourceSpans[1].scopeSpans[1].spans) do
			in_json[span.spanId] = span.traceId
		end
	end
	for _, id in ipairs { trace_a, trace_b } do
		local kept = core.find(id)
		t.eq(#kept, id == trace_a and 100 or 50, "the ring's spans of a trace")
		local same = 0
		for _, s in ipairs(kept) do
			same = same + (in_json[s.span] == id and 1 or 0)
		end
		t.eq(same, #kept, "each written with its own trace id")
	end
	local full = io.open("/dev/full", "a")
	if full then
		local _, written, _, why = core.drain(start, "{}", nil, full)
		t.ok(why ~= nil, "a full device: " .. tostring(why))
		t.ok(written <= n, "the drain stopped")
		full:close()
	end
	local closed = assert(io.tmpfile())
	closed:close()
	t.raises("closed", core.drain, core.cursor(), "{}", nil, closed)
end)

t.case("the tracer: a file that refuses the spans is an error, not a crash", function()
	skynet.setenv("trace_output", "/dev/full")
	local tracer = skynet.newservice "tracer"
	-- What the ring held before: a refused write ends a flush, the next goes on.
	for _ = 1, 1000 do
		if skynet.call(tracer, "lua", "FLUSH") == 0 then
			break
		end
	end
	in_coroutine(function()
		tracing.begin()
		tracing.finish()
	end)
	local written, err = skynet.call(tracer, "lua", "FLUSH")
	t.ok(written >= 1, "the span was taken")
	t.ok(type(err) == "string" and err ~= "", "why: " .. tostring(err))
	local again, none = skynet.call(tracer, "lua", "FLUSH")
	t.eq(again, 0, "the tracer still answers")
	t.eq(none, nil, "nothing to write: no error")
	skynet.kill(tracer)
end)

t.case("trace_sample = 1: a gate frame begins a trace the agent's request joins", function()
	local socket = require "skynet.socket"
	local json = require "json_min"
	local cursor = core.cursor()
	skynet.setenv("trace_sample", "1") -- read by the gate started below
	local wd = skynet.newservice("svc_net_watchdog")
	local _, port = skynet.call(wd, "lua", "start", { address = "127.0.0.1", port = 0 })
	local c = assert(socket.open("127.0.0.1", port))
	socket.write(c, string.pack(">s2", "ping 1"))
	t.eq(socket.read(c, 2 + #"pong 1"), string.pack(">s2", "pong 1"), "answered")
	-- The client can read the pong before the agent's coroutine has
	-- returned and ended its span: drain until both spans are in.
	local spans = {}
	t.wait_for(function()
		local text = core.drain(cursor, "{}")
		for line in text:gmatch "[^\n]+" do
			for _, span in ipairs(json.decode(line).resourceSpans[1].scopeSpans[1].spans) do
				spans[span.name] = span
			end
		end
		return spans["gate client"] and spans["svc_net_agent ping 1"]
	end, 500, "the gate's and the agent's spans")
	socket.close(c)
	skynet.call(wd, "lua", "close")
	local gate, agent = spans["gate client"], spans["svc_net_agent ping 1"]
	t.ok(gate, "the gate's span")
	t.ok(agent, "the agent's span")
	t.eq(agent.traceId, gate.traceId, "one trace")
	t.eq(agent.parentSpanId, gate.spanId, "the agent's request is the gate's child")
	local start, stop = tonumber(agent.startTimeUnixNano), tonumber(agent.endTimeUnixNano)
	t.ok(math.abs(start // 1000000000 - os.time()) <= 60 and stop >= start, "wall-clock times")
	-- The JSON's decimal times against find's integers (their wall-clock
	-- offsets are read apart, ns apart, so the duration is what must match).
	local kept
	for _, s in ipairs(core.find(agent.traceId)) do
		if s.span == agent.spanId then
			kept = s
		end
	end
	t.ok(kept, "the agent's span is in the ring")
	t.eq(stop - start, kept.end_ns - kept.start_ns, "the JSON's duration, to the ns")
	t.ok(math.abs(start - kept.start_ns) < 1000000, "the JSON's start")
end)

-- Last: it makes the services it starts quiet (trace_lines is read once,
-- at a service's first trace).
t.case("trace_lines = false: a request's span is kept without a record until read", function()
	skynet.setenv("trace_lines", "false")
	local quiet, quiet2 = skynet.newservice("svc_trace_probe"), skynet.newservice("svc_trace_probe")
	local function one(cmd, ...)
		local args = table.pack(...)
		return in_coroutine(function()
			local id, s = tracing.begin()
			local ok, r = pcall(skynet.call, quiet, "lua", cmd, table.unpack(args, 1, args.n))
			return id, s, ok, r
		end)
	end
	local ids = {}
	for i = 1, 3 do -- a leaf request: nothing reads its trace while it runs
		local id, span, ok, r = one("leaf", i)
		t.ok(ok and r == i, "answered")
		local spans = spans_of(id, 2)
		t.eq(#spans, 2, "the callee's span and the caller's, of this trace only")
		local callee = spans[1]
		t.eq(callee.name, "svc_trace_probe leaf", "named")
		t.eq(callee.parent, span, "a child of the caller's span")
		t.ok(callee.span:match("^" .. string.rep("%x", 16) .. "$") and callee.span ~= span, "an id")
		t.ok(not ids[callee.span], "a new id each time")
		ids[callee.span] = true
		t.eq(callee.address, skynet.address(quiet), "address")
		t.eq(callee.source, skynet.address(skynet.self()), "source")
		t.eq(callee.status, "ok", "outcome")
		t.ok(callee.end_ns >= callee.start_ns and callee.start_ns >= spans[2].start_ns, "times")
	end
	local id, _, ok = one("fail")
	t.ok(not ok, "the call failed")
	local spans = spans_of(id, 2)
	t.eq(spans[1].name .. " " .. spans[1].status, "svc_trace_probe fail error", "a raised request")
	-- The name is the request's first value as the service's unpack gave
	-- it: a number names nothing, a long string is cut; a skynet.filter's
	-- request is named by what the filter made.
	id = one(42)
	t.eq(spans_of(id, 2)[1].name, "svc_trace_probe", "a number names nothing")
	id = one(string.rep("n", 40), 1)
	t.eq(spans_of(id, 2)[1].name, "svc_trace_probe " .. string.rep("n", 31), "a long name, cut")
	-- The name of the span that service made in a trace begun by f.
	local function name_at(service, f)
		local trace = in_coroutine(function()
			local begun = tracing.begin()
			f()
			return begun
		end)
		for _, s in ipairs(spans_of(trace, 2)) do
			if s.address == skynet.address(service) then
				return s.name
			end
		end
	end
	t.eq(name_at(quiet, function()
		skynet.redirect(quiet, skynet.self(), "client", 0, "hello")
	end), "svc_trace_probe hello", "named by the client protocol's unpack")
	local filtered = skynet.newservice("svc_trace_probe", "filter")
	t.eq(name_at(filtered, function()
		t.eq(skynet.call(filtered, "lua", "alias", 7), 7, "the filter's request answered")
	end), "svc_trace_probe leaf", "named by the request the filter made")
	local span, got_id, got_span
	id, span, ok, got_id = one("relay", quiet2)
	t.ok(ok and got_id == id, "the relayed call's trace")
	spans = spans_of(id, 3)
	t.eq(#spans, 3, "three spans")
	t.eq(spans[1].name, "svc_trace_probe ctx", "the innermost ended first")
	t.eq(spans[2].name, "svc_trace_probe relay", "then the relay")
	t.eq(spans[2].parent, span, "the relay is the caller's child")
	t.eq(spans[1].parent, spans[2].span, "the relayed call is the relay's child")
	got_span = select(2, skynet.call(quiet2, "lua", "last"))
	t.eq(got_span, spans[1].span, "the id the innermost request saw")
end)

t.start(nil, function()
	raw = skynet.newservice("svc_trace_probe", "raw")
	probe = skynet.newservice("svc_trace_probe")
end)
