-- Nested calls: A calls B which calls C, longer chains, calls back into
-- the caller while it waits, and errors crossing a chain.
local skynet = require "skynet"
local t = require "testlib"

local b, c

t.case("A calls B which calls C", function()
	t.eq(skynet.call(b, "lua", "call", c, "echo", "deep"), "deep", "reply through B")
	local x, y, z = skynet.call(b, "lua", "call", c, "echo", 1, nil, 3)
	t.eq(x, 1, "1st")
	t.eq(y, nil, "2nd")
	t.eq(z, 3, "3rd")
end)

t.case("a chain of six services", function()
	local chain = {}
	for i = 1, 6 do
		chain[i] = skynet.newservice("svc_echo")
	end
	-- chain[1] calls chain[2] ... which calls chain[6] "echo".
	local args = { "echo", "end of chain" }
	for i = 6, 2, -1 do
		table.insert(args, 1, chain[i])
		table.insert(args, 1, "call")
	end
	t.eq(skynet.call(chain[1], "lua", table.unpack(args)), "end of chain", "reply")
end)

t.case("B calls back into A while A waits for B", function()
	t.eq(skynet.call(b, "lua", "call", skynet.self(), "plus_one", 41), 42, "call back")
end)

t.case("an error at the end of a chain fails every call on it", function()
	local err = t.raises("call failed", skynet.call, b, "lua", "call", c, "error", "deep boom")
	t.ok(err, "error text")
	-- Both services keep serving.
	t.eq(skynet.call(b, "lua", "call", c, "echo", "still"), "still", "chain after error")
end)

t.case("nested calls interleave in one service", function()
	-- B serves two chains at once: each waits on C with its own delay.
	local r1, r2
	local me = coroutine.running()
	local n = 0
	local function done()
		n = n + 1
		if n == 2 then
			skynet.wakeup(me)
		end
	end
	skynet.fork(function()
		r1 = skynet.call(b, "lua", "call", c, "sleep_echo", 20, "slow")
		done()
	end)
	skynet.fork(function()
		r2 = skynet.call(b, "lua", "call", c, "sleep_echo", 5, "fast")
		done()
	end)
	skynet.wait(me)
	t.eq(r1, "slow", "slow chain")
	t.eq(r2, "fast", "fast chain")
end)

t.start({
	plus_one = function(_, _, v)
		skynet.retpack(v + 1)
	end,
}, function()
	b = skynet.newservice("svc_echo")
	c = skynet.newservice("svc_echo")
end)
