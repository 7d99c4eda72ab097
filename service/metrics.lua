-- metrics: the node's state in the Prometheus text format (version 0.0.4)
-- at GET /metrics on a loopback address; the last profile of the sampling
-- profiler as a flame graph at /profile (skynet.profiler.page).
--
--   skynet.newservice("metrics", "127.0.0.1", 9100[, top[, series_max]])
--   (or the config keys metrics_address, metrics_port, metrics_top and
--   metrics_series_max when started with no arguments)
--
-- Every scrape reads the core's figures (skynet.metrics: services, queue
-- lengths, messages, CPU, timers and the timer lateness histogram), asks the
-- services with per-service series for their Lua memory through the debug
-- protocol (at most 50 cs each), counts the sockets (socketdriver.info) and
-- reads the process's RSS and CPU from /proc/self. Only loopback addresses
-- are accepted: the numbers describe the inside of the node.
--
-- Per-service series are stable, as Prometheus expects: a service gets them
-- at the first scrape that finds it among the top (10) services by CPU, and
-- keeps them until it exits, even when it drops out of the top later. At
-- most series_max (3 x top) services have them: while that many are
-- tracked, a newcomer to the top waits until a tracked service exits.
-- Services are labelled with the launcher's description ("snlua agent"),
-- or for those the launcher did not start, the name of their C module
-- ("logger", "gate"; the launcher itself is "snlua launcher").
--
-- Counters that sum over live services (messages dispatched) would drop
-- when a service exits; the exported value never decreases: it is the
-- largest sum seen plus the messages of services that exited since (their
-- last known count).
local skynet = require "skynet"
local core = require "skynet.metrics"
local driver = require "skynet.socketdriver"
local server = require "http.server"
local topview = require "skynet.top"
local profile_page = require "skynet.profiler.page"
require "skynet.timer" -- skynet.timeout_call

local sformat = string.format
local tconcat = table.concat

local TOP_DEFAULT <const> = 10
local SERIES_PER_TOP <const> = 3 -- series_max defaults to 3 x top
local MEM_TIMEOUT_CS <const> = 50

