-- Smoke test: scheduling order inside one dispatch and
-- skynet.request/select.
local skynet = require "skynet"
local t = require "smoke_check"

local cases = {}
local peer

cases[#cases + 1] = { "wakeups (FIFO, chained) run before forks; forks of forks too", function()
	local log = {}
	local w1, w2, w3 = {}, {}, {}
	skynet.fork(function()
		skynet.wait(w1)
		log[#log + 1] = "w1"
		skynet.wakeup(w3)
	end)
	skynet.fork(function()
		skynet.wait(w2)
		log[#log + 1] = "w2"
	end)
	skynet.fork(function()
		skynet.wait(w3)
		log[#log + 1] = "w3"
	end)
	skynet.yield()
	skynet.fork(function()
		log[#log + 1] = "fork1"
		skynet.fork(function()
			log[#log + 1] = "fork2"
		end)
	end)
	skynet.wakeup(w1)
	skynet.wakeup(w2)
	t.eq(#log, 0, "nothing runs inside wakeup or fork")
	skynet.yield()
	t.eq(table.concat(log, ","), "w1,w2,w3,fork1,fork2", "order")
end }

cases[#cases + 1] = { "woken coroutines run before failed calls", function()
	local log = {}
	local token = {}
	skynet.fork(function()
		local ok = pcall(skynet.call, peer, "lua", "hold")
		log[#log + 1] = ok and "call ok" or "call failed"
	end)
	skynet.fork(function()
		skynet.wait(token)
		log[#log + 1] = "woken"
	end)
	skynet.sleep(1)
	skynet.term(peer)
	skynet.wakeup(token)
	skynet.yield()
	t.eq(table.concat(log, ","), "woken,call failed", "order")
end }

cases[#cases + 1] = { "an error in one coroutine does not stop the others", function()
	local log = {}
	skynet.fork(function()
		log[#log + 1] = "a"
		error("smoke: fork failure on purpose")
	end)
	skynet.fork(function()
		log[#log + 1] = "b"
	end)
	skynet.yield()
	t.eq(table.concat(log, ","), "a,b", "forks")
end }

cases[#cases + 1] = { "request/select: replies in arrival order, failures first", function()
	local r = skynet.request()
	r:add { peer, "lua", "sleep_echo", 30, "slow" }
	r { peer, "lua", "sleep_echo", 10, "fast" } { ".no_such_name", "lua", "echo" }
	r:add { peer, "lua", "fail" }
	local seen = {}
	for _, resp in r:select() do
		if resp == nil then
			seen[#seen + 1] = "sendfail"
		elseif resp == false then
			seen[#seen + 1] = "error"
		else
			seen[#seen + 1] = resp[1]
			-- calls inside the loop do not disturb it
			t.eq(skynet.call(peer, "lua", "echo", "inner"), "inner", "inner call")
		end
	end
	t.eq(table.concat(seen, ","), "sendfail,error,fast,slow", "order")
end }

cases[#cases + 1] = { "select with a timeout stops early", function()
	local r = skynet.request { peer, "lua", "sleep_echo", 5, "quick" } { peer, "lua", "sleep_echo", 500, "late" }
	local seen = {}
	local t0 = skynet.now()
	for _, resp in r:select(50) do
		seen[#seen + 1] = resp[1]
	end
	t.eq(table.concat(seen, ","), "quick", "results")
	t.eq(r.timeout, true, "timeout flag")
	t.eq(skynet.now() - t0, 50, "stopped at the timeout")
	skynet.sleep(600) -- the late reply is dropped silently
end }

skynet.start(function()
	skynet.dispatch_unknown_response(function(session)
		error("smoke: unexpected response " .. session)
	end)
	skynet.dispatch("lua", function(_, _, cmd)
		assert(cmd == "run")
		peer = skynet.newservice("smoke_peer")
		skynet.retpack(t.run(cases))
	end)
end)
