-- skynet.sharedata: memory per reader and proxy read cost. Prints
--   BENCH name=libs.sharedata.rss_per_reader_kib  (KiB of RSS per reader)
--   BENCH name=libs.sharedata.read_ns             (one field read through a proxy)
-- then aborts the node.
--
-- Memory: a config table of about 10 MB (size of the shared version printed
-- on a "bench:" line) is created with sharedata.new. Then N services that
-- do nothing are launched and the growth of the process RSS
-- (/proc/self/statm) is noted; then N services that require skynet.sharedata,
-- query the config and touch a few fields (a child, two grandchildren, a
-- string and a number). The figure is (growth of the readers - growth of the
-- plain ones) / N: what sharedata costs a reader on top of being a service,
-- loading the library included (a third group that only requires it is
-- shown on a "bench:" line to split that part out).
-- A per-reader copy of the table would cost about the table's size each.
--
-- Read: cfg.items[i].hp on cached proxies, best of three runs of ~0.2 s,
-- minus the same loop over a plain Lua table.
local skynet = require "skynet"
local report = require "bench_report"
local sharedata = require "skynet.sharedata"
local core = require "skynet.sharedata.core"
require "skynet.manager"

local N <const> = 1000
local ITEMS <const> = 10000
local PAGE <const> = 4096

local hpc = skynet.hpc

local function rss_kib()
	local f = assert(io.open("/proc/self/statm"))
	local line = f:read("l")
	f:close()
	local resident = tonumber(line:match("^%d+%s+(%d+)"))
	return resident * PAGE / 1024
end

local function config()
	local items = {}
	for i = 1, ITEMS do
		items[i] = {
			id = 100000 + i,
			name = "item_" .. i,
			desc = string.format("description of item %d: ", i) .. string.rep(string.char(97 + i % 26), 300),
			hp = i * 7,
			attack = i % 97,
			rate = i / 3,
			tags = { "t" .. i % 13, "k" .. i % 7 },
			drop = { gold = i % 1000, exp = i % 300 },
		}
	end
	return { items = items, meta = { version = 1, name = "bench config" } }
end

local function launch_all(mode)
	collectgarbage()
	local before = rss_kib()
	local list = {}
	for i = 1, N do
		list[i] = skynet.newservice("bench_sharedata_worker", mode, "cfg")
	end
	for i = 1, N do
		skynet.call(list[i], "lua", "ready")
	end
	collectgarbage()
	return rss_kib() - before, list
end

local function best_ns(n, f)
	local best = math.huge
	for _ = 1, 3 do
		local t0 = hpc()
		f(n)
		best = math.min(best, (hpc() - t0) / n)
	end
	return best
end

local function bench_read()
	local cfg = sharedata.query("cfg")
	local items = cfg.items
	local proxies = {}
	for i = 1, 64 do
		proxies[i] = items[i * 97]
	end
	local plain = {}
	for i = 1, 64 do
		plain[i] = { hp = i }
	end
	local sink = 0
	local n = 2000000
	local function via(t)
		return function(count)
			local s = 0
			for i = 1, count do
				s = s + t[(i & 63) + 1].hp
			end
			sink = sink + s
		end
	end
	local proxy_ns = best_ns(n, via(proxies))
	local plain_ns = best_ns(n, via(plain))
	assert(sink > 0)
	return proxy_ns - plain_ns, proxy_ns, plain_ns
end

skynet.start(function()
	local ok, err = xpcall(function()
		local t0 = hpc()
		sharedata.new("cfg", config())
		collectgarbage()
		local _, bytes = core.stat()
		print(string.format("bench: sharedata config %d items, shared version %.1f MB, built in %.2f s",
			ITEMS, bytes / 1e6, (hpc() - t0) / 1e9))
		local read, proxy_ns, plain_ns = bench_read()
		local plain_kib = launch_all("plain")
		local module_kib = launch_all("module")
		local reader_kib = launch_all("reader")
		print(string.format("bench: sharedata rss growth per %d services: plain %.0f KiB, "
			.. "module loaded %.0f KiB, reader %.0f KiB", N, plain_kib, module_kib, reader_kib))
		print(string.format("bench: sharedata read via proxy %.1f ns, plain table %.1f ns",
			proxy_ns, plain_ns))
		report("libs.sharedata.rss_per_reader_kib", (reader_kib - plain_kib) / N, "KiB")
		report("libs.sharedata.read_ns", read, "ns")
		print(string.format("bench: sharedata total %.1f s", (hpc() - t0) / 1e9))
	end, debug.traceback)
	if not ok then
		print("bench: sharedata benchmark failed: " .. tostring(err))
	end
	skynet.abort()
end)
