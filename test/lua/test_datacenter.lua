-- skynet.datacenter and datacenterd: get/set results (the previous value,
-- nothing for an empty slot), intermediate tables, copies, the errors a
-- caller sees, the wait/wake rules (exact path, deeper set fails, crossing
-- waits fail), the wake-up of waiters filled by a set of a whole table,
-- waiters and setters in other services, a waiter that exits, and the
-- pre-1.0 name.
local skynet = require "skynet"
local datacenter = require "skynet.datacenter"
local t = require "testlib"

-- Starts datacenter.wait(...) in a fork; returns a table that gets
-- { ok, value } once the wait returns or fails.
local function wait_async(...)
	local box = {}
	local args = table.pack(...)
	skynet.fork(function()
		local ok, v = pcall(datacenter.wait, table.unpack(args, 1, args.n))
		box.done = true
		box.ok = ok
		box.value = v
	end)
	t.quiesce()
	return box
end

local function pending(box, what)
	t.ok(not box.done, what .. " is still waiting")
end

local function woken(box, value, what)
	t.ok(box.done, what .. " returned")
	t.eq(box.ok, true, what .. " succeeded (" .. tostring(box.value) .. ")")
	t.eq(box.value, value, what .. " value")
end

local function failed(box, what)
	t.ok(box.done, what .. " returned")
	t.eq(box.ok, false, what .. " failed")
	t.ok(tostring(box.value):find("call failed", 1, true), what .. " error: " .. tostring(box.value))
end

t.case("DATACENTER is a global name of this standalone node", function()
	local h = skynet.call(".cslave", "lua", "QUERYNAME", "DATACENTER")
	t.eq(math.type(h), "integer", "handle of DATACENTER")
	local found = false
	for _, desc in pairs(skynet.call(".launcher", "lua", "LIST")) do
		if desc:find("datacenterd", 1, true) then
			found = true
		end
	end
	t.ok(found, "datacenterd in the launcher's list")
end)

t.case("set returns the previous value, nothing for an empty slot", function()
	t.eq(select("#", datacenter.set("a", 1)), 0, "first set returns nothing")
	t.eq(datacenter.get("a"), 1, "get")
	local n = select("#", datacenter.set("a", 2))
	t.eq(n, 1, "overwrite returns one value")
	local old = datacenter.set("a", 3)
	t.eq(old, 2, "previous value")
	t.eq(datacenter.set("a", false), 3, "false stored")
	t.eq(datacenter.get("a"), false, "false is a value")
	t.eq(datacenter.set("a", nil), false, "delete returns the previous value")
	t.eq(datacenter.get("a"), nil, "deleted")
	t.eq(select("#", datacenter.set("a", nil)), 1, "delete of an empty slot")
	t.eq(datacenter.set("a", nil), nil, "delete of an empty slot returns nil")
	datacenter.set("one", "x")
	t.eq(datacenter.set("one"), "x", "set with only a key deletes")
	t.eq(datacenter.get("one"), nil, "deleted by set(k)")
end)

t.case("set creates intermediate tables, get walks them", function()
	datacenter.set("p", "q", "r", 42)
	t.same(datacenter.get("p"), { q = { r = 42 } }, "tree")
	t.eq(datacenter.get("p", "q", "r"), 42, "leaf")
	t.eq(datacenter.get("p", "missing", "r"), nil, "missing middle key")
	t.eq(datacenter.get("nothing", "at", "all"), nil, "missing first key")
	datacenter.set("p", "q", "s", true)
	t.same(datacenter.get("p", "q"), { r = 42, s = true }, "sibling kept")
	datacenter.set(1, 2.5, "mixed keys")
	t.eq(datacenter.get(1, 2.5), "mixed keys", "number keys")
	t.eq(datacenter.set("gone", "below", nil), nil, "delete under a missing path")
	t.eq(datacenter.get("gone"), nil, "a delete creates no table")
	local all = datacenter.get()
	t.eq(all.p.q.r, 42, "get() is the whole tree")
	t.eq(datacenter.wait().p.q.r, 42, "wait() returns the whole tree at once")
end)

