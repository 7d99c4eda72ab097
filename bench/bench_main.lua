-- Lua benchmarks. Prints one line per figure,
--   BENCH name=<name> value=<number> unit=<unit>
-- then aborts the node. Real time, run by bench/run.sh with config.bench.
local skynet = require "skynet"
local report = require "bench_report"
local proc = require "bench_proc"
require "skynet.manager"

local hpc = skynet.hpc

local WATCHDOG_CS <const> = 12000 -- the whole run normally takes ~15 s

-- "done" notices from sinks wake the waiting benchmark.
local done_count = 0
local done_last = 0
local done_waiter = nil

local function wait_done(n)
	while done_count < n do
		done_waiter = coroutine.running()
		skynet.wait(done_waiter)
	end
	done_waiter = nil
	local last = done_last
	done_count, done_last = 0, 0
	return last
end

local function spawn(name, n)
	local list = {}
	for i = 1, n do
		list[i] = skynet.newservice(name)
	end
	return list
end

local function kill_all(list)
	for _, h in ipairs(list) do
		skynet.kill(h)
	end
end

-- senders[i] sends per_sender messages to sinks[map(i)]; returns msgs/s.
local function send_rate(n_senders, n_sinks, per_sender)
	local senders = spawn("bench_sender", n_senders)
	local sinks = spawn("bench_sink", n_sinks)
	local per_sink = per_sender * n_senders // n_sinks
	for _, s in ipairs(sinks) do
		skynet.call(s, "lua", "expect", per_sink, skynet.self())
	end
	local t0 = hpc()
	for i, s in ipairs(senders) do
		skynet.send(s, "lua", "go", sinks[(i - 1) % n_sinks + 1], per_sender)
	end
	local t1 = wait_done(n_sinks)
	kill_all(senders)
	kill_all(sinks)
	return per_sender * n_senders / ((t1 - t0) / 1e9)
end

local function bench_send()
	send_rate(1, 1, 100000) -- warm up
	report("lua.send_1to1_per_s", send_rate(1, 1, 1000000), "msgs/s")
	report("lua.send_4to1_per_s", send_rate(4, 1, 250000), "msgs/s")
	report("lua.send_8pairs_per_s", send_rate(8, 8, 200000), "msgs/s")
end

-- n calls between two services; calls/s.
local function call_rate(n)
	local server = skynet.newservice("bench_echo")
	local client = skynet.newservice("bench_echo")
	skynet.call(client, "lua", "calls", server, 10000) -- warm up
	local ns = skynet.call(client, "lua", "calls", server, n)
	kill_all({ server, client })
	return n / (ns / 1e9)
end

-- A process that keeps one core busy (a shell loop, 60 s at most); its pid.
local function start_hog()
	local p = assert(io.popen "timeout 60 sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!")
	local pid = p:read "n"
	p:close()
	return assert(pid, "the busy process did not start")
end

local function bench_call()
	report("lua.call_per_s", call_rate(300000), "calls/s")
	-- The same while a neighbour keeps one of the two cores busy: a worker
	-- that spins takes the core the other worker needs.
	local hog = start_hog()
	local ok, rate = pcall(call_rate, 100000)
	os.execute("kill " .. hog .. " 2>/dev/null")
	report("sched.oversubscribed_call_per_s", assert(ok and rate, rate), "calls/s")
end

local function bench_spawn()
	kill_all(spawn("bench_idle", 20)) -- warm up caches
	collectgarbage("collect")
	local rss0 = proc.vmrss_kib()
	local n = 1000
	local t0 = hpc()
	local list = spawn("bench_idle", n)
	local t1 = hpc()
	local rss1 = proc.vmrss_kib()
	report("lua.spawn_per_s", n / ((t1 - t0) / 1e9), "services/s")
	report("lua.idle_service_kib", (rss1 - rss0) / n, "KiB")
	kill_all(list)
end

local function bench_timeouts()
	local svc = skynet.newservice("bench_timer")
	local rate, bytes = skynet.call(svc, "lua", "sched", 1000000)
	report("lua.timeout_sched_per_s", rate, "timeouts/s")
	report("lua.timeout_bytes", bytes, "bytes")
	skynet.kill(svc)
	skynet.sleep(10) -- let the killed timers go
	svc = skynet.newservice("bench_timer")
	local p50, p99, max, early = skynet.call(svc, "lua", "late")
	report("timer.lua.late_p50_ms", p50, "ms")
	report("timer.lua.late_p99_ms", p99, "ms")
	report("timer.lua.late_max_ms", max, "ms")
	report("timer.lua.early_max_ms", early, "ms")
	local p99_sleep = skynet.call(svc, "lua", "sleep1")
	report("timer.lua.sleep1_interval_p99_ms", p99_sleep, "ms")
	skynet.kill(svc)
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, stamp)
		if cmd == "done" then
			done_count = done_count + 1
			if stamp > done_last then
				done_last = stamp
			end
			if done_waiter then
				skynet.wakeup(done_waiter)
			end
		else
			error("bench_main: unknown command (" .. tostring(cmd) .. ")")
		end
	end)
	skynet.timeout(WATCHDOG_CS, function()
		print("bench: lua benchmarks timed out")
		skynet.abort()
	end)
	skynet.fork(function()
		local ok, err = xpcall(function()
			bench_spawn() -- first: RSS growth is clearest in a fresh process
			bench_send()
			bench_call()
			bench_timeouts()
			skynet.call(skynet.newservice("bench_sched"), "lua", "run") -- skynet.timer, ~20 s
		end, debug.traceback)
		if not ok then
			skynet.error("bench_main: " .. tostring(err))
			print("bench: lua benchmarks failed: " .. tostring(err))
		end
		skynet.abort()
	end)
end)
