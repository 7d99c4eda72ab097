-- send / call / ret / response: values, per-pair ordering, the reply
-- contract and detached response closures.
local skynet = require "skynet"
local t = require "testlib"

local echo

t.case("call returns every value, nils included", function()
	local n = select("#", skynet.call(echo, "lua", "echo", 1, nil, "x", nil))
	t.eq(n, 4, "value count")
	local a, b, c, d = skynet.call(echo, "lua", "echo", 1, nil, "x", nil)
	t.eq(a, 1, "1st")
	t.eq(b, nil, "2nd")
	t.eq(c, "x", "3rd")
	t.eq(d, nil, "4th")
	t.eq(select("#", skynet.call(echo, "lua", "echo")), 0, "empty reply count")
end)

t.case("send returns 0 and keeps per-pair order", function()
	for i = 1, 1000 do
		t.eq(skynet.send(echo, "lua", "record", i), 0, "send result")
	end
	local log = skynet.call(echo, "lua", "get_log")
	t.eq(#log, 1000, "messages seen before the call")
	for i = 1, 1000 do
		t.eq(log[i], i, "position " .. i)
	end
end)

t.case("concurrent calls each get their own reply", function()
	local got = {}
	local done = 0
	local me = coroutine.running()
	local delays = { 5, 1, 3, 2, 4 }
	for i, d in ipairs(delays) do
		skynet.fork(function()
			got[i] = skynet.call(echo, "lua", "sleep_echo", d, "v" .. i)
			done = done + 1
			if done == #delays then
				skynet.wakeup(me)
			end
		end)
	end
	skynet.wait(me)
	for i = 1, #delays do
		t.eq(got[i], "v" .. i, "reply " .. i)
	end
end)

t.case("rawcall returns the packed reply", function()
	local msg, sz = skynet.rawcall(echo, "lua", skynet.pack("echo", 5, "five"))
	local a, b = skynet.unpack(msg, sz)
	t.eq(a, 5, "first")
	t.eq(b, "five", "second")
end)

t.case("context gives the request's session and source", function()
	local same_session, same_source, session, source = skynet.call(echo, "lua", "context")
	t.ok(same_session, "context session equals the dispatch session")
	t.ok(same_source, "context source equals the dispatch source")
	t.ok(session > 0, "session of a call is positive")
	t.eq(source, skynet.self(), "source")
end)

t.case("one reply per request: a second ret raises No session", function()
	t.eq(skynet.call(echo, "lua", "ret_twice"), "first", "reply")
	local r1, ok, err = skynet.call(echo, "lua", "last")
	t.eq(r1, true, "first ret result")
	t.eq(ok, false, "second ret must raise")
	t.ok(tostring(err):find("No session", 1, true), "error text: " .. tostring(err))
end)

t.case("ret for a send returns false", function()
	skynet.send(echo, "lua", "ret_on_send")
	local session, r = skynet.call(echo, "lua", "last")
	t.eq(session, 0, "session of a send")
	t.eq(r, false, "ret result")
end)

t.case("ret in a fork raises No session", function()
	t.eq(skynet.call(echo, "lua", "ret_in_fork"), "handler", "reply")
	local ok, err = skynet.call(echo, "lua", "last")
	t.eq(ok, false, "ret in fork must raise")
	t.ok(tostring(err):find("No session", 1, true), "error text: " .. tostring(err))
end)

t.case("ret from this service's own handler, called by itself", function()
	t.eq(skynet.call(skynet.self(), "lua", "self_echo", 7), 7, "self call")
end)

t.case("response closures answer the right callers, once", function()
	local got = {}
	local n = 0
	local me = coroutine.running()
	for i = 1, 3 do
		skynet.fork(function()
			got[i] = skynet.call(echo, "lua", "defer", "tag" .. i)
			n = n + 1
			if n == 3 then
				skynet.wakeup(me)
			end
		end)
	end
	t.quiesce()
	t.eq(skynet.call(echo, "lua", "held_count"), 3, "held closures")
	t.eq(n, 0, "nobody answered yet")
	local report = skynet.call(echo, "lua", "flush")
	if n < 3 then -- the replies may all have arrived during the flush call
		skynet.wait(me)
	end
	for i = 1, 3 do
		t.eq(got[i], "tag" .. i, "caller " .. i)
	end
	t.eq(#report, 3, "report entries")
	for _, r in ipairs(report) do
		t.eq(r.live_before, true, r.tag .. " TEST before answering")
		t.eq(r.sent, true, r.tag .. " resp(true, ...)")
		t.eq(r.live_after, false, r.tag .. " TEST after answering")
		t.eq(r.again_ok, false, r.tag .. " second resp must raise")
		t.ok(r.again_err:find("Can't response more than once", 1, true), r.tag .. ": " .. r.again_err)
	end
end)

t.case("response with a custom pack function", function()
	local done, a, b
	skynet.fork(function()
		a, b = skynet.call(echo, "lua", "defer_custom", "mine")
		done = true
	end)
	t.quiesce()
	skynet.call(echo, "lua", "flush")
	t.quiesce()
	t.ok(done, "caller answered")
	t.eq(a, "custom", "packed by the custom function")
	t.eq(b, "mine", "argument")
end)

t.case("resp(false) makes the caller's call fail", function()
	local ok, err
	skynet.fork(function()
		ok, err = pcall(skynet.call, echo, "lua", "defer", "failing")
	end)
	t.quiesce()
	t.eq(skynet.call(echo, "lua", "fail_all"), 1, "closures failed")
	t.quiesce()
	t.eq(ok, false, "call must raise")
	t.ok(tostring(err):find("call failed", 1, true), "error text: " .. tostring(err))
end)

t.case("response to a send is a harmless no-op", function()
	skynet.send(echo, "lua", "defer", "sent")
	t.eq(skynet.call(echo, "lua", "held_count"), 1, "closure kept")
	local report = skynet.call(echo, "lua", "flush")
	t.eq(#report, 1, "report")
end)

t.case("response to a requester that died returns false", function()
	-- A middle service calls echo (which keeps the reply), then dies.
	local middle = skynet.newservice("svc_echo")
	skynet.fork(function()
		pcall(skynet.call, middle, "lua", "call", echo, "defer", "orphan")
	end)
	t.quiesce()
	t.eq(skynet.call(echo, "lua", "held_count"), 1, "held closure")
	pcall(skynet.call, middle, "lua", "exit")
	t.quiesce()
	t.eq(skynet.call(echo, "lua", "answer_one", "late"), false, "resp to a dead requester")
end)

t.case("sends and calls from one source stay ordered", function()
	skynet.send(echo, "lua", "record", "a")
	t.eq(skynet.call(echo, "lua", "echo", "b"), "b", "call")
	skynet.send(echo, "lua", "record", "c")
	skynet.send(echo, "lua", "record", "d")
	local log = skynet.call(echo, "lua", "get_log")
	t.eq(table.concat(log, ","), "a,c,d", "recorded sends")
end)

-- Seconds for `total` calls to echo made by n coroutines at once (n calls
-- in flight all the time).
local function calls_in_flight(n, total)
	local t0 = skynet.hpc()
	t.spawn(n, function()
		for _ = 1, total // n do
			skynet.call(echo, "lua", "echo")
		end
	end)()
	return (skynet.hpc() - t0) / 1e9
end

-- With exactly 2048 calls in flight (2^k live sessions), each new session
-- used to rebuild the session tables (kernel/state.c): 15-28x slower calls.
-- A ratio of two runs, not a time: both pay the same machine.
t.case("2048 calls in flight cost no more per call than 2000", function()
	calls_in_flight(2000, 20000) -- warm up: the tables and the coroutine pool grow
	local base = calls_in_flight(2000, 40000)
	local cliff = calls_in_flight(2048, 40960)
	t.ok(cliff < base * 4, string.format("2048 in flight took %.3f s, 2000 took %.3f s", cliff, base))
end)

t.start({
	self_echo = function(_, _, v)
		skynet.retpack(v)
	end,
}, function()
	echo = skynet.newservice("svc_echo")
end)
