-- The driver node of bench/bench_cluster.sh (see there for the figures).
-- It picks two free ports, writes the node table, starts the serving node
-- in the background (its pid in $BENCH_DIR/b.pid), measures, and stops it.
local skynet = require "skynet"
require "skynet.manager"
local socket = require "skynet.socket"
local cluster = require "skynet.cluster"
local report = require "bench_report"
local proc = require "bench_proc"

local dir = os.getenv "BENCH_DIR"
local hpc = skynet.hpc

local function free_port()
	local id, _, port = socket.listen("127.0.0.1", 0)
	socket.close(id)
	return port
end

local function start_b()
	local cmd = string.format("BENCH_START=bench_cluster_b %q %q >%q 2>&1 </dev/null & echo $! >%q",
		(skynet.getenv "cpath"):gsub("cservice/%?%.so$", "skynet"), dir .. "/config",
		dir .. "/b.log", dir .. "/b.pid")
	assert(os.execute(cmd))
	for _ = 1, 1000 do
		local f = io.open(dir .. "/b.ready")
		if f then
			f:close()
			return
		end
		skynet.sleep(2)
	end
	error("the serving node did not start")
end

-- n calls from each of `callers` coroutines; returns the seconds taken.
local function calls(callers, n, ...)
	local args = table.pack(...)
	local left = callers
	local token = {}
	local t0 = hpc()
	for _ = 1, callers do
		skynet.fork(function()
			for _ = 1, n do
				cluster.call("b", "@e", table.unpack(args, 1, args.n))
			end
			left = left - 1
			if left == 0 then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
	return (hpc() - t0) / 1e9
end

local function b_pid()
	local f = assert(io.open(dir .. "/b.pid"))
	local pid = f:read "n"
	f:close()
	return pid
end

local function bench()
	calls(1, 2000, "ping") -- warm up
	local n = 20000
	local pid = b_pid()
	local cpu0 = proc.cpu_s() + proc.cpu_s(pid)
	local s = calls(1, n, "ping")
	local cpu = proc.cpu_s() + proc.cpu_s(pid) - cpu0
	report("cluster.call_rtt_us", s / n * 1e6, "us")
	report("cluster.call_seq_per_s", n / s, "calls/s")
	report("cluster.cpu_us_per_call", cpu / n * 1e6, "us")
	report("cluster.call_c8_per_s", 8 * 4000 / calls(8, 4000, "ping"), "calls/s")
	local per = 1000
	report("cluster.call_per_s", 100 * per / calls(100, per, "ping"), "calls/s")
	local sends = 200000
	local t0 = hpc()
	for _ = 1, sends do
		cluster.send("b", "@e", "push")
	end
	local got = cluster.call("b", "@e", "count") -- after every push on the connection
	assert(got == sends, string.format("%d of %d pushes arrived", got, sends))
	report("cluster.send_per_s", sends / ((hpc() - t0) / 1e9), "msgs/s")
	local mb = string.rep("x", 1024 * 1024)
	calls(1, 5, "size", mb)
	local m = 100
	report("cluster.mb_per_s", m / calls(1, m, "size", mb), "MB/s")
end

skynet.start(function()
	local f = assert(io.open(dir .. "/clustername.lua", "w"))
	f:write(string.format('a = "127.0.0.1:%d"\nb = "127.0.0.1:%d"\n', free_port(), free_port()))
	f:close()
	cluster.reload()
	start_b()
	local ok, err = pcall(bench)
	cluster.send("b", "@e", "stop")
	skynet.sleep(10)
	if not ok then
		print("bench_cluster: " .. tostring(err))
		skynet.abort(1)
	end
	skynet.abort(0)
end)
