-- Start service of test/node/test_trim.sh (a real-time node): 200 services
-- each build about 0.5 MB of Lua tables, then are killed. It prints
-- "trim: before=KB peak=KB after=KB" (RSS before the services, at the peak,
-- and after: checked each second, up to 8 s since the monitor looks every
-- 5 s, until RSS is back near the start), then stops the node.
local skynet = require "skynet"
require "skynet.manager"

local mode = ...

local function rss_kb()
	local f = assert(io.open "/proc/self/statm")
	local _, resident = f:read("n", "n")
	f:close()
	return resident * 4
end

if mode == "hog" then
	skynet.start(function()
		local keep = {}
		for i = 1, 2000 do
			keep[i] = { i, tostring(i), { i } }
		end
		skynet.dispatch("lua", function()
			skynet.retpack(#keep)
		end)
	end)
	return
end

skynet.start(function()
	skynet.sleep(50)
	local before = rss_kb()
	local hogs = {}
	for i = 1, 200 do
		hogs[i] = skynet.newservice("svc_trim", "hog")
		skynet.call(hogs[i], "lua")
	end
	local peak = rss_kb()
	for i = 1, #hogs do
		skynet.kill(hogs[i])
	end
	local after = rss_kb()
	for _ = 1, 8 do
		skynet.sleep(100)
		after = rss_kb()
		if after - before < (peak - before) // 4 then
			break
		end
	end
	print(string.format("trim: before=%d peak=%d after=%d", before, peak, after))
	io.stdout:flush()
	skynet.abort()
end)
