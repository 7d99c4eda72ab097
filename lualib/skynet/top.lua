-- skynet.top: the node's services like htop shows processes, for the debug
-- console's `top` and the metrics service's /top page (docs/operations.md).
--
--   top.snapshot()          -> { services = {...}, workers = {...}, timer_lag =,
--                               budget = { overruns = {cpu, memory, queue}, throttles, kills } }
--   top.sorted(snap, sort)  -> snap.services in the order sort names (top.SORTS)
--   top.text(snap, n, sort) -> the console's table, one string per line
--   top.json(snap, n, sort) -> the same as JSON, for the live page
--   top.PAGE                -> the live page (HTML and plain JS; it polls /top.json)
--   top.serve(req)          -> code, body, header: an http.server handler for
--                              /top (the page) and /top.json?n=&sort= (the data)
--
-- Every figure is read from the core at once (skynet.metrics), so top and
-- /metrics show the same numbers: CPU share and messages per second are over
-- the last complete budget window (1 s of node time), the Lua heap is the one
-- each service had at the end of its last batch. Names come from the
-- launcher's list, like the metrics service's labels.
local skynet = require "skynet"
local core = require "skynet.metrics"
local url = require "http.url"

local sformat = string.format
local tconcat = table.concat

local M = {}

local B_OVER_CPU <const> = 0x01
local B_OVER_MEMORY <const> = 0x02
local B_OVER_QUEUE <const> = 0x04
local B_THROTTLED <const> = 0x08
local B_WATCHED <const> = 0x10
local POLICIES <const> = { [0] = "warn", "throttle", "kill" }

