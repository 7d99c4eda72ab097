-- skynet.sharedata: value forms, proxies (values, cached children, #, pairs
-- order, raw access, no shadowed keys, error texts, keys), pack through
-- __pairs, build errors, update seen by other services only after their
-- monitor answer, stale children, delete, deepcopy, flush, corelib, and the
-- lifetime of versions (released when readers switch or exit), counted with
-- the C store's live-version counter.
local skynet = require "skynet"
local t = require "testlib"
local sharedata = require "skynet.sharedata"
local corelib = require "skynet.sharedata.corelib"
local core = require "skynet.sharedata.core"

-- Live versions in the process, after collecting this service's garbage.
local function live()
	collectgarbage()
	return (core.stat())
end

local function reader()
	return skynet.newservice("svc_sharedata_reader")
end

local function helper()
	return skynet.uniqueservice "sharedatad"
end

local function handle_of(name)
	return skynet.call(helper(), "lua", "query", name)
end

t.case("module, corelib and compat names", function()
	for _, k in ipairs { "new", "update", "delete", "query", "deepcopy", "flush" } do
		t.eq(type(sharedata[k]), "function", "sharedata." .. k)
	end
	for _, k in ipairs { "box", "update", "flush", "copy", "next" } do
		t.eq(type(corelib[k]), "function", "corelib." .. k)
	end
	for _, k in ipairs { "new", "delete", "getref", "markdirty", "incref", "decref" } do
		t.eq(type(corelib.host[k]), "function", "corelib.host." .. k)
	end
	local saved = package.path
	package.path = "./lualib/compat10/?.lua;" .. saved
	local ok, compat = pcall(require, "sharedata")
	package.path = saved
	t.ok(ok, tostring(compat))
	t.eq(compat, sharedata, "compat10 sharedata")
end)

t.case("value forms: table, source globals, returned table, @file, nil", function()
	sharedata.new("sd.table", { a = 1, b = { c = "x" } })
	local p = sharedata.query("sd.table")
	t.eq(p.a, 1, "a")
	t.eq(p.b.c, "x", "b.c")
	sharedata.new("sd.globals", "x = 1 y = {2} local z = ... return nil", 7)
	t.same(sharedata.deepcopy("sd.globals"), { x = 1, y = { 2 } }, "globals assigned")
	sharedata.new("sd.ret", "return { v = ... }", 9)
	t.same(sharedata.deepcopy("sd.ret"), { v = 9 }, "returned table")
	sharedata.new("sd.reads", "n = #string.rep('a', 3) s = tostring(math.pi):sub(1, 4)")
	t.same(sharedata.deepcopy("sd.reads"), { n = 3, s = "3.14" }, "reads fall back to globals")
	sharedata.new("sd.file", "@./test/lua/sharedata_conf.lua", 4)
	t.same(sharedata.deepcopy("sd.file"), { level = 5, items = { "a", "b" } }, "@file")
	sharedata.new("sd.nil")
	t.same(sharedata.deepcopy("sd.nil"), {}, "nil is an empty table")
	t.eq(next(sharedata.deepcopy("sd.nil")), nil, "empty")
end)

t.case("new: existing name, bad type, bad source, unpackable value", function()
	sharedata.new("sd.once", {})
	t.raises("call failed", sharedata.new, "sd.once", {})
	t.raises("call failed", sharedata.new, "sd.bad", 42)
	t.raises("call failed", sharedata.new, "sd.bad", "x = = 1")
	t.raises("call failed", sharedata.new, "sd.bad", "error 'boom'")
	t.raises("call failed", sharedata.new, "sd.bad", "@./no/such/file.lua")
	t.raises("Unsupport type function to serialize", sharedata.new, "sd.bad", { f = print })
	t.raises("call failed", sharedata.query, "sd.bad")
end)

