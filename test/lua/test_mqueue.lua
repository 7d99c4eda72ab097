-- skynet.mqueue: call results and error text, serial dispatch in arrival
-- order while the handler blocks, send (errors and values logged, dispatch
-- goes on), size, messages before register, register once, no "forgot
-- response" noise, a caller that exits, a server that exits with calls
-- queued, a call to a service without mqueue, and the pre-1.0 name.
local skynet = require "skynet"
local mqueue = require "skynet.mqueue"
local t = require "testlib"

-- Runs f(...) in a fork; returns a box that gets the pcall results in .r.
local function async(f, ...)
	local box = {}
	local args = table.pack(...)
	skynet.fork(function()
		box.r = table.pack(pcall(f, table.unpack(args, 1, args.n)))
		box.at = skynet.now()
	end)
	skynet.yield() -- the fork sends its request before the caller goes on
	return box
end

local function server(...)
	return skynet.newservice("svc_mqueue", ...)
end

t.case("call returns the handler's results", function()
	local s = server()
	t.eq(mqueue.call(s, "fast", "x"), "x", "one result")
	local r = table.pack(mqueue.call(s, "multi"))
	t.eq(r.n, 3, "result count with a nil inside")
	t.eq(r[1], 1, "first")
	t.eq(r[2], nil, "second")
	t.eq(r[3], 3, "third")
	t.eq(skynet.call(s, "lua", "forgot"), 0, "no forgot-response log")
	skynet.kill(s)
end)

t.case("the error text travels to the caller", function()
	local s = server()
	local err = t.raises("svc_mqueue.lua", mqueue.call, s, "error", "boom here")
	t.ok(err:find("svc_mqueue.lua:%d+: boom here$"), "original message: " .. err)
	local function in_lua()
		local r = mqueue.call(s, "error", "from lua")
		return r
	end
	local err2 = t.raises("from lua", in_lua)
	t.ok(err2:find("^[^ ]*test_mqueue.lua:%d+: [^ ]*svc_mqueue.lua:%d+: from lua$"),
		"prefixed with the caller's position: " .. err2)
	local ok, e = pcall(mqueue.call, s, "error_table")
	t.eq(ok, false, "error object")
	t.eq(type(e), "table", "a table error stays a table")
	t.eq(e.code, 7, "its content")
	t.raises("mqueue: can't pack the results", mqueue.call, s, "func")
	t.raises("unknown queue command nope", mqueue.call, s, "nope")
	t.eq(mqueue.call(s, "fast", "after"), "after", "dispatch goes on")
	t.eq(skynet.call(s, "lua", "forgot"), 0, "no forgot-response log")
	skynet.kill(s)
end)

t.case("one message at a time, in arrival order, even when f blocks", function()
	local s = server()
	local t0 = skynet.now()
	local slow = async(mqueue.call, s, "slow", "A", 50)
	local fast = async(mqueue.call, s, "fast", "B")
	local slow2 = async(mqueue.call, s, "slow", "C", 10)
	skynet.sleep(100)
	t.eq(slow.r[2], "A", "slow result")
	t.eq(fast.r[2], "B", "fast result")
	t.eq(slow2.r[2], "C", "second slow result")
	t.ok(fast.at - t0 >= 50, "the fast request waited for the slow one")
	t.ok(slow2.at - t0 >= 60, "the third waited for both")
	local log = skynet.call(s, "lua", "log")
	t.eq(table.concat(log, ","), "A start,A end,B,C start,C end", "handler order")
	skynet.kill(s)
end)

