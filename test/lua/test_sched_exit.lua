-- A service's schedules die with it: a helper (this file launched with the
-- argument "helper") starts one schedule of every kind plus a pending
-- timeout_call, then exits (by itself from inside a scheduled function, or
-- killed from outside); the node's pending timer count
-- (STAT timers_total) returns to what it was, and stays there.
local skynet = require "skynet"
local core = require "skynet.core"

local function total()
	return core.intcommand("STAT", "timers_total")
end

if ... == "helper" then
	local timer = require "skynet.timer"
	local mode = select(2, ...)
	local function noop() end
	skynet.start(function()
		skynet.dispatch("lua", function(_, _, cmd)
			if cmd == "hold" then
				skynet.response() -- never answered
			elseif cmd == "timers" then
				skynet.retpack(skynet.stat "timers")
			end
		end)
		timer.every(10, noop)
		timer.every_after(7, function()
			skynet.sleep(3)
		end)
		timer.at(timer.walltime() + 86400, noop)
		timer.cron("* * * * *", noop, { tz = "UTC" })
		timer.cron("0 5 * * *", noop, { tz = "+08:00" })
		skynet.fork(function()
			skynet.timeout_call(100000, skynet.self(), "lua", "hold")
		end)
		if mode == "self" then
			local n = 0
			timer.every(25, function()
				n = n + 1
				if n == 3 then
					skynet.exit()
				end
			end)
		end
	end)
	return
end

local t = require "testlib"

local function launch(mode)
	local before = total()
	local addr = skynet.newservice(SERVICE_NAME, "helper", mode)
	-- Wake before the helper's first timers (7 and 10 cs): a timer that has
	-- fired but is still queued for the helper is not counted, so waking on
	-- the same tick as one of them would race with its message.
	skynet.sleep(5)
	return before, addr
end

t.case("killed with live schedules: no timer is left behind", function()
	local before, addr = launch("killed")
	local own = skynet.call(addr, "lua", "timers")
	t.ok(own >= 6, "the helper has its timers pending: " .. own)
	t.ok(total() >= before + 6, "the node counts them")
	skynet.kill(addr)
	t.eq(total(), before, "node total after the kill")
	skynet.sleep(100000) -- past every deadline the helper had set
	t.eq(total(), before, "node total later")
end)

t.case("exiting from inside a scheduled function: no timer is left behind", function()
	local before, addr = launch("self")
	skynet.sleep(100) -- the helper exits 75 cs after its start
	t.raises("call to invalid address", skynet.call, addr, "lua", "timers")
	t.eq(total(), before, "node total after the exit")
	skynet.sleep(100000)
	t.eq(total(), before, "node total later")
end)

t.start()