t.case("build errors: texts of the C core, call failed through the helper", function()
	local new = corelib.host.new
	t.raises("Invalid key 1.5", new, { [1.5] = 1 })
	t.raises("Invalid key type boolean", new, { [true] = 1 })
	t.raises("Invalid key type table", new, { [{}] = 1 })
	local h = new {}
	t.raises("Unsupport value type userdata", new, { a = h })
	t.raises("Unsupport value type function", new, { a = print })
	t.raises("Unsupport value type function", new, { b = { c = { function() end } } })
	t.raises("call failed", sharedata.new, "sd.badkey", { [1.5] = 1 })
	t.raises("call failed", sharedata.new, "sd.badkey", { [true] = 1 })
	t.raises("call failed", sharedata.new, "sd.badkey", { x = h })
	corelib.host.delete(h)
	t.raises("call failed", sharedata.new, "sd.badkey", "t = {} t[{}] = 1")
	t.raises("call failed", sharedata.query, "sd.badkey")
end)

t.case("a failed build leaves no version behind", function()
	local before = live()
	for i = 1, 20 do
		local bad = { a = { b = { "x", "y", i } } }
		bad.a.b[2] = { [0.5] = true }
		pcall(corelib.host.new, bad)
	end
	pcall(sharedata.new, "sd.leak", { 1, 2, { [2.5] = 1 } })
	t.eq(live(), before, "live versions")
end)

