-- 100k pending skynet.timeouts in one service (issue 4: a pending timeout
-- keeps its callback, not a coroutine): Lua heap per timeout, wakeup of a
-- sleeper among them, killthread of some, and every other one firing.
local skynet = require "skynet"
local t = require "testlib"

local N <const> = 100000
local FAR <const> = 100000 -- cs: far beyond anything else in this test

t.case("100k pending timeouts: memory, wakeup, killthread, firing", function()
	local fired = 0
	local function on_timeout()
		fired = fired + 1
	end
	collectgarbage("collect")
	local kb0 = collectgarbage("count")
	local handles = {}
	for i = 1, N do
		local h = skynet.timeout(FAR + (i % 100), on_timeout)
		if i % 100 == 0 then
			handles[#handles + 1] = h -- keep 1000 for killthread
		end
	end
	collectgarbage("collect")
	local kb1 = collectgarbage("count")
	-- The 1000 kept handles are ours; everything else is the framework's.
	local per_timeout = (kb1 - kb0) * 1024 / N
	t.ok(per_timeout < 200, string.format("Lua heap per pending timeout: %.1f bytes", per_timeout))
	t.eq(skynet.stat("mqlen"), 0, "nothing queued yet")

	-- A sleeper is woken at once despite the pile of timers.
	local result
	local sleeper = skynet.fork(function()
		result = skynet.sleep(FAR * 2)
	end)
	skynet.yield()
	local t0 = skynet.now()
	t.eq(skynet.wakeup(sleeper), true, "wakeup")
	skynet.yield()
	t.eq(result, "BREAK", "sleep result")
	t.eq(skynet.now(), t0, "no time passed")

	local killed = 0
	for _, h in ipairs(handles) do
		if skynet.killthread(h) then
			killed = killed + 1
		end
	end
	t.eq(killed, #handles, "killed timeouts")

	skynet.sleep(FAR + 200)
	t.eq(fired, N - killed, "fired timeouts")
	collectgarbage("collect")
	local kb2 = collectgarbage("count")
	t.ok(kb2 - kb0 < 2048, string.format("heap after they fired: %.0f KB above the start", kb2 - kb0))
end)

t.start()
