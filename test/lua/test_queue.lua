-- skynet.queue: mutual exclusion, FIFO admission, re-entrance,
-- results and arguments, errors release the lock, killed coroutines too.
local skynet = require "skynet"
local queue = require "skynet.queue"
local t = require "testlib"

-- Starts n forks that each enter cs and sleep inside; returns the log.
local function contend(cs, n, ti)
	local log = {}
	local left = n
	local me = coroutine.running()
	for i = 1, n do
		skynet.fork(function()
			cs(function()
				log[#log + 1] = "in" .. i
				skynet.sleep(ti)
				log[#log + 1] = "out" .. i
			end)
			left = left - 1
			if left == 0 then
				skynet.wakeup(me)
			end
		end)
	end
	skynet.wait(me)
	return table.concat(log, ",")
end

t.case("one coroutine at a time, admitted in FIFO order", function()
	local cs = queue()
	t.eq(contend(cs, 5, 3), "in1,out1,in2,out2,in3,out3,in4,out4,in5,out5", "log")
end)

t.case("without the queue the same work interleaves", function()
	local log = {}
	local left = 3
	local me = coroutine.running()
	for i = 1, 3 do
		skynet.fork(function()
			log[#log + 1] = "in" .. i
			skynet.sleep(3)
			log[#log + 1] = "out" .. i
			left = left - 1
			if left == 0 then
				skynet.wakeup(me)
			end
		end)
	end
	skynet.wait(me)
	t.eq(table.concat(log, ","), "in1,in2,in3,out1,out2,out3", "log")
end)

t.case("a newcomer does not overtake waiters", function()
	-- "first" leaves and at once asks again, before the woken waiter ran:
	-- the waiter must still go first.
	local cs = queue()
	local log = {}
	local me = coroutine.running()
	local left = 2
	local function done()
		left = left - 1
		if left == 0 then
			skynet.wakeup(me)
		end
	end
	skynet.fork(function()
		cs(function()
			log[#log + 1] = "first"
			skynet.sleep(5)
		end)
		cs(function()
			log[#log + 1] = "first again"
		end)
		done()
	end)
	skynet.fork(function()
		cs(function()
			log[#log + 1] = "second"
			skynet.sleep(1)
		end)
		done()
	end)
	skynet.wait(me)
	t.eq(table.concat(log, ","), "first,second,first again", "order")
end)

t.case("re-entrant for the holder", function()
	local cs = queue()
	local r = cs(function()
		return cs(function()
			return cs(function()
				skynet.sleep(1)
				return "inner"
			end)
		end)
	end)
	t.eq(r, "inner", "nested result")
	t.eq(cs(function()
		return "free again"
	end), "free again", "lock released after nesting")
end)

t.case("results and arguments pass through", function()
	local cs = queue()
	local r = table.pack(cs(function(...)
		return ...
	end, 1, nil, "three", nil))
	t.eq(r.n, 4, "result count")
	t.eq(r[1], 1, "1st")
	t.eq(r[3], "three", "3rd")
end)

t.case("an error releases the lock and is re-raised with a traceback", function()
	local cs = queue()
	local ok, err = pcall(cs, function()
		error("queue failure on purpose")
	end)
	t.eq(ok, false, "error propagates")
	t.ok(tostring(err):find("queue failure on purpose", 1, true), "message: " .. tostring(err))
	t.ok(tostring(err):find("stack traceback", 1, true), "traceback appended: " .. tostring(err))
	t.eq(cs(function()
		return "after error"
	end), "after error", "lock released")
end)

t.case("an error in the holder admits the next waiter", function()
	local cs = queue()
	local log = {}
	skynet.fork(function()
		pcall(cs, function()
			skynet.sleep(2)
			log[#log + 1] = "failing"
			error("holder failure on purpose")
		end)
	end)
	skynet.fork(function()
		cs(function()
			log[#log + 1] = "waiter"
		end)
	end)
	skynet.sleep(5)
	t.eq(table.concat(log, ","), "failing,waiter", "log")
end)

t.case("a killed waiter does not block the queue", function()
	local cs = queue()
	local log = {}
	skynet.fork(function()
		cs(function()
			skynet.sleep(5)
			log[#log + 1] = "holder"
		end)
	end)
	local victim = skynet.fork(function()
		cs(function()
			log[#log + 1] = "victim"
		end)
	end)
	skynet.fork(function()
		cs(function()
			log[#log + 1] = "last"
		end)
	end)
	skynet.yield()
	t.eq(skynet.killthread(victim), victim, "killed the waiter")
	skynet.sleep(10)
	t.eq(table.concat(log, ","), "holder,last", "log")
end)

t.case("a killed holder releases the lock", function()
	local cs = queue()
	local log = {}
	local holder = skynet.fork(function()
		cs(function()
			skynet.sleep(100)
			log[#log + 1] = "holder"
		end)
	end)
	skynet.fork(function()
		cs(function()
			log[#log + 1] = "next"
		end)
	end)
	skynet.yield()
	t.eq(skynet.killthread(holder), holder, "killed the holder")
	skynet.sleep(5)
	t.eq(table.concat(log, ","), "next", "log")
end)

t.case("separate queues do not block each other", function()
	local a, b = queue(), queue()
	local log = {}
	skynet.fork(function()
		a(function()
			skynet.sleep(10)
			log[#log + 1] = "a"
		end)
	end)
	skynet.fork(function()
		b(function()
			log[#log + 1] = "b"
		end)
	end)
	skynet.sleep(20)
	t.eq(table.concat(log, ","), "b,a", "log")
end)

t.case("requests serialised by one queue in a service", function()
	local svc_log = skynet.call(skynet.self(), "lua", "serialised_batch")
	t.eq(svc_log, "r1+,r1-,r2+,r2-,r3+,r3-", "request log")
end)

local request_cs = queue()
local request_log = {}

t.start({
	serialised = function(_, _, name)
		request_cs(function()
			request_log[#request_log + 1] = name .. "+"
			skynet.sleep(2)
			request_log[#request_log + 1] = name .. "-"
		end)
		skynet.retpack(true)
	end,
	serialised_batch = function()
		local me = coroutine.running()
		local left = 3
		for i = 1, 3 do
			skynet.fork(function()
				skynet.call(skynet.self(), "lua", "serialised", "r" .. i)
				left = left - 1
				if left == 0 then
					skynet.wakeup(me)
				end
			end)
		end
		skynet.wait(me)
		skynet.retpack(table.concat(request_log, ","))
	end,
})