t.case("proxies: values by copy, cached children, #, pairs order, ipairs", function()
	local src = { 10, 20, 30, "forty", n = 1.5, s = "str", yes = true, no = false,
		sub = { 1, 2, { deep = "d" } }, [100] = "far", [-1] = "neg", [0] = "zero" }
	sharedata.new("sd.proxy", src)
	local p = sharedata.query("sd.proxy")
	t.eq(p[1], 10, "p[1]")
	t.eq(math.type(p[1]), "integer", "integer kept")
	t.eq(p.n, 1.5, "float")
	t.eq(math.type(p.n), "float", "float kept")
	t.eq(p.yes, true, "true")
	t.eq(p.no, false, "false")
	t.eq(p.missing, nil, "missing key")
	t.eq(p[100], "far", "far integer key")
	t.eq(p[-1], "neg", "negative key")
	t.eq(p[0], "zero", "zero key")
	t.eq(type(p.sub), "table", "child is a table")
	t.ok(p.sub == p.sub, "child cached")
	t.ok(p.sub[3] == p.sub[3], "grandchild cached")
	t.eq(p.sub[3].deep, "d", "deep")
	t.eq(#p, 4, "# of the root")
	t.eq(#p.sub, 3, "# of a child")
	local order = {}
	for k in pairs(p) do
		order[#order + 1] = k
	end
	t.eq(#order, 12, "pairs count")
	for i = 1, 4 do
		t.eq(order[i], i, "array part first, in order")
	end
	local seen = {}
	for k, v in pairs(p) do
		seen[k] = type(v) == "table" and "table" or v
	end
	t.eq(seen.sub, "table", "pairs gives child proxies")
	t.eq(seen[-1], "neg", "pairs reaches the hash part")
	local n = 0
	for i, v in ipairs(p) do
		n = n + 1
		t.eq(v, src[i], "ipairs value")
	end
	t.eq(n, 4, "ipairs count")
	t.eq(sharedata.query("sd.proxy"), p, "query again gives the same proxy")
end)

t.case("# is the build-time border, holes are skipped by pairs", function()
	local src = { 1, 2, 3 }
	src[5] = 5
	src[4] = nil
	local want = rawlen(src)
	sharedata.new("sd.holes", src)
	local p = sharedata.query("sd.holes")
	t.eq(#p, want, "border")
	local keys = {}
	for k in pairs(p) do
		keys[#keys + 1] = k
	end
	table.sort(keys)
	t.eq(table.concat(keys, ","), "1,2,3,5", "keys")
end)

t.case("raw access sees nothing; bookkeeping never shadows data keys", function()
	sharedata.new("sd.raw", { __obj = 1, __gcobj = 2, __parent = 3, __key = 4, __cache = 5,
		root = 6, v = 7, n = 8, gen = 9, parent = 10, key = 11, cache = 12, dead = 13, 1 })
	local p = sharedata.query("sd.raw")
	t.eq(next(p), nil, "next sees no field")
	t.eq(rawget(p, "__key"), nil, "rawget")
	t.eq(rawlen(p), 0, "rawlen")
	t.eq(p.__obj, 1, "__obj")
	t.eq(p.__gcobj, 2, "__gcobj")
	t.eq(p.__parent, 3, "__parent")
	t.eq(p.__key, 4, "__key")
	t.eq(p.__cache, 5, "__cache")
	local i = 6
	for _, k in ipairs { "root", "v", "n", "gen", "parent", "key", "cache", "dead" } do
		t.eq(p[k], i, k)
		i = i + 1
	end
end)

t.case("assignment errors name the proxy's path", function()
	sharedata.new("sd.ro", { b = { n = { 1 } }, [3] = { 4 } })
	local p = sharedata.query("sd.ro")
	t.raises("Error newindex, the key []", function()
		p.x = 1
	end)
	t.raises("Error newindex, the key [.b.n]", function()
		p.b.n.x = 1
	end)
	t.raises("Error newindex, the key [.3]", function()
		p[3][1] = 2
	end)
	t.raises("Error newindex, the key [.b]", function()
		p.b.n = nil
	end)
	t.eq(p.b.n[1], 1, "unchanged")
end)

t.case("keys: invalid float, integral float as integer, boolean, nil", function()
	sharedata.new("sd.keys", { "one", "two", [3] = "three" })
	local p = sharedata.query("sd.keys")
	t.raises("Invalid key 1.5", function()
		return p[1.5]
	end)
	t.eq(p[1.0], "one", "integral float key")
	t.eq(p[2.0], "two", "integral float key 2")
	t.raises("bad argument", function()
		return p[true]
	end)
	t.raises("bad argument", function()
		return p[{}]
	end)
	t.eq(p[nil], nil, "nil key")
	t.raises("Invalid key inf", function()
		return p[math.huge]
	end)
end)

t.case("skynet.pack of a proxy packs the data", function()
	local src = { 1, 2, { x = "y" }, k = { v = true } }
	sharedata.new("sd.pack", src)
	local p = sharedata.query("sd.pack")
	local msg, sz = skynet.pack(p)
	local back = skynet.unpack(msg, sz)
	skynet.trash(msg, sz)
	t.same(back, src, "round trip")
	local r = reader()
	skynet.call(r, "lua", "query", "sd.pack")
	t.same(skynet.call(r, "lua", "plain", "sd.pack"), src, "sent from another service")
	skynet.send(r, "lua", "exit")
end)

t.case("update: at once in the updater, after the monitor answer elsewhere", function()
	sharedata.new("sd.upd", { x = 1, keep = { y = 1 } })
	local p = sharedata.query("sd.upd")
	local keep = p.keep
	local r = reader()
	skynet.call(r, "lua", "query", "sd.upd")
	t.eq(skynet.call(r, "lua", "get", "sd.upd", "x"), 1, "reader before")
	sharedata.update("sd.upd", { x = 2, keep = { y = 2 } })
	t.eq(p.x, 2, "updater sees it when update returns")
	t.eq(keep.y, 2, "cached child follows")
	t.ok(p.keep == keep, "same child proxy")
	t.eq(skynet.call(r, "lua", "get", "sd.upd", "x"), 2, "reader after its monitor answer")
	t.eq(skynet.call(r, "lua", "get", "sd.upd", "keep", "y"), 2, "reader child")
	sharedata.update("sd.upd", "x = 3 keep = { y = 3 }")
	t.eq(p.x + keep.y, 6, "second update")
	sharedata.update("sd.new.by.update", { z = 1 })
	t.eq(sharedata.query("sd.new.by.update").z, 1, "update creates an unknown name")
	skynet.send(r, "lua", "exit")
end)

local waiting_update

t.case("another service sees no change before handling its monitor answer", function()
	sharedata.new("sd.late", { x = "old" })
	local r = reader()
	skynet.call(r, "lua", "query", "sd.late")
	waiting_update = function()
		sharedata.update("sd.late", { x = "new" })
	end
	local h = handle_of("sd.late")
	local before, during = skynet.call(r, "lua", "read_across_update", "sd.late", "x", h,
		skynet.self())
	t.eq(before, "old", "before")
	t.eq(during, "old", "after the C version changed, before the monitor answer")
	t.quiesce() -- the reader's monitor coroutine handles the answer
	t.eq(skynet.call(r, "lua", "get", "sd.late", "x"), "new", "after the answer")
	skynet.send(r, "lua", "exit")
end)

t.case("stale children raise, values read earlier stay", function()
	sharedata.new("sd.stale", { b = { n = { v = 1 } }, c = { 1 } })
	local p = sharedata.query("sd.stale")
	local b, n = p.b, p.b.n
	local v = n.v
	local r = reader()
	skynet.call(r, "lua", "query", "sd.stale")
	skynet.call(r, "lua", "keep", "b", "sd.stale", "b")
	skynet.call(r, "lua", "keep", "n", "sd.stale", "b", "n")
	sharedata.update("sd.stale", { b = 5, c = { 2 } })
	t.eq(v, 1, "old value kept")
	t.raises("The key [.b] doesn't exist after update", function()
		return b.x
	end)
	t.raises("The key [.b.n] doesn't exist after update", function()
		return n.v
	end)
	t.raises("The key [.b.n] doesn't exist after update", function()
		return #n
	end)
	t.raises("The key [.b] doesn't exist after update", pairs(b), b)
	t.eq(p.b, 5, "the root shows the new value")
	local ok, err = skynet.call(r, "lua", "try", "b", "x")
	t.ok(not ok and err:find("The key [.b] doesn't exist after update", 1, true), err)
	ok, err = skynet.call(r, "lua", "try", "n", "v")
	t.ok(not ok and err:find("The key [.b.n] doesn't exist after update", 1, true), err)
	sharedata.update("sd.stale", { b = { n = { v = 9 } } })
	t.eq(p.b.n.v, 9, "a table again at the key gives a fresh child")
	t.raises("doesn't exist after update", function()
		return n.v
	end)
	skynet.send(r, "lua", "exit")
end)

t.case("pairs that yields across an update continues in the new version", function()
	sharedata.new("sd.iter", { "a", "b", "c" })
	local r = reader()
	skynet.call(r, "lua", "query", "sd.iter")
	local seen
	skynet.fork(function()
		seen = skynet.call(r, "lua", "pairs_with_sleep", "sd.iter", 10)
	end)
	t.quiesce()
	sharedata.update("sd.iter", { "A", "B", "C", "D" })
	skynet.sleep(20)
	t.eq(table.concat(seen, " "), "1=a 2=B 3=C 4=D", "keys after the switch")
	skynet.send(r, "lua", "exit")
end)

t.case("delete: readers keep the old data, new queries fail", function()
	sharedata.new("sd.del", { x = 1, sub = { 2 } })
	local p = sharedata.query("sd.del")
	local r = reader()
	skynet.call(r, "lua", "query", "sd.del")
	sharedata.delete("sd.del")
	t.quiesce()
	t.eq(p.x, 1, "old data readable here")
	t.eq(p.sub[1], 2, "old child readable")
	t.eq(skynet.call(r, "lua", "get", "sd.del", "x"), 1, "old data readable there")
	t.raises("call failed", sharedata.query, "sd.del.other")
	t.raises("call failed", skynet.call, r, "lua", "query", "sd.del")
	t.raises("call failed", sharedata.delete, "sd.del")
	t.raises("call failed", sharedata.deepcopy, "sd.del")
	sharedata.new("sd.del", { x = 2 })
	t.eq(sharedata.query("sd.del").x, 2, "a new name after delete")
	skynet.send(r, "lua", "exit")
end)

t.case("deepcopy: whole tree, path, scalar, missing key, cached name catches up", function()
	local src = { 1, { 2, 3 }, k = { v = { w = "x" } }, s = "str" }
	sharedata.new("sd.copy", src)
	local r = reader()
	t.same(skynet.call(r, "lua", "deepcopy", "sd.copy"), src, "whole, uncached")
	t.same(sharedata.deepcopy("sd.copy", "k", "v"), { w = "x" }, "path")
	t.eq(sharedata.deepcopy("sd.copy", "k", "v", "w"), "x", "scalar")
	t.eq(sharedata.deepcopy("sd.copy", "nope"), nil, "missing")
	t.eq(sharedata.deepcopy("sd.copy", "s", "x"), nil, "through a scalar")
	t.eq(sharedata.deepcopy("sd.copy", 2, 1), 2, "integer path")
	local p = sharedata.query("sd.copy")
	t.same(sharedata.deepcopy("sd.copy"), src, "whole, cached")
	sharedata.update("sd.copy", { new = true })
	t.same(sharedata.deepcopy("sd.copy"), { new = true }, "cached name after update")
	t.eq(p.new, true, "proxy too")
	t.raises("call failed", sharedata.deepcopy, "sd.copy.unknown")
	local c = sharedata.deepcopy("sd.copy")
	c.more = 1
	t.eq(p.more, nil, "the copy is independent")
	skynet.send(r, "lua", "exit")
end)

t.case("shared and cyclic tables from a source chunk", function()
	sharedata.new("sd.cycle", "a = { v = 1 } b = a a.self = a")
	local p = sharedata.query("sd.cycle")
	t.eq(p.a.self.self.v, 1, "cycle walks")
	t.ok(p.a ~= p.b, "one proxy per key path")
	t.eq(p.b.v, 1, "shared subtable")
	local c = sharedata.deepcopy("sd.cycle")
	t.ok(c.a.self == c.a, "the copy keeps the cycle")
end)

t.case("corelib: box, update rules, next, copy, flush, host references", function()
	local host = corelib.host
	local h1 = host.new { x = 1, t = { 1, 2 } }
	t.eq(host.getref(h1), 1, "host reference")
	local p = corelib.box(h1)
	t.eq(host.getref(h1), 2, "box takes one")
	t.eq(p.x, 1, "box reads")
	t.eq(corelib.copy(h1, "t", 2), 2, "copy path")
	t.same(corelib.copy(h1), { x = 1, t = { 1, 2 } }, "copy")
	local k, v = corelib.next(p, nil)
	t.ok(k == "x" or k == "t", "next key")
	t.ok(v ~= nil, "next value")
	local h2 = host.new { x = 2 }
	t.raises("You should update a new object", corelib.update, p, h1)
	t.raises("Only dirty object can be update", corelib.update, p, h2)
	host.markdirty(h1)
	t.eq(p.x, 1, "dirty alone does not switch")
	t.ok(corelib.update(p, h2), "update")
	t.eq(p.x, 2, "switched")
	t.eq(host.getref(h1), 1, "the proxy released the old version at once")
	corelib.flush(p)
	t.eq(host.incref(h2), 3, "incref")
	t.eq(host.decref(h2), 2, "decref")
	host.delete(h1)
	t.eq(host.getref(h1), 0, "freed")
	t.raises("invalid object", corelib.box, h1)
	t.raises("invalid object", corelib.copy, h1)
	t.raises("invalid object", host.incref, h1)
	host.delete(h2)
	t.eq(p.x, 2, "the proxy still holds its version")
	t.raises("bad argument", host.getref, 1)
end)

t.case("flush: catches up and collects", function()
	sharedata.new("sd.flush", { x = 1 })
	local p = sharedata.query("sd.flush")
	sharedata.update("sd.flush", { x = 2 })
	sharedata.flush()
	t.eq(p.x, 2, "after flush")
	local r = reader()
	skynet.call(r, "lua", "query", "sd.flush")
	skynet.call(r, "lua", "flush")
	t.eq(skynet.call(r, "lua", "get", "sd.flush", "x"), 2, "reader flush")
	skynet.send(r, "lua", "exit")
end)

t.case("old versions are released as soon as every reader has switched", function()
	t.quiesce() -- readers of earlier cases finish exiting (and releasing) first
	local base = live()
	sharedata.new("sd.rel", { a = { 1 }, b = { 2 } })
	t.eq(live(), base + 1, "one version")
	local readers = {}
	for i = 1, 3 do
		readers[i] = reader()
		skynet.call(readers[i], "lua", "query", "sd.rel")
		skynet.call(readers[i], "lua", "keep", "a", "sd.rel", "a") -- an untouched child
	end
	for v = 2, 5 do
		sharedata.update("sd.rel", { a = { v }, b = { v } })
		t.quiesce()
		t.eq(live(), base + 1, "after update " .. v)
	end
	t.eq(skynet.call(readers[2], "lua", "get", "a", 1), 5, "the child follows")
	for i = 1, 3 do
		skynet.send(readers[i], "lua", "exit")
	end
	t.quiesce()
	t.eq(live(), base + 1, "the helper's version only")
	sharedata.delete("sd.rel")
	t.eq(live(), base, "deleted")
end)

t.case("a deleted version lives while a reader holds it, then goes", function()
	t.quiesce()
	local base = live()
	sharedata.new("sd.held", { x = 1 })
	local r = reader()
	skynet.call(r, "lua", "query", "sd.held")
	sharedata.delete("sd.held")
	t.quiesce()
	t.eq(live(), base + 1, "held by the reader")
	skynet.call(r, "lua", "drop", "sd.held")
	t.eq(live(), base, "gone with the reader's last proxy")
	skynet.send(r, "lua", "exit")
end)

t.case("readers that exit mid-update leave nothing behind", function()
	t.quiesce()
	local base = live()
	sharedata.new("sd.exit", { x = 0 })
	local n = t.under_tsan and 4 or 12
	for i = 1, n do
		local r = reader()
		skynet.call(r, "lua", "query", "sd.exit")
		skynet.call(r, "lua", "keep", "c", "sd.exit")
		if i % 3 == 0 then
			skynet.send(r, "lua", "exit") -- exits before its monitor answer
			sharedata.update("sd.exit", { x = i })
		elseif i % 3 == 1 then
			sharedata.update("sd.exit", { x = i })
			skynet.send(r, "lua", "exit") -- exits with the answer queued
		else
			skynet.fork(sharedata.update, "sd.exit", { x = i })
			skynet.kill(r)
		end
	end
	t.quiesce()
	t.eq(live(), base + 1, "only the current version")
	local p = sharedata.query("sd.exit")
	t.eq(p.x, n, "data")
	sharedata.delete("sd.exit")
	t.quiesce()
	t.eq(live(), base + 1, "this service still holds the deleted version")
	p = nil -- luacheck: ignore 311 (dropped for the collector)
	collectgarbage()
	t.eq(live(), base, "released by the collector")
end)

t.case("a million distinct strings build (no stack limit)", function()
	local n = t.under_tsan and 100000 or 1100000
	local src = {}
	for i = 1, n do
		src[i] = "s" .. i
	end
	local h = corelib.host.new(src)
	local p = corelib.box(h)
	corelib.host.delete(h)
	src = nil -- luacheck: ignore 311 (dropped for the collector)
	collectgarbage()
	t.eq(#p, n, "#")
	t.eq(p[n], "s" .. n, "last")
	t.eq(p[12345], "s12345", "middle")
end)

t.start({
	do_update = function()
		waiting_update()
	end,
})
