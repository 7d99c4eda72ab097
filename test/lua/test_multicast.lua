-- skynet.multicast, multicastd and skynet.multicast.core: channel ids,
-- delivery (source, arguments, before publish returns, own coroutine per
-- message, self-delivery), ordering across publishers, two objects on one
-- subscription, unsubscribe/exit/kill with messages queued (their packages
-- must be released: ASan's leak check runs at the end of the node), a
-- handler blocked when its service dies, publisher exit during publish,
-- delete, handler errors, remote ids, every error text, the compat10 name.
local skynet = require "skynet"
local t = require "testlib"
local mc = require "skynet.multicast"
local core = require "skynet.multicast.core"
require "skynet.manager"

local BOX <const> = string.packsize "T"

local ready_token = {}
local ready = false

local function newsub()
	return skynet.newservice "svc_multicast_sub"
end

local function sublog(sub)
	return skynet.call(sub, "lua", "log")
end

-- A call that fails: "call failed", or (service gone already) "call to invalid address".
local function call_fails(f, ...)
	local ok, err = pcall(f, ...)
	t.ok(not ok, "the call succeeded")
	err = tostring(err)
	t.ok(err:find("call failed", 1, true) or err:find("call to invalid address", 1, true), err)
end

t.case("ids start at the harbor id and go up by 256; tostring", function()
	local a, b, c = mc.new(), mc.new(), mc.new()
	t.eq(a.channel, 0, "first id")
	t.eq(b.channel, 256, "second id")
	t.eq(c.channel, 512, "third id")
	t.eq(tostring(a), "[Multicast:0]", "tostring a")
	t.eq(tostring(c), "[Multicast:200]", "tostring c")
	local got
	local z = mc.new {
		channel = a.channel,
		dispatch = function(_, _, v) -- channel 0 is a channel like any other
			got = v
		end,
	}
	z:subscribe()
	a:publish "zero"
	t.eq(got, "zero", "delivered on channel 0")
	z:unsubscribe()
	b:delete()
	t.eq(mc.new().channel, 768, "ids go on after a delete")
	local joined = mc.new { channel = 512 }
	t.eq(joined.channel, 512, "joining an id allocates nothing")
	t.eq(mc.new().channel, 1024, "next id")
	a:delete()
	c:delete()
end)

t.case("core: nextid", function()
	t.eq(core.nextid(0), 256, "nextid 0")
	t.eq(core.nextid(5), 261, "nextid keeps the node byte")
	t.eq(core.nextid(0x7fffff00), 0, "wraps by clearing bit 31")
	t.eq(core.nextid(0x7fffff05), 5, "wraps keeping the node byte")
	t.eq(core.nextid(0x7fffffff), 0xff, "all bits")
end)

t.case("core: pack, unpack, bind, close, packremote, remote and their errors", function()
	local box, sz = core.pack(skynet.pack("hello", 42))
	t.eq(type(box), "userdata", "box")
	t.eq(sz, BOX, "box size")
	t.raises("Invalid multicast package size 7", core.unpack, box, 7)
	local pkg, msg, msz = core.unpack(box, sz)
	local s, n = skynet.unpack(msg, msz)
	t.eq(s, "hello", "payload 1")
	t.eq(n, 42, "payload 2")
	t.raises("Invalid multicast package reference -1", core.close, pkg) -- unbound
	-- a second box for the same package: packremote copies the pointer bytes
	local box2 = core.remote(core.packremote(skynet.tostring(box, sz)))
	t.eq(core.bind(box, 2), pkg, "bind returns the package")
	t.raises("Can't bind a multicast package more than once", core.bind, box2, 1)
	skynet.trash(box2, BOX)
	core.close(pkg)
	core.close(pkg) -- the last reference frees it (ASan checks)
	t.raises("Size should be 32bit integer", core.pack, skynet.pack "x", -1)
	t.raises("Size should be 32bit integer", core.pack, skynet.pack "x", 1 << 32)
	local buf, bsz = skynet.pack "x"
	t.raises("Size should be 32bit integer", core.packremote, buf, -1)
	skynet.trash(buf, bsz) -- packremote copies: the buffer stayed ours
	t.raises("userdata expected, got string", core.pack, "text", 4)
	local box3 = core.pack(skynet.pack "x")
	t.raises("Invalid multicast reference count 0", core.bind, box3, 0)
	core.close(core.bind(box3, 1))
	-- packremote of a string, taken apart again by remote
	local data, dsz = core.remote(core.packremote "abc")
	t.eq(skynet.tostring(data, dsz), "abc", "packremote/remote round trip")
	skynet.trash(data, dsz)
end)

t.case("Init first: new before the init functions ran", function()
	local early = skynet.newservice "svc_multicast_early"
	local ok, err = skynet.call(early, "lua")
	t.eq(ok, false, "new failed")
	t.ok(err:find("Init first", 1, true), "error text: " .. err)
	skynet.kill(early)
end)

t.case("another service gets (channel obj, publisher, ...) before publish returns", function()
	local ch = mc.new()
	local sub = newsub()
	skynet.call(sub, "lua", "join", ch.channel)
	ch:publish("a", 1, { x = true })
	local log = sublog(sub) -- no wait: handed over before the reply
	t.eq(#log, 1, "one message")
	t.eq(log[1][1], ch.channel, "channel object of the subscriber")
	t.eq(log[1][2], skynet.self(), "publisher")
	t.eq(log[1].n, 5, "argument count")
	t.eq(log[1][3], "a", "arg 1")
	t.eq(log[1][4], 1, "arg 2")
	t.eq(log[1][5].x, true, "arg 3")
	skynet.kill(sub)
	ch:delete()
end)

t.case("order: every subscriber sees one order, each publisher's in sequence", function()
	local ch = mc.new()
	local s1, s2 = newsub(), newsub()
	skynet.call(s1, "lua", "join", ch.channel)
	skynet.call(s2, "lua", "join", ch.channel)
	local p1, p2 = skynet.newservice "svc_multicast_pub", skynet.newservice "svc_multicast_pub"
	local N <const> = 30
	local done = 0
	local token = {}
	for _, p in ipairs { { p1, "p1" }, { p2, "p2" } } do
		skynet.fork(function()
			skynet.call(p[1], "lua", "burst", ch.channel, p[2], N)
			done = done + 1
			if done == 2 then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
	local l1, l2 = sublog(s1), sublog(s2)
	t.eq(#l1, 2 * N, "subscriber 1 count")
	t.eq(#l2, 2 * N, "subscriber 2 count")
	local next_of = { p1 = 1, p2 = 1 }
	for i = 1, 2 * N do
		t.eq(l1[i][3], l2[i][3], "same publisher at " .. i)
		t.eq(l1[i][4], l2[i][4], "same message at " .. i)
		local tag = l1[i][3]
		t.eq(l1[i][4], next_of[tag], tag .. " in sequence")
		next_of[tag] = next_of[tag] + 1
		t.eq(l1[i][2], tag == "p1" and p1 or p2, "source is the publisher")
	end
	for _, s in ipairs { s1, s2, p1, p2 } do
		skynet.kill(s)
	end
	ch:delete()
end)

t.case("self-delivery, one coroutine per message", function()
	local got = {}
	local ch
	ch = mc.new {
		dispatch = function(obj, source, what)
			t.eq(obj, ch, "channel object")
			t.eq(source, skynet.self(), "source")
			got[#got + 1] = what
			if what == "slow" then
				skynet.sleep(10)
				got[#got + 1] = "slow done"
			end
		end,
	}
	ch:subscribe()
	ch:subscribe() -- a second call does nothing
	ch:publish "slow"
	ch:publish "fast"
	t.eq(table.concat(got, ","), "slow,fast", "the fast one ran while the slow one slept")
	skynet.sleep(20)
	t.eq(table.concat(got, ","), "slow,fast,slow done", "after the sleep")
	ch:unsubscribe()
	ch:publish "gone"
	t.eq(#got, 3, "nothing after unsubscribe")
	ch:delete()
end)

t.case("two objects, one subscription: last subscribe wins, either unsubscribe stops both", function()
	local got = {}
	local a = mc.new {
		dispatch = function(_, _, v)
			got[#got + 1] = "a" .. v
		end,
	}
	local b = mc.new {
		channel = a.channel,
		dispatch = function(_, _, v)
			got[#got + 1] = "b" .. v
		end,
	}
	a:subscribe()
	b:subscribe()
	a:publish "1"
	t.eq(table.concat(got, ","), "b1", "delivered once, to the last subscriber")
	a:unsubscribe()
	b:publish "2"
	t.quiesce()
	t.eq(table.concat(got, ","), "b1", "nothing after either unsubscribe")
	a:delete()
end)

t.case("unsubscribe drops the messages already queued", function()
	local ch = mc.new()
	local sub = newsub()
	-- its first message waits until 4 more deliveries and our log call are queued
	skynet.call(sub, "lua", "join", ch.channel, "unsub", 5)
	for i = 1, 5 do
		ch:publish(i)
	end
	local log = sublog(sub)
	t.eq(#log, 1, "only the first message ran")
	t.eq(log[1][3], 1, "the first")
	ch:publish(6)
	t.eq(#sublog(sub), 1, "unsubscribed for good")
	skynet.kill(sub)
	ch:delete()
end)

t.case("a subscriber that exits with messages queued: they are released", function()
	local ch = mc.new()
	local other = newsub()
	skynet.call(other, "lua", "join", ch.channel)
	local sub = newsub()
	skynet.call(sub, "lua", "join", ch.channel, "exit", 4)
	for i = 1, 4 do
		ch:publish(i)
	end
	call_fails(sublog, sub) -- queued behind 3 deliveries; all dropped at exit
	ch:publish(5)
	ch:publish(6)
	t.eq(#sublog(other), 6, "the other subscriber got everything")
	skynet.kill(other)
	ch:delete()
end)

t.case("a subscriber killed with messages queued: they are released", function()
	local ch = mc.new()
	local sub = newsub()
	skynet.call(sub, "lua", "join", ch.channel, "kill", 4, ".mc_victim")
	ready = false
	for i = 1, 5 do
		ch:publish(i)
	end
	if not ready then
		skynet.wait(ready_token)
	end
	skynet.kill(sub) -- its first message is still running, 4 are queued
	call_fails(sublog, sub)
	ch:publish(6)
	ch:delete()
end)

t.case("a handler blocked when its service is killed releases its package", function()
	local ch = mc.new()
	local sub = newsub()
	skynet.call(sub, "lua", "join", ch.channel, "block")
	ch:publish "held"
	t.eq(#sublog(sub), 1, "the handler started")
	skynet.kill(sub)
	call_fails(sublog, sub)
	ch:delete()
end)

t.case("a publisher that exits during publish: the fan-out completes", function()
	local ch = mc.new()
	local sub = newsub()
	skynet.call(sub, "lua", "join", ch.channel)
	local pub = skynet.newservice "svc_multicast_pub"
	call_fails(skynet.call, pub, "lua", "publish_exit", ch.channel)
	t.quiesce()
	local log = sublog(sub)
	t.eq(#log, 1, "delivered")
	t.eq(log[1][2], pub, "source is the dead publisher")
	t.eq(log[1][3], "last", "payload")
	skynet.kill(sub)
	ch:delete()
end)

t.case("a failing handler: error logged, later messages still delivered", function()
	local ch = mc.new()
	local sub = newsub()
	skynet.call(sub, "lua", "join", ch.channel, "error")
	ch:publish(1)
	ch:publish(2)
	local log = sublog(sub)
	t.eq(#log, 2, "both ran")
	skynet.kill(sub)
	ch:delete()
end)

t.case("delete: for everyone, channel nil, publish asserts", function()
	local ch = mc.new()
	local id = ch.channel
	local sub = newsub()
	skynet.call(sub, "lua", "join", id)
	ch:delete()
	t.eq(ch.channel, nil, "channel field")
	t.eq(tostring(ch), "[Multicast:deleted]", "tostring after delete")
	t.raises("assertion failed!", ch.publish, ch, "x")
	local again = mc.new { channel = id }
	again:publish "nobody" -- the channel is gone: the package is freed at once
	again:subscribe() -- a local id that does not exist: accepted, delivers nothing
	again:publish "still nobody"
	t.eq(#sublog(sub), 0, "the old subscriber got nothing")
	again:unsubscribe()
	skynet.kill(sub)
end)

t.case("an object dropped by its script unsubscribes when collected", function()
	local ch = mc.new()
	local sub = newsub()
	skynet.call(sub, "lua", "join", ch.channel)
	skynet.call(sub, "lua", "drop", ch.channel)
	ch:publish "after"
	t.eq(#sublog(sub), 0, "nothing delivered")
	skynet.kill(sub)
	ch:delete()
end)

t.case("a channel of another node: SUB and PUB fail, never hang", function()
	local far = mc.new { channel = 12345 }
	t.eq(tostring(far), "[Multicast:3039]", "tostring")
	call_fails(far.subscribe, far)
	call_fails(far.publish, far, "x") -- multicastd frees the package
	t.raises("channel must be an integer", mc.new, { channel = "1" })
end)

t.case("compat10 name", function()
	local saved = package.path
	package.path = "./lualib/compat10/?.lua;" .. saved
	local ok, m = pcall(require, "multicast")
	package.path = saved
	package.loaded.multicast = nil
	t.ok(ok, tostring(m))
	t.eq(m, mc, "same module")
end)

t.start {
	ready = function()
		ready = true
		skynet.wakeup(ready_token)
	end,
}
