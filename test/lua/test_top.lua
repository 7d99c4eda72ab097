-- test: real time (the metrics port is scraped over a real socket, and a browser loads /top)
-- top (docs/operations.md, "Budgets and top"): the console's `top [n] [sort]`
-- lists services with their budget state, the workers and the timer lag,
-- sorted as asked, and rejects bad arguments; /top.json and /metrics taken
-- one after the other show the same figures for quiet services (CPU share,
-- messages per second, queue, heap, timers, budget state); a looping
-- service shows up first by CPU, and throttled; in real time, throttled
-- hogs leave the call latency of the others near the latency without them
-- (a ratio); the live page /top, loaded
-- in headless chromium, shows a row per service and refreshes.
local skynet = require "skynet"
local socket = require "skynet.socket"
local httpc = require "http.httpc"
local json = require "json_min"
local devtools = require "devtools"
local t = require "testlib"

local mport, cport

local function get(path)
	local code, body = httpc.get("127.0.0.1:" .. mport, path)
	t.eq(code, 200, "GET " .. path)
	return body
end

-- name{labels} -> value, for the per-service series of one address.
local function scrape(address)
	local out = {}
	for name, labels, value in get("/metrics"):gmatch "\n([%a_]+)(%b{}) (%S+)" do
		if labels:find('service="' .. address .. '"', 1, true) then
			out[name] = tonumber(value)
		end
	end
	return out
end

