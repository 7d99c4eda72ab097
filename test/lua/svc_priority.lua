-- Helper of test_priority: a subject whose queue gets a backlog, and the
-- helper that floods it. Commands (lua):
--   flood(to, k)        send to `to` k rounds of: lua "L<i>", system "Y<i>",
--                       debug MARK "D<i>"
--   scene(on, helper, k) lane on/off; has helper flood us, waits (spinning,
--                       so nothing is dispatched) until the 3k messages are
--                       queued, arms a 1 cs timeout and spins until its expiry
--                       is queued behind them, then the same with a 1 ms
--                       skynet.timeout_us; returns the dispatch order
--   yield_scene(helper, k) lane on; k lua messages queued, then a
--                       skynet.timeout_us(0) and skynet.yield: returns the
--                       order (both due now: they must come back last)
--   priority()          skynet.priority() (the config's pattern test)
local skynet = require "skynet"
local debugcmd = require "skynet.debug"

local SPIN_LIMIT_NS <const> = 10 * 1000000000

local order = {}
local want = 0
local waiter = nil

local function record(what)
	order[#order + 1] = what
	if #order == want and waiter then
		skynet.wakeup(waiter)
	end
end

-- Spin without yielding (no message is dispatched meanwhile) until n are queued.
local function spin_until_queued(n)
	local deadline = skynet.hpc() + SPIN_LIMIT_NS
	while skynet.mqlen() < n do
		if skynet.hpc() > deadline then
			error(string.format("svc_priority: %d messages queued, want %d", skynet.mqlen(), n))
		end
	end
end

-- Wait until `total` messages were recorded; returns the order and starts a new one.
local function collect(total)
	want = total
	if #order < total then
		waiter = coroutine.running()
		skynet.wait(waiter)
		waiter = nil
	end
	local got = order
	order = {}
	return got
end

skynet.register_protocol {
	name = "system",
	id = skynet.PTYPE_SYSTEM,
	pack = skynet.pack,
	unpack = skynet.unpack,
	dispatch = function(_, _, what)
		record(what)
	end,
}

debugcmd.reg_debugcmd("MARK", function(what)
	record(what)
end)

local CMD = {}

function CMD.flood(to, k)
	for i = 1, k do
		skynet.send(to, "lua", "mark", "L" .. i)
		skynet.send(to, "system", "Y" .. i)
		skynet.send(to, "debug", "MARK", "D" .. i)
	end
end

function CMD.mark(what)
	record(what)
end

function CMD.scene(on, helper, k)
	skynet.priority(on)
	skynet.send(helper, "lua", "flood", skynet.self(), k)
	spin_until_queued(3 * k)
	skynet.timeout(1, function()
		record "T"
	end)
	spin_until_queued(3 * k + 1)
	skynet.timeout_us(1000, function()
		record "U"
	end)
	spin_until_queued(3 * k + 2)
	local got = collect(3 * k + 2)
	skynet.priority(false)
	skynet.ret(skynet.pack(got))
end

function CMD.yield_scene(helper, k)
	skynet.priority(true)
	for i = 1, k do
		skynet.send(helper, "lua", "bounce", skynet.self(), "L" .. i)
	end
	spin_until_queued(k)
	skynet.timeout_us(0, function()
		record "U0"
	end)
	skynet.yield()
	record "yielded"
	local got = collect(k + 2)
	skynet.priority(false)
	skynet.ret(skynet.pack(got))
end

function CMD.bounce(to, what)
	skynet.send(to, "lua", "mark", what)
end

function CMD.priority()
	skynet.ret(skynet.pack(skynet.priority()))
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = assert(CMD[cmd], cmd)
		f(...)
	end)
end)
