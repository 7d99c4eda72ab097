-- skynet.fork: deferred start, FIFO order, forks made by forks run in the
-- same pass, arguments, errors.
local skynet = require "skynet"
local t = require "testlib"

t.case("fork does not run at once", function()
	local log = {}
	local co = skynet.fork(function()
		log[#log + 1] = "fork"
	end)
	t.eq(type(co), "thread", "fork returns a coroutine")
	log[#log + 1] = "caller"
	t.eq(#log, 1, "nothing ran inside fork()")
	skynet.yield()
	t.eq(table.concat(log, ","), "caller,fork", "order")
end)

t.case("forks run in FIFO order; forks made by forks join the same pass", function()
	local log = {}
	for i = 1, 5 do
		skynet.fork(function()
			log[#log + 1] = "f" .. i
			if i == 2 then
				skynet.fork(function()
					log[#log + 1] = "f2.child"
				end)
			end
		end)
	end
	skynet.yield()
	t.eq(table.concat(log, ","), "f1,f2,f3,f4,f5,f2.child", "order")
end)

t.case("fork passes its arguments, nils included", function()
	local got
	skynet.fork(function(...)
		got = table.pack(...)
	end, 1, nil, "three", nil)
	skynet.yield()
	t.eq(got.n, 4, "argument count")
	t.eq(got[1], 1, "1st")
	t.eq(got[2], nil, "2nd")
	t.eq(got[3], "three", "3rd")
end)

t.case("a fork that blocks lets the next fork run", function()
	local log = {}
	skynet.fork(function()
		log[#log + 1] = "a1"
		skynet.sleep(5)
		log[#log + 1] = "a2"
	end)
	skynet.fork(function()
		log[#log + 1] = "b"
	end)
	skynet.sleep(10)
	t.eq(table.concat(log, ","), "a1,b,a2", "order")
end)

t.case("an error in a fork does not stop the others or the service", function()
	local log = {}
	skynet.fork(function()
		log[#log + 1] = "before"
	end)
	skynet.fork(function()
		error("fork failure on purpose")
	end)
	skynet.fork(function()
		log[#log + 1] = "after"
	end)
	skynet.yield()
	t.eq(table.concat(log, ","), "before,after", "surviving forks")
	t.eq(skynet.call(skynet.self(), "lua", "ping"), "pong", "service still answers")
end)

t.case("many forks all run, in order", function()
	local n = 0
	local in_order = true
	for i = 1, 10000 do
		skynet.fork(function()
			n = n + 1
			if n ~= i then
				in_order = false
			end
		end)
	end
	skynet.yield()
	t.eq(n, 10000, "forks run")
	t.ok(in_order, "FIFO")
end)

t.start({
	ping = function()
		skynet.retpack("pong")
	end,
})