t.case("send: no reply, errors and values logged, dispatch goes on", function()
	local s = server()
	mqueue.send(s, "note", "s1")
	mqueue.send(s, "error", "send failure")
	mqueue.send(s, "note", "s2")
	mqueue.send(s, "multi")
	t.eq(mqueue.call(s, "fast", "c3"), "c3", "a call after the sends")
	t.eq(table.concat(skynet.call(s, "lua", "log"), ","), "s1,s2,c3", "order")
	local logged = skynet.call(s, "lua", "logged")
	t.eq(#logged, 2, "two log lines: " .. table.concat(logged, " | "))
	t.ok(logged[1]:find("mqueue: a message sent by " .. skynet.address(skynet.self())
		.. " raised: ", 1, true), "raise logged: " .. tostring(logged[1]))
	t.ok(logged[1]:find("send failure", 1, true), "with the error text")
	t.ok(logged[2]:find("returned a value (dropped)", 1, true), "value logged: " .. logged[2])
	t.eq(skynet.call(s, "lua", "forgot"), 0, "no forgot-response log")
	skynet.kill(s)
end)

t.case("size counts queued messages not yet started", function()
	local s = server()
	t.eq(mqueue.size(), 0, "here: nothing queued")
	t.eq(skynet.call(s, "lua", "size"), 0, "idle server")
	local slow = async(mqueue.call, s, "slow", "S", 20)
	t.quiesce()
	mqueue.send(s, "note", "q1")
	mqueue.send(s, "note", "q2")
	t.quiesce()
	t.eq(skynet.call(s, "lua", "size"), 2, "two waiting behind the running one")
	t.eq(mqueue.call(s, "size"), 0, "nothing behind a call once it runs")
	t.ok(slow.r and slow.r[2] == "S", "the slow call returned")
	skynet.kill(s)
end)

t.case("messages before register wait for it; register once", function()
	local s = server "late"
	mqueue.send(s, "note", "early send")
	local early = async(mqueue.call, s, "fast", "early call")
	t.quiesce()
	t.eq(skynet.call(s, "lua", "size"), 2, "queued before register")
	t.eq(early.r, nil, "the early call blocks")
	skynet.call(s, "lua", "register")
	t.quiesce()
	t.eq(early.r[1], true, "the early call returned")
	t.eq(early.r[2], "early call", "its result")
	t.eq(table.concat(skynet.call(s, "lua", "log"), ","), "early send,early call", "order")
	local ok, err, ok2, err2 = skynet.call(s, "lua", "register_again")
	t.eq(ok, false, "a second register fails")
	t.ok(tostring(err):find("assertion failed!", 1, true), "assertion text: " .. tostring(err))
	t.eq(ok2, false, "register with a non-function fails too")
	t.ok(tostring(err2):find("assertion failed!", 1, true), "the once rule comes first")
	t.eq(skynet.call(s, "lua", "forgot"), 0, "no forgot-response log")
	skynet.kill(s)
	local fresh = server "late"
	local _, _, ok3 = skynet.call(fresh, "lua", "register_again")
	t.eq(ok3, false, "non-function refused after a good register")
	skynet.kill(fresh)
end)

t.case("a caller that exits before its turn", function()
	local s = server()
	local client = server()
	local slow = async(mqueue.call, s, "slow", "busy", 20)
	skynet.send(client, "lua", "mcall", skynet.self(), s, "fast", "from dead caller")
	t.quiesce()
	skynet.kill(client)
	skynet.sleep(30)
	t.eq(slow.r[2], "busy", "the running call finished")
	t.eq(table.concat(skynet.call(s, "lua", "log"), ","),
		"busy start,busy end,from dead caller", "the dead caller's message still ran")
	t.eq(#t.marks, 0, "nothing reported by the dead caller")
	t.eq(mqueue.call(s, "fast", "alive"), "alive", "the server goes on")
	skynet.kill(s)
end)

t.case("a server that exits with calls queued", function()
	local s = server()
	local exiting = async(mqueue.call, s, "exit_after", 10)
	local queued = async(mqueue.call, s, "fast", "never")
	skynet.sleep(20)
	t.eq(exiting.r[1], false, "the call that exits fails")
	t.ok(tostring(exiting.r[2]):find("call failed", 1, true), "call failed")
	t.eq(queued.r[1], false, "a queued call fails")
	t.ok(tostring(queued.r[2]):find("call failed", 1, true), "call failed")
end)

t.case("a call to a service without mqueue fails", function()
	local echo = skynet.newservice "svc_echo"
	t.raises("call failed", mqueue.call, echo, "ping")
	skynet.kill(echo)
end)

t.case("the pre-1.0 name is the same module", function()
	local saved = package.path
	package.path = "./lualib/compat10/?.lua;" .. saved
	local ok, mod = pcall(require, "mqueue")
	package.path = saved
	t.ok(ok, "require 'mqueue': " .. tostring(mod))
	t.ok(mod == mqueue, "same table as skynet.mqueue")
end)

t.start()
