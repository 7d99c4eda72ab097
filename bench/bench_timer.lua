-- Bench helper for skynet.timeout / skynet.sleep, all in real time.
--   sched(n)  n pending timeouts far in the future: (scheduled per second,
--             Lua heap bytes per pending timeout). Kill the service after.
--   late()    200k timeouts, 1000 scheduled every centisecond for 2 s, each
--             1..100 cs ahead; lateness of each against its deadline
--             (skynet.hpc at scheduling + ti): p50, p99, max, early max (ms).
--   sleep1()  skynet.sleep(1) in a loop for 2 s: p99 interval (ms).
local skynet = require "skynet"

local hpc = skynet.hpc
local timeout = skynet.timeout
local sort = table.sort

local CMD = {}

function CMD.sched(n)
	local fired = 0
	local function f()
		fired = fired + 1
	end
	collectgarbage("collect")
	local kb0 = collectgarbage("count")
	local t0 = hpc()
	for i = 1, n do
		timeout(1000000 + (i & 1023), f)
	end
	local elapsed = hpc() - t0
	collectgarbage("collect")
	local kb1 = collectgarbage("count")
	return n / (elapsed / 1e9), (kb1 - kb0) * 1024 / n
end

local function percentile(sorted, p)
	local i = math.max(1, math.min(#sorted, math.ceil(#sorted * p)))
	return sorted[i]
end

function CMD.late()
	local BATCHES <const> = 200
	local PER_BATCH <const> = 1000
	local total = BATCHES * PER_BATCH
	local due = {}
	local late = {}
	local fired = 0
	local me = coroutine.running()
	local idx = 0
	for _ = 1, BATCHES do
		local stamp = hpc()
		for _ = 1, PER_BATCH do
			idx = idx + 1
			local k = idx
			local ti = 1 + (k * 7919) % 100
			due[k] = stamp + ti * 10000000
			timeout(ti, function()
				late[k] = hpc() - due[k]
				fired = fired + 1
				if fired == total then
					skynet.wakeup(me)
				end
			end)
		end
		skynet.sleep(1)
	end
	if fired < total then
		skynet.wait(me)
	end
	sort(late)
	local ms = 1e6
	local early = late[1] < 0 and -late[1] / ms or 0
	return percentile(late, 0.50) / ms, percentile(late, 0.99) / ms, late[#late] / ms, early
end

function CMD.sleep1()
	local gaps = {}
	local start = hpc()
	local prev = start
	while prev - start < 2e9 do
		skynet.sleep(1)
		local now = hpc()
		gaps[#gaps + 1] = now - prev
		prev = now
	end
	sort(gaps)
	return percentile(gaps, 0.99) / 1e6, #gaps
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = CMD[cmd]
		if not f then
			error("bench_timer: unknown command (" .. tostring(cmd) .. ")")
		end
		skynet.retpack(f(...))
	end)
end)