t.case("values are copies both ways", function()
	local v = { list = { 1, 2, 3 }, name = "n" }
	datacenter.set("copy", v)
	v.name = "changed"
	local got = datacenter.get("copy")
	t.eq(got.name, "n", "a later change of the caller's table is not seen")
	got.list[1] = 99
	t.eq(datacenter.get("copy", "list", 1), 1, "a change of a read copy is not stored")
	t.ok(datacenter.get("copy") ~= datacenter.get("copy"), "each get is a fresh table")
end)

t.case("bad paths give call failed", function()
	datacenter.set("num", 5)
	datacenter.set("str", "text")
	t.raises("call failed", datacenter.get, "num", "x")
	t.raises("call failed", datacenter.set, "num", "x", 1)
	t.raises("call failed", datacenter.set, "str", "x", 1)
	t.raises("call failed", datacenter.set, "num", "x", "y", 1)
	t.eq(datacenter.get("num"), 5, "a failed set changes nothing")
	-- a string indexes the string library: a function cannot be packed
	t.raises("call failed", datacenter.get, "str", "len")
	t.eq(datacenter.get("str", "no_such_function"), nil, "other string keys read nil")
	t.raises("call failed", datacenter.set)
	t.raises("call failed", datacenter.set, "k", nil, "v")
	t.eq(datacenter.get("k"), nil, "a nil key creates nothing")
	t.raises("call failed", datacenter.set, 0 / 0, "v")
	t.raises("call failed", skynet.call, "DATACENTER", "lua", "NOPE")
	t.eq(datacenter.get("num"), 5, "datacenterd still serves")
end)

t.case("wait returns at once when the value exists", function()
	datacenter.set("ready", { 1, 2 })
	t.same(datacenter.wait("ready"), { 1, 2 }, "table")
	datacenter.set("f", false)
	t.eq(datacenter.wait("f"), false, "false is there")
	datacenter.set("deep", "a", "b", "leaf")
	t.eq(datacenter.wait("deep", "a", "b"), "leaf", "deep")
	t.eq(datacenter.wait("deep", "a", "b", nil), "leaf", "a trailing nil key ends the path")
end)

t.case("a set of the exact path wakes every waiter", function()
	local w1 = wait_async("later")
	local w2 = wait_async("later")
	local w3 = wait_async("x", "y", "z")
	pending(w1, "wait 1")
	pending(w3, "deep wait")
	t.eq(select("#", datacenter.set("later", "v")), 0, "set of the empty slot")
	t.quiesce()
	woken(w1, "v", "wait 1")
	woken(w2, "v", "wait 2")
	pending(w3, "deep wait")
	datacenter.set("x", "y", "other", 1)
	t.quiesce()
	pending(w3, "deep wait after a sibling set")
	datacenter.set("x", "y", "z", false)
	t.quiesce()
	woken(w3, false, "deep wait")
	local w4 = wait_async("tbl")
	datacenter.set("tbl", { k = "v" })
	t.quiesce()
	t.ok(w4.done and w4.ok, "wait on a table slot returned")
	t.same(w4.value, { k = "v" }, "woken with the table")
end)

t.case("a delete wakes nobody, the later set does", function()
	local w = wait_async("del")
	datacenter.set("del", nil)
	t.quiesce()
	pending(w, "wait after a delete")
	datacenter.set("del", 7)
	t.quiesce()
	woken(w, 7, "wait")
end)

t.case("a set deeper than a waited path fails its waiters", function()
	local w1 = wait_async("q")
	local w2 = wait_async("q")
	datacenter.set("q", "sub", 1)
	t.quiesce()
	failed(w1, "wait 1")
	failed(w2, "wait 2")
	t.same(datacenter.get("q"), { sub = 1 }, "the set was stored")
	t.same(datacenter.wait("q"), { sub = 1 }, "a new wait returns at once")
end)

t.case("a wait crossing a pending wait, or ending on a branch, fails", function()
	local wq = wait_async("cq")
	t.raises("call failed", datacenter.wait, "cq", "x")
	local wb = wait_async("br", "x")
	t.raises("call failed", datacenter.wait, "br")
	pending(wq, "the first wait")
	pending(wb, "the branch wait")
	datacenter.set("cq", 1)
	datacenter.set("br", "x", 2)
	t.quiesce()
	woken(wq, 1, "queue wait")
	woken(wb, 2, "branch wait")
	-- the branch is gone with its last waiter: waiting on it is fine now
	datacenter.set("br", nil)
	local again = wait_async("br")
	pending(again, "wait on the former branch")
	datacenter.set("br", "back")
	t.quiesce()
	woken(again, "back", "wait on the former branch")
end)

