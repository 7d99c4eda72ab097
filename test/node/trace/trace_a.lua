-- The driver of test/node/test_trace.sh, node "a" in its own process; node
-- "b" (trace_b.lua) runs in another. The chain: an HTTP request comes into
-- hop entry (a), which calls hop mid (a), which calls hop back on node b
-- through skynet.cluster, which GETs b's echo server with httpc. Checked:
-- a traceparent sent in is adopted, and one trace id is in every span both
-- nodes wrote (OpenTelemetry JSON lines) and in every log line of the
-- chain; each span's parent is the span before it, across the nodes too;
-- the echo server got a traceparent naming back's span; requests without a
-- traceparent, or with a malformed one, are not traced anywhere and carry
-- no traceparent out. Each case prints "ok"/"FAIL"; the node exits 0 only
-- when all passed.
local skynet = require "skynet"
require "skynet.manager"
local cluster = require "skynet.cluster"
local httpc = require "http.httpc"
local json = require "json_min"
local t = require "testlib"

local tmp = os.getenv "TRACE_TMP"
local TRACE <const> = "4bf92f3577b34da6a3ce929d0e0e4736"
local PARENT <const> = "00f067aa0ba902b7"
local BAD <const> = {
	"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", -- upper case
	"00-00000000000000000000000000000000-00f067aa0ba902b7-01", -- zero trace id
	"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", -- zero parent
	"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", -- version ff
	"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  -- short trace id
	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", -- extra after 00
	"garbage",
}

local entry_addr

local function wait_until(cond, limit_cs)
	local deadline = skynet.now() + limit_cs
	while not cond() do
		if skynet.now() >= deadline then
			return false
		end
		skynet.sleep(2)
	end
	return true
end

local function read_file(path)
	local f = io.open(path)
	if f == nil then
		return ""
	end
	local s = f:read "a"
	f:close()
	return s
end

local function get(path, traceparent)
	local header = traceparent and { traceparent = traceparent } or nil
	local code, body = httpc.request("GET", entry_addr, path, nil, header)
	t.eq(code, 200, "status of " .. path)
	return body
end