local top_n = TOP_DEFAULT
local series_max = SERIES_PER_TOP * TOP_DEFAULT
local tracked = {} -- handle -> true: has per-service series (entered the top, alive)
local known = {} -- handle -> last message count seen
local retired_messages = 0 -- messages of services that exited since start
local names = {} -- handle -> "snlua agent" (launcher's list, refreshed per scrape)

local PAGE_SIZE = 4096
local CLK_TCK = 100

local function is_loopback(addr)
	return addr == "localhost" or addr == "::1" or addr:match "^127%.%d+%.%d+%.%d+$" ~= nil
end

local function escape_label(v)
	return (tostring(v):gsub("\\", "\\\\"):gsub("\n", "\\n"):gsub('"', '\\"'))
end

-- The shortest of %.15g, %.16g and %.17g that reads back as v (%.17g
-- always does): 0.0025, not 0.0025000000000000001. Integers as they are.
local function fmt(v)
	if math.type(v) == "integer" then
		return tostring(v)
	end
	if v ~= v then
		return "NaN"
	elseif v == math.huge then
		return "+Inf"
	elseif v == -math.huge then
		return "-Inf"
	end
	local text
	for digits = 15, 17 do
		text = sformat("%." .. digits .. "g", v)
		if tonumber(text) == v then
			break
		end
	end
	return text
end

local function metric(out, name, kind, help)
	out[#out + 1] = sformat("# HELP %s %s", name, help)
	out[#out + 1] = sformat("# TYPE %s %s", name, kind)
end

local function sample(out, name, value, labels)
	if labels then
		out[#out + 1] = sformat("%s{%s} %s", name, labels, fmt(value))
	else
		out[#out + 1] = sformat("%s %s", name, fmt(value))
	end
end

local function proc_stat()
	local f = io.open("/proc/self/stat")
	if not f then
		return nil
	end
	local line = f:read("l")
	f:close()
	-- fields after the command name (which may contain spaces) in parentheses
	local rest = line:match "%) (.*)$"
	local fields = {}
	for w in rest:gmatch "%S+" do
		fields[#fields + 1] = w
	end
	-- rest starts at field 3 (state): utime is field 14, stime 15, rss 24
	local utime, stime = tonumber(fields[12]), tonumber(fields[13])
	local rss_pages = tonumber(fields[22])
	return (utime + stime) / CLK_TCK, rss_pages * PAGE_SIZE
end

-- The launcher's descriptions of the services it started (kept when the
-- launcher does not answer).
local function refresh_names()
	names = topview.launcher_names() or names
end

local function lua_memory(handle)
	local ok, done, kb = pcall(skynet.timeout_call, MEM_TIMEOUT_CS, handle, "debug", "MEM")
	if ok and done and type(kb) == "number" then
		return kb * 1024
	end
end

local function service_label(s)
	local name = names[s.handle] or s.module
	return sformat('service=":%08x",name="%s"', s.handle, escape_label(name))
end

local function by_cpu(a, b)
	if a.cpu ~= b.cpu then
		return a.cpu > b.cpu
	end
	return a.handle < b.handle
end

-- The services (from core.services(), in handle order) that get per-service
-- series: the tracked ones still alive, plus the top_n by CPU now while
-- fewer than series_max are tracked. Returns them in handle order.
local function series_services(services)
	local count = 0
	local alive = {}
	for _, s in ipairs(services) do
		alive[s.handle] = true
	end
	for h in pairs(tracked) do
		if alive[h] then
			count = count + 1
		else
			tracked[h] = nil
		end
	end
	local ranked = table.move(services, 1, #services, 1, {})
	table.sort(ranked, by_cpu)
	for i = 1, math.min(top_n, #ranked) do
		local h = ranked[i].handle
		if not tracked[h] and count < series_max then
			tracked[h] = true
			count = count + 1
		end
	end
	local list = {}
	for _, s in ipairs(services) do
		if tracked[s.handle] then
			list[#list + 1] = s
		end
	end
	return list
end

-- A histogram from the reminder service: { counts per bound (the last
-- past them), sum, count } with bounds.
local function histogram_samples(out, name, h, bounds)
	local cumulative = 0
	for i, le in ipairs(bounds) do
		cumulative = cumulative + h[i]
		sample(out, name .. "_bucket", cumulative, sformat('le="%s"', fmt(le)))
	end
	sample(out, name .. "_bucket", h.count, 'le="+Inf"')
	sample(out, name .. "_sum", h.sum)
	sample(out, name .. "_count", h.count)
end

-- The durable reminders' series, when the node runs a reminder service.
local function reminder_series(out)
	local addr = skynet.localname ".reminder"
	if addr == nil then
		return
	end
	local ok, done, _, m = pcall(skynet.timeout_call, MEM_TIMEOUT_CS, addr, "lua", "metrics")
	if not (ok and done and type(m) == "table") then
		return
	end
	local counters = {
		{ "skynet_reminder_sets_total", m.sets, "Reminders set (reminder.set) since the node started." },
		{ "skynet_reminder_fires_total", m.fires, "Runs of reminders delivered a first time." },
		{ "skynet_reminder_acks_total", m.acked, "Runs answered and acknowledged in the store." },
		{ "skynet_reminder_retries_total", m.retries, "Failed deliveries retried later." },
		{ "skynet_reminder_dead_letters_total", m.dead_total, "Runs that became dead letters." },
		{ "skynet_reminder_store_errors_total", m.store_errors, "Store operations that failed." },
	}
	for _, c in ipairs(counters) do
		metric(out, c[1], "counter", c[3])
		sample(out, c[1], c[2])
	end
	if m.pending then
		metric(out, "skynet_reminder_pending", "gauge", "Reminders pending in the store.")
		sample(out, "skynet_reminder_pending", m.pending)
		metric(out, "skynet_reminder_dead_letters", "gauge", "Dead letters kept in the store.")
		sample(out, "skynet_reminder_dead_letters", m.dead)
	end
	metric(out, "skynet_reminder_lateness_seconds", "histogram",
		"From a run's due instant until its first delivery was sent.")
	histogram_samples(out, "skynet_reminder_lateness_seconds", m.lateness, m.bounds)
	metric(out, "skynet_reminder_store_seconds", "histogram", "Time of each store operation.")
	histogram_samples(out, "skynet_reminder_store_seconds", m.store, m.bounds)
end

-- The figures /top shows (skynet.top), for the same services: the same core
-- reads, so a scrape and a /top.json taken together agree.
local function top_series(out, picked, which)
	local series = {
		{ "skynet_service_cpu_share", "cpu_share", "Share of a second spent in a service's callback, "
			.. "over the last complete budget window" },
		{ "skynet_service_messages_per_second", "message_rate", "Messages a service took per second, "
			.. "over the last complete budget window" },
		{ "skynet_service_heap_bytes", "heap", "Lua heap of a service at the end of its last batch" },
		{ "skynet_service_timers", "timers", "Timers a service has pending" },
		{ "skynet_service_throttled", "throttled", "1 while a service's queue is deferred by its budget" },
		{ "skynet_service_over_budget", "over", "1 while a service is past one of its budget's limits" },
	}
	for _, s in ipairs(picked) do
		local state = topview.budget_state(s.budget)
		s.throttled = state == "throttled" and 1 or 0
		s.over = state:find("^over") and 1 or s.throttled
	end
	for _, m in ipairs(series) do
		metric(out, m[1], "gauge", sformat("%s (%s).", m[3], which))
		for _, s in ipairs(picked) do
			sample(out, m[1], s[m[2]], service_label(s))
		end
	end
	local b = core.budget()
	metric(out, "skynet_budget_overruns_total", "counter",
		"Budget windows in which a service passed a limit, by measure.")
	for _, k in ipairs { "cpu", "memory", "queue" } do
		sample(out, "skynet_budget_overruns_total", b.overruns[k], sformat('measure="%s"', k))
	end
	metric(out, "skynet_budget_throttles_total", "counter", "Times a service's queue was deferred.")
	sample(out, "skynet_budget_throttles_total", b.throttles)
	metric(out, "skynet_budget_kills_total", "counter", "Services retired over their budget.")
	sample(out, "skynet_budget_kills_total", b.kills)
	metric(out, "skynet_timer_lag_seconds", "gauge", "How late the most recent timer fired.")
	sample(out, "skynet_timer_lag_seconds", core.timers().lag)
end

local function render()
	refresh_names()
	local services = core.services()
	local timers = core.timers()
	local out = {}

	-- services, queues, messages
	local sum, qtotal, qmax = 0, 0, 0
	local seen = {}
	for _, s in ipairs(services) do
		sum = sum + s.message
		qtotal = qtotal + s.mqlen
		if s.mqlen > qmax then
			qmax = s.mqlen
		end
		seen[s.handle] = s.message
	end
	for h, count in pairs(known) do
		if seen[h] == nil then
			retired_messages = retired_messages + count
		end
	end
	known = seen
	metric(out, "skynet_services", "gauge", "Services alive in the node.")
	sample(out, "skynet_services", #services)
	metric(out, "skynet_messages_dispatched_total", "counter",
		"Messages dispatched to services since the node started.")
	sample(out, "skynet_messages_dispatched_total", sum + retired_messages)
	metric(out, "skynet_queue_messages", "gauge", "Messages waiting in all service queues.")
	sample(out, "skynet_queue_messages", qtotal)
	metric(out, "skynet_queue_messages_max", "gauge", "Messages waiting in the longest service queue.")
	sample(out, "skynet_queue_messages_max", qmax)

	-- timers
	metric(out, "skynet_timers_pending", "gauge", "Timers waiting to fire.")
	sample(out, "skynet_timers_pending", timers.pending)
	metric(out, "skynet_timers_fired_total", "counter", "Timers fired since the node started.")
	sample(out, "skynet_timers_fired_total", timers.fired)
	metric(out, "skynet_timer_lateness_seconds", "histogram",
		"Time from the start of a timer's deadline tick until it was dispatched.")
	local cumulative = 0
	for _, b in ipairs(timers.buckets) do
		cumulative = cumulative + b[2]
		sample(out, "skynet_timer_lateness_seconds_bucket", cumulative, sformat('le="%s"', fmt(b[1])))
	end
	sample(out, "skynet_timer_lateness_seconds_sum", timers.late_sum)
	sample(out, "skynet_timer_lateness_seconds_count", cumulative)

	-- per service, for the services that have been in the top by CPU
	local picked = series_services(services)
	local which = sformat("services once among the %d busiest, while alive", top_n)
	metric(out, "skynet_service_cpu_seconds_total", "counter",
		sformat("CPU time spent in a service's callback (%s).", which))
	for _, s in ipairs(picked) do
		sample(out, "skynet_service_cpu_seconds_total", s.cpu, service_label(s))
	end
	metric(out, "skynet_service_messages_total", "counter",
		sformat("Messages dispatched to a service (%s).", which))
	for _, s in ipairs(picked) do
		sample(out, "skynet_service_messages_total", s.message, service_label(s))
	end
	metric(out, "skynet_service_queue_messages", "gauge",
		sformat("Messages waiting in a service's queue (%s).", which))
	for _, s in ipairs(picked) do
		sample(out, "skynet_service_queue_messages", s.mqlen, service_label(s))
	end
	metric(out, "skynet_service_lua_memory_bytes", "gauge",
		sformat("Lua heap of a Lua service (%s).", which))
	for _, s in ipairs(picked) do
		if s.module == "snlua" then
			local bytes = s.handle == skynet.self() and collectgarbage("count") * 1024
				or lua_memory(s.handle)
			if bytes then
				sample(out, "skynet_service_lua_memory_bytes", math.floor(bytes), service_label(s))
			end
		end
	end
	top_series(out, picked, which)

	-- sockets
	local counts = {}
	for _, info in ipairs(driver.info() or {}) do
		local kind = (info.type or "unknown"):lower()
		counts[kind] = (counts[kind] or 0) + 1
	end
	metric(out, "skynet_sockets", "gauge", "Sockets open in the node, by kind.")
	local kinds = {}
	for k in pairs(counts) do
		kinds[#kinds + 1] = k
	end
	table.sort(kinds)
	for _, k in ipairs(kinds) do
		sample(out, "skynet_sockets", counts[k], sformat('kind="%s"', escape_label(k)))
	end

	reminder_series(out)

	-- the process
	local cpu, rss = proc_stat()
	if cpu then
		metric(out, "process_cpu_seconds_total", "counter", "User and system CPU time of the process.")
		sample(out, "process_cpu_seconds_total", cpu)
		metric(out, "process_resident_memory_bytes", "gauge", "Resident memory of the process.")
		sample(out, "process_resident_memory_bytes", rss)
	end
	metric(out, "process_start_time_seconds", "gauge", "Start time of the process since the epoch.")
	sample(out, "process_start_time_seconds", skynet.starttime())
	out[#out + 1] = ""
	return tconcat(out, "\n")
end

-- /top (the live page) and /top.json (its data) are skynet.top's.
local PAGES = { ["/top"] = topview.serve, ["/top.json"] = topview.serve }

local function handler(req)
	if PAGES[req.path] then
		return PAGES[req.path](req)
	end
	local status, page, headers = profile_page.serve(req) -- /profile: the last profile's flame graph
	if status then
		return status, page, headers
	end
	if req.path ~= "/metrics" then
		return 404, "see /metrics\n"
	end
	if req.method ~= "GET" and req.method ~= "HEAD" then
		return 405, "GET only\n", { allow = "GET, HEAD" }
	end
	local body = render()
	return 200, req.method == "HEAD" and "" or body,
		{ ["content-type"] = "text/plain; version=0.0.4; charset=utf-8" }
end

local address, port, top, max = ...
skynet.start(function()
	address = address or skynet.getenv "metrics_address" or "127.0.0.1"
	port = tonumber(port or skynet.getenv "metrics_port")
	top_n = tonumber(top or skynet.getenv "metrics_top") or TOP_DEFAULT
	series_max = tonumber(max or skynet.getenv "metrics_series_max") or SERIES_PER_TOP * top_n
	if port == nil then
		error("metrics: no port (metrics_port or the second argument)")
	end
	if not is_loopback(address) then
		error(sformat("metrics: %s is not a loopback address", address))
	end
	local f = io.popen("getconf PAGESIZE 2>/dev/null; getconf CLK_TCK 2>/dev/null")
	if f then
		PAGE_SIZE = tonumber(f:read("l")) or PAGE_SIZE
		CLK_TCK = tonumber(f:read("l")) or CLK_TCK
		f:close()
	end
	local _, addr, bound = server.listen { address = address, port = port, handler = handler,
		max_connections = 16, bodylimit = 0, timeout = 500 }
	skynet.error(sformat("metrics on http://%s:%d/metrics", addr, bound))
	skynet.dispatch("lua", function(_, _, cmd)
		if cmd == "port" then
			skynet.retpack(bound)
		elseif cmd == "render" then
			skynet.retpack(render())
		else
			error("metrics: unknown command " .. tostring(cmd))
		end
	end)
end)