-- The budget state word as words: "-" (no limit), "ok", "over cpu,queue",
-- "throttled"; and the policy.
function M.budget_state(bits)
	local policy = POLICIES[(bits >> 8) & 3] or "?"
	if bits & B_WATCHED == 0 then
		return "-", policy
	end
	if bits & B_THROTTLED ~= 0 then
		return "throttled", policy
	end
	local over = {}
	if bits & B_OVER_CPU ~= 0 then
		over[#over + 1] = "cpu"
	end
	if bits & B_OVER_MEMORY ~= 0 then
		over[#over + 1] = "memory"
	end
	if bits & B_OVER_QUEUE ~= 0 then
		over[#over + 1] = "queue"
	end
	if #over == 0 then
		return "ok", policy
	end
	return "over " .. tconcat(over, ","), policy
end

-- The launcher's description of each service it started, by handle; nil
-- when the launcher does not answer (docs/ref/skynet.top.md).
function M.launcher_names()
	local ok, list = pcall(skynet.call, ".launcher", "lua", "LIST")
	if not ok or type(list) ~= "table" then
		return nil
	end
	local names = {}
	for addr, desc in pairs(list) do
		local h = type(addr) == "string" and tonumber(addr:sub(2), 16) or addr
		if h then
			names[h] = desc
		end
	end
	local launcher = skynet.localname ".launcher"
	if launcher then
		names[launcher] = "snlua launcher" -- started by bootstrap: not in its own list
	end
	return names
end

function M.snapshot()
	local names = M.launcher_names() or {}
	local services = core.services()
	for _, s in ipairs(services) do
		s.address = sformat(":%08x", s.handle)
		s.name = names[s.handle] or s.module
		s.state, s.policy = M.budget_state(s.budget)
	end
	local workers = core.workers()
	for i, w in ipairs(workers) do
		w.id = i - 1
		w.address = w.handle ~= 0 and sformat(":%08x", w.handle) or ""
	end
	local timers = core.timers()
	return { services = services, workers = workers, timer_lag = timers.lag,
		budget = core.budget(), now = skynet.now() }
end

-- Sort keys: the field, and the order (descending for the figures).
M.SORTS = {
	cpu = "cpu_share",
	msg = "message_rate",
	queue = "mqlen",
	mem = "heap",
	timers = "timers",
	address = "handle",
}

function M.sorted(snap, sort)
	sort = sort or "cpu"
	local field = M.SORTS[sort]
	if field == nil then
		local keys = {}
		for k in pairs(M.SORTS) do
			keys[#keys + 1] = k
		end
		table.sort(keys)
		error(sformat("top: unknown sort (%s): one of %s", tostring(sort), tconcat(keys, ", ")), 2)
	end
	local list = table.move(snap.services, 1, #snap.services, 1, {})
	table.sort(list, function(a, b)
		if field ~= "handle" and a[field] ~= b[field] then
			return a[field] > b[field]
		end
		return a.handle < b.handle
	end)
	return list
end

local function check_n(n)
	n = n or 20
	if math.type(n) ~= "integer" or n < 1 then
		error(sformat("top: bad count (%s): a whole number from 1", tostring(n)), 3)
	end
	return n
end

function M.text(snap, n, sort)
	n = check_n(n)
	local list = M.sorted(snap, sort)
	local b = snap.budget
	local out = {
		sformat("services %d, workers %d, timer lag %.1f ms; budget overruns cpu %d, memory %d, queue %d;"
			.. " throttles %d, kills %d", #snap.services, #snap.workers, snap.timer_lag * 1000,
			b.overruns.cpu, b.overruns.memory, b.overruns.queue, b.throttles, b.kills),
		"WORKER  SERVICE    RUNNING_MS  LABEL",
	}
	for _, w in ipairs(snap.workers) do
		if w.handle == 0 then
			out[#out + 1] = sformat("%-7d idle", w.id)
		else
			out[#out + 1] = sformat("%-7d %s  %10.1f  %s", w.id, w.address, w.running * 1000, w.label)
		end
	end
	out[#out + 1] = "ADDRESS    CPU%   MSG/S   QUEUE  MEM_KB    TIMERS  BUDGET             NAME"
	for i = 1, math.min(n, #list) do
		local s = list[i]
		out[#out + 1] = sformat("%s %5.1f %7d %7d %9.1f %7d  %-18s %s", s.address, s.cpu_share * 100,
			s.message_rate, s.mqlen, s.heap / 1024, s.timers, s.state .. "/" .. s.policy, s.name)
	end
	return out
end

-- JSON text of a string.
local function jstr(v)
	return '"' .. tostring(v):gsub('[%c"\\]', function(c)
		return sformat("\\u%04x", c:byte())
	end) .. '"'
end

local function jnum(v)
	if math.type(v) == "integer" then
		return tostring(v)
	end
	return sformat("%.17g", v)
end

function M.json(snap, n, sort)
	n = check_n(n)
	local list = M.sorted(snap, sort)
	local rows = {}
	for i = 1, math.min(n, #list) do
		local s = list[i]
		rows[#rows + 1] = sformat('{"address":%s,"name":%s,"cpu_share":%s,"message_rate":%d,'
			.. '"mqlen":%d,"heap":%d,"timers":%d,"state":%s,"policy":%s,"cpu":%s,"message":%d}',
			jstr(s.address), jstr(s.name), jnum(s.cpu_share), s.message_rate, s.mqlen, s.heap, s.timers,
			jstr(s.state), jstr(s.policy), jnum(s.cpu), s.message)
	end
	local workers = {}
	for _, w in ipairs(snap.workers) do
		workers[#workers + 1] = sformat('{"id":%d,"address":%s,"running":%s,"label":%s}', w.id,
			jstr(w.address), jnum(w.running), jstr(w.label))
	end
	local b = snap.budget
	return sformat('{"now":%d,"services_total":%d,"timer_lag":%s,"budget":{"overruns":{"cpu":%d,'
		.. '"memory":%d,"queue":%d},"throttles":%d,"kills":%d},"workers":[%s],"services":[%s]}',
		snap.now, #snap.services, jnum(snap.timer_lag), b.overruns.cpu, b.overruns.memory,
		b.overruns.queue, b.throttles, b.kills, tconcat(workers, ","), tconcat(rows, ","))
end

M.PAGE = [[<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>skywheel top</title>
<style>
body { font: 13px monospace; margin: 1em; background: #111; color: #ddd; }
table { border-collapse: collapse; margin-bottom: 1em; }
th, td { padding: 2px 8px; text-align: right; }
th { color: #8cf; cursor: pointer; }
td.l, th.l { text-align: left; }
tr.over td { color: #fc6; } tr.throttled td { color: #f96; }
#head { margin-bottom: .5em; }
</style></head>
<body>
<div id="head">loading...</div>
<table id="workers"><thead><tr><th>worker</th><th class="l">service</th><th>running ms</th>
<th class="l">label</th></tr></thead><tbody></tbody></table>
<table id="services"><thead><tr><th class="l" data-sort="address">address</th>
<th data-sort="cpu">cpu %</th><th data-sort="msg">msg/s</th><th data-sort="queue">queue</th>
<th data-sort="mem">mem KB</th><th data-sort="timers">timers</th><th class="l">budget</th>
<th class="l">name</th></tr></thead><tbody></tbody></table>
<script>
"use strict";
var sort = "cpu";
function cell(tr, text, left) {
  var td = document.createElement("td");
  td.textContent = text;
  if (left) td.className = "l";
  tr.appendChild(td);
}
function render(d) {
  var b = d.budget;
  document.getElementById("head").textContent = "services " + d.services_total +
    ", timer lag " + (d.timer_lag * 1000).toFixed(1) + " ms; budget overruns cpu " +
    b.overruns.cpu + ", memory " + b.overruns.memory + ", queue " + b.overruns.queue +
    "; throttles " + b.throttles + ", kills " + b.kills + "; sorted by " + sort;
  var wb = document.querySelector("#workers tbody");
  wb.textContent = "";
  d.workers.forEach(function (w) {
    var tr = document.createElement("tr");
    cell(tr, w.id); cell(tr, w.address || "idle", true);
    cell(tr, w.address ? (w.running * 1000).toFixed(1) : ""); cell(tr, w.label, true);
    wb.appendChild(tr);
  });
  var sb = document.querySelector("#services tbody");
  sb.textContent = "";
  d.services.forEach(function (s) {
    var tr = document.createElement("tr");
    tr.className = "service " + (s.state === "throttled" ? "throttled" :
      s.state.indexOf("over") === 0 ? "over" : "");
    tr.dataset.address = s.address;
    cell(tr, s.address, true); cell(tr, (s.cpu_share * 100).toFixed(1));
    cell(tr, s.message_rate); cell(tr, s.mqlen); cell(tr, (s.heap / 1024).toFixed(1));
    cell(tr, s.timers); cell(tr, s.state + "/" + s.policy, true); cell(tr, s.name, true);
    sb.appendChild(tr);
  });
  window.topData = d;
}
function refresh() {
  fetch("/top.json?n=50&sort=" + sort).then(function (r) { return r.json(); })
    .then(render, function (e) { document.getElementById("head").textContent = "error: " + e; });
}
document.querySelectorAll("th[data-sort]").forEach(function (th) {
  th.addEventListener("click", function () { sort = th.dataset.sort; refresh(); });
});
refresh();
setInterval(refresh, 1000);
</script></body></html>
]]

function M.serve(req)
	if req.method ~= "GET" and req.method ~= "HEAD" then
		return 405, "GET only\n", { allow = "GET, HEAD" }
	end
	local body, header
	if req.path == "/top" then
		body, header = M.PAGE, { ["content-type"] = "text/html; charset=utf-8" }
	else
		local q = url.parse_query(req.query or "")
		local ok, json = pcall(M.json, M.snapshot(), math.tointeger(tonumber(q.n)) or 50, q.sort)
		if not ok then
			return 400, tostring(json) .. "\n"
		end
		body, header = json, { ["content-type"] = "application/json" }
	end
	return 200, req.method == "HEAD" and "" or body, header
end

return M