-- The spans a node wrote: a list of { span = the OTLP span, node = its service.name }.
local function spans_of(node)
	local list = {}
	for line in read_file(tmp .. "/" .. node .. ".jsonl"):gmatch "[^\n]+" do
		local req = json.decode(line)
		local rs = req.resourceSpans[1]
		t.eq(rs.resource.attributes[1].value.stringValue, node, "service.name")
		for _, span in ipairs(rs.scopeSpans[1].spans) do
			list[#list + 1] = span
		end
	end
	return list
end

-- The one span whose name is name, among list.
local function named(list, name)
	local found
	for _, s in ipairs(list) do
		if s.name == name then
			t.ok(found == nil, "one span named " .. name)
			found = s
		end
	end
	t.ok(found, "a span named " .. name)
	return found
end

local cases = {}
local function case(name, f)
	cases[#cases + 1] = { name = name, f = f }
end

local echoed = {}

case("requests go through the chain", function()
	echoed.chain = get("/chain", "00-" .. TRACE .. "-" .. PARENT .. "-01")
	echoed.plain = get("/plain")
	for i, bad in ipairs(BAD) do
		echoed["bad" .. i] = get("/bad" .. i, bad)
	end
	-- a callee's span ends after its answer left: flush until the 3 spans of
	-- each node are written (or 3 s passed; the checks below then say what is missing)
	wait_until(function()
		skynet.call(".tracer", "lua", "FLUSH")
		cluster.call("b", "@back", "flush")
		return #spans_of "trace_a" >= 3 and #spans_of "trace_b" >= 3
	end, 300)
end)

case("the traceparent in is adopted; httpc sends one out", function()
	local trace_id, parent = echoed.chain:match "^00%-(%x+)%-(%x+)%-01$"
	t.eq(trace_id, TRACE, "the echo server got the trace id that came in")
	local back = named(spans_of "trace_b", "trace_hop work")
	t.eq(parent, back.spanId, "its parent is back's span")
end)

case("one trace id in every span, each span the child of the one before", function()
	local a, b = spans_of "trace_a", spans_of "trace_b"
	t.eq(#a, 3, "a: entry, mid, the sender")
	t.eq(#b, 3, "b: the agent, back, echo")
	for _, s in ipairs(a) do
		t.eq(s.traceId, TRACE, "a: trace id of " .. s.name)
		t.eq(s.status.code, 1, "a: outcome of " .. s.name)
	end
	for _, s in ipairs(b) do
		t.eq(s.traceId, TRACE, "b: trace id of " .. s.name)
	end
	local entry = named(a, "trace_hop GET /chain")
	local mid = named(a, "trace_hop work")
	local sender = named(a, "clustersender req")
	local agent = named(b, "clusteragent cluster @back")
	local back = named(b, "trace_hop work")
	local echo = named(b, "trace_hop GET /echo")
	t.eq(entry.parentSpanId, PARENT, "entry: the caller's span")
	t.eq(mid.parentSpanId, entry.spanId, "mid: entry's")
	t.eq(sender.parentSpanId, mid.spanId, "the sender: mid's")
	t.eq(agent.parentSpanId, sender.spanId, "the agent on b: the sender's on a")
	t.eq(back.parentSpanId, agent.spanId, "back: the agent's")
	t.eq(echo.parentSpanId, back.spanId, "echo: back's (through traceparent)")
	for _, s in ipairs { entry, mid, sender, agent, back, echo } do
		t.ok(#s.spanId == 16 and tonumber(s.endTimeUnixNano) >= tonumber(s.startTimeUnixNano),
			"span id and times of " .. s.name)
	end
end)

case("untraced and malformed: nothing traced, no traceparent out", function()
	t.eq(echoed.plain, "none", "no traceparent without one in")
	for i = 1, #BAD do
		t.eq(echoed["bad" .. i], "none", "malformed traceparent " .. i .. " ignored")
	end
end)

case("every log line of the traced request carries the id, the others none", function()
	local hops = 0
	local requests = 2 + #BAD
	for _, node in ipairs { "trace_a", "trace_b" } do
		t.ok(wait_until(function() -- the logger writes after the answers came
			local _, n = read_file(tmp .. "/" .. node .. ".log"):gsub("hop %a+ ", "")
			return n >= 2 * requests -- a: entry and mid; b: back and echo
		end, 500), node .. " logged every hop")
		for line in read_file(tmp .. "/" .. node .. ".log"):gmatch "[^\n]+" do
			local traced = line:find("<TRACE", 1, true) or line:find("[trace", 1, true)
			if traced then
				t.ok(line:find(TRACE, 1, true), "a traced line with another id: " .. line)
			end
			if line:find("hop %a+ /chain") or line:find("hop echo 00-") then
				hops = hops + 1
				t.ok(line:find("[trace ", 1, true) and line:find(TRACE, 1, true),
					"a line of the chain without the id: " .. line)
			elseif line:find("hop %a+ /") or line:find("hop echo nil", 1, true) then
				t.ok(not traced, "an untraced line with an id: " .. line)
			end
			t.ok(not line:find("error", 1, true), "no error logged: " .. line)
		end
	end
	t.eq(hops, 4, "lines of entry, mid (a), back and echo (b)")
end)

local function run()
	local passed, failed = 0, 0
	for _, c in ipairs(cases) do
		local ok, err = xpcall(c.f, debug.traceback)
		if ok then
			passed = passed + 1
			print("ok   " .. c.name)
		else
			failed = failed + 1
			print("FAIL " .. c.name .. "\n    " .. tostring(err):gsub("\n", "\n    "))
		end
	end
	print(string.format("%d passed, %d failed", passed, failed))
	return failed
end

skynet.start(function()
	t.ok(wait_until(function()
		return read_file(tmp .. "/b.ready") ~= "" or io.open(tmp .. "/b.ready") ~= nil
	end, 3000), "node b did not start")
	cluster.reload()
	local mid = skynet.newservice("trace_hop", "mid")
	local entry = skynet.newservice("trace_hop", "entry", mid)
	entry_addr = "127.0.0.1:" .. skynet.call(entry, "lua", "ADDRESS")
	local failed = run()
	cluster.send("b", "@back", "abort")
	skynet.sleep(20)
	skynet.abort(failed == 0 and 0 or 1)
end)