local function console(line)
	local c = assert(socket.open("127.0.0.1", cport))
	t.eq(socket.readline(c), "Welcome to skynet console", "welcome line")
	socket.write(c, line .. "\n")
	local out = {}
	while true do
		local l = assert(socket.readline(c), "console closed")
		if l == "<CMD OK>" or l == "<CMD Error>" then
			socket.close(c)
			return out, l
		end
		out[#out + 1] = l
	end
end

local quiet, hog

t.case("setup: a metrics port, a console, a quiet service with timers, a throttled hog", function()
	local m = skynet.newservice("metrics", "127.0.0.1", 0, 1000)
	mport = skynet.call(m, "lua", "port")
	local con = skynet.newservice("debug_console", "127.0.0.1", 0)
	local _
	_, cport = skynet.call(con, "lua", "ADDRESS")
	quiet = skynet.newservice("svc_console_timers")
	skynet.call(quiet, "lua", "schedule", 5, 360000)
	hog = skynet.newservice("svc_budget_hog")
	skynet.call(hog, "lua", "budget", { cpu_ms_per_s = 200, policy = "throttle" })
	skynet.call(hog, "lua", "loop", 2, 0)
	skynet.sleep(150) -- the quiet service's window ends: its rates settle
end)

t.case("/top.json and /metrics agree for a quiet service", function()
	local address = skynet.address(quiet)
	local ok = false
	for _ = 1, 3 do -- a window may end between the two reads; then read both again
		local top = json.decode(get("/top.json?n=1000&sort=address"))
		local m = scrape(address)
		local row
		for _, s in ipairs(top.services) do
			if s.address == address then
				row = s
			end
		end
		t.ok(row, "the quiet service in /top.json")
		t.ok(m.skynet_service_timers, "the quiet service in /metrics")
		t.eq(row.timers, 5, "its timers")
		if row.cpu_share == m.skynet_service_cpu_share and row.message_rate
			== m.skynet_service_messages_per_second and row.mqlen == m.skynet_service_queue_messages
			and row.heap == m.skynet_service_heap_bytes and row.timers == m.skynet_service_timers
			and row.message == m.skynet_service_messages_total and row.cpu
			== m.skynet_service_cpu_seconds_total and m.skynet_service_over_budget == 0 then
			ok = true
			break
		end
	end
	t.ok(ok, "top and metrics disagree three times in a row")
end)

t.case("the looping hog comes first by CPU, throttled, in both", function()
	local address = skynet.address(hog)
	local top = json.decode(get("/top.json?n=3"))
	t.eq(top.services[1].address, address, "first by cpu")
	t.eq(top.services[1].policy, "throttle", "its policy")
	t.ok(top.services[1].cpu_share > 0.01, "its cpu share " .. top.services[1].cpu_share)
	t.ok(#top.workers >= 2, "the workers")
	t.ok(top.timer_lag >= 0, "the timer lag")
	t.ok(top.budget.throttles > 0, "throttles counted")
	local deadline = skynet.now() + 300
	repeat
		local m = scrape(address)
		t.ok(m.skynet_service_cpu_share, "the hog in /metrics")
		if m.skynet_service_throttled == 1 and m.skynet_service_over_budget == 1 then
			return
		end
		skynet.sleep(5)
	until skynet.now() > deadline
	error("the hog never showed as throttled in /metrics")
end)

t.case("console top: workers, services sorted, budget states; bad arguments fail", function()
	local out, status = console "top 5 cpu"
	t.eq(status, "<CMD OK>", "status")
	t.ok(out[1]:find("^services %d+, workers %d+, timer lag"), "head: " .. out[1])
	t.eq(out[2], "WORKER  SERVICE    RUNNING_MS  LABEL", "workers head")
	local at
	for i, l in ipairs(out) do
		if l:find("^ADDRESS") then
			at = i
		end
	end
	t.ok(at, "services head")
	t.eq(#out - at, 5, "five services")
	t.ok(out[at + 1]:find(skynet.address(hog), 1, true), "the hog first: " .. out[at + 1])
	t.ok(out[at + 1]:find("/throttle", 1, true), "its budget state: " .. out[at + 1])
	local by_timers = console "top 1 timers"
	t.ok(by_timers[#by_timers]:find(skynet.address(quiet), 1, true), "by timers: " .. by_timers[#by_timers])
	local bad, st = console "top 5 colour"
	t.eq(st, "<CMD Error>", "bad sort")
	t.ok(bad[1]:find("top: unknown sort (colour)", 1, true), bad[1])
	bad, st = console "top -1"
	t.eq(st, "<CMD Error>", "bad count")
	t.ok(bad[1]:find("top: bad count (-1)", 1, true), bad[1])
	t.eq(httpc.get("127.0.0.1:" .. mport, "/top.json?sort=colour"), 400, "bad sort on /top.json")
	t.eq(httpc.request("DELETE", "127.0.0.1:" .. mport, "/top"), 405, "DELETE /top")
end)

-- Median round trip (ns) of calls to h, `bursts` bursts of 10 calls 5 cs apart, so the samples
-- spread over the hogs' windows in real time.
local function spread_median_ns(h, bursts)
	local times = {}
	for _ = 1, bursts do
		for _ = 1, 10 do
			local t0 = skynet.hpc()
			skynet.call(h, "lua", "ping")
			times[#times + 1] = skynet.hpc() - t0
		end
		skynet.sleep(5)
	end
	table.sort(times)
	return times[#times // 2]
end

t.case("real time: throttled hogs leave the other services' call latency near the baseline", function()
	local echo = skynet.newservice("svc_budget_hog")
	local base = spread_median_ns(echo, 20)
	local hogs = {}
	for i = 1, 3 do -- more hogs than workers: unthrottled, every call would wait behind a spin
		hogs[i] = skynet.newservice("svc_budget_hog")
		skynet.call(hogs[i], "lua", "budget", { cpu_ms_per_s = 50, policy = "throttle" })
		skynet.call(hogs[i], "lua", "loop", 2, 3000)
	end
	skynet.sleep(120) -- a window or so: each hog has used its budget and waits
	local with_hogs = spread_median_ns(echo, 30)
	local ratio = with_hogs / base
	print(string.format("top: call median %d ns alone, %d ns beside 3 throttled hogs, ratio %.2f",
		base, with_hogs, ratio))
	for _, h in ipairs(hogs) do
		skynet.kill(h)
	end
	skynet.kill(echo)
	t.ok(ratio < 5, string.format("latency ratio %.2f (bound 5)", ratio))
end)

---------------------------------------------------------------- the browser

local wait = t.wait_for

t.case("the live page /top in headless chromium shows the services", function()
	if not devtools.available() then
		print("skip browser: chromium is not installed (3rd/deps-test.sh installs it)")
		return
	end
	local browser = devtools.start()
	local ok, err = pcall(function()
		local c = devtools.connect(browser.url)
		local target = c:call("Target.createTarget", { url = string.format("http://127.0.0.1:%d/top", mport) })
		local session = c:call("Target.attachToTarget", { targetId = target.targetId, flatten = true }).sessionId
		local row = string.format("document.querySelector('tr.service[data-address=\"%s\"]')", skynet.address(quiet))
		wait(function()
			return c:eval(session, "!!" .. row)
		end, 1000, "the quiet service's row")
		t.ok(c:eval(session, row .. ".textContent"):find("svc_console_timers", 1, true), "its name in the row")
		local now = c:eval(session, "window.topData.now")
		wait(function()
			return c:eval(session, "window.topData.now") > now
		end, 500, "a refresh")
	end)
	devtools.stop(browser)
	assert(ok, err)
	skynet.kill(hog)
end)

t.start()