t.case("a set of a whole table wakes the waiters it fills", function()
	local wx = wait_async("whole", "x")
	local wyz = wait_async("whole", "y", "z")
	local wmiss = wait_async("whole", "w")
	local wdeep = wait_async("whole", "n", "m")
	t.eq(select("#", datacenter.set("whole", { x = 1, y = { z = { 2 } }, n = 5 })), 0,
		"set of the table")
	t.quiesce()
	woken(wx, 1, "wait whole.x")
	t.ok(wyz.done and wyz.ok, "wait whole.y.z returned")
	t.same(wyz.value, { 2 }, "wait whole.y.z value")
	pending(wmiss, "wait on a key the table lacks")
	pending(wdeep, "wait through a non-table value")
	datacenter.set("whole", "w", "late")
	t.quiesce()
	woken(wmiss, "late", "wait whole.w")
	-- overwriting a table above waiters: they are filled too
	datacenter.set("ov", {})
	local wo = wait_async("ov", "a", "b")
	t.same(datacenter.set("ov", { a = { b = "filled" } }), {}, "set returns the old table")
	t.quiesce()
	woken(wo, "filled", "wait ov.a.b")
	datacenter.set("whole", "n", nil)
	datacenter.set("whole", "n", "m", 3)
	t.quiesce()
	woken(wdeep, 3, "wait whole.n.m")
end)

t.case("waiters and setters in other services", function()
	local other = skynet.newservice "svc_datacenter"
	local self = skynet.self()
	skynet.send(other, "lua", "wait", self, "remote", "svc", "key")
	t.quiesce()
	t.eq(#t.marks, 0, "the remote waiter blocks")
	datacenter.set("svc", "key", "hello")
	t.ok(t.wait_marks(1), "the remote waiter returned")
	t.same(t.marks[1], { tag = "remote", ok = true, value = "hello" }, "remote wait result")
	local w = wait_async("from", "other")
	local r = skynet.call(other, "lua", "set", "from", "other", { 1 })
	t.eq(r.n, 0, "remote set result count")
	t.quiesce()
	t.ok(w.done and w.ok, "local waiter woken by a remote set")
	t.same(w.value, { 1 }, "value from the other service")
	t.same(skynet.call(other, "lua", "get", "svc"), { key = "hello" }, "remote get")
	skynet.send(other, "lua", "wait", self, "remote fail", "rf")
	t.quiesce()
	datacenter.set("rf", "deeper", 1)
	t.ok(t.wait_marks(2), "the remote waiter returned")
	t.eq(t.marks[2].ok, false, "remote waiter failed")
	t.ok(t.marks[2].value:find("call failed", 1, true), "remote error text")
	skynet.kill(other)
end)

t.case("a waiter that exits leaves datacenterd working", function()
	local other = skynet.newservice "svc_datacenter"
	skynet.send(other, "lua", "wait", skynet.self(), "dead", "exitwait")
	t.quiesce()
	skynet.kill(other)
	t.quiesce()
	local w = wait_async("exitwait")
	t.eq(select("#", datacenter.set("exitwait", "v")), 0, "the set answers a dead waiter")
	t.quiesce()
	woken(w, "v", "the live waiter")
	t.ok(not t.has_mark("dead"), "the dead waiter ran no more")
	t.eq(datacenter.get("exitwait"), "v", "datacenterd still serves")
end)

t.case("the pre-1.0 name is the same module", function()
	local saved = package.path
	package.path = "./lualib/compat10/?.lua;" .. saved
	local ok, mod = pcall(require, "datacenter")
	package.path = saved
	t.ok(ok, "require 'datacenter': " .. tostring(mod))
	t.ok(mod == datacenter, "same table as skynet.datacenter")
	t.ok(require "compat10.datacenter" == datacenter, "compat10.datacenter")
end)

t.start()
