-- skynet.datasheet (reader, builder, dump, core and the datasheet cell): the
-- blocking require, compile bytes, value and key rules, lazy proxies,
-- updates seen from other services with identity kept, removed subtables,
-- the single-builder rule, failed queries not remembered, readers and
-- builders that exit (no image leaked, none freed under a reader), old
-- versions freed once readers moved, undump/diff round trips and the checks
-- of image strings.
--
-- The builder and the reader are required inside the cases: requiring the
-- reader before any builder exists blocks, and the first case shows that.
local skynet = require "skynet"
local t = require "testlib"
local dump = require "skynet.datasheet.dump"
local core = require "skynet.datasheet.core"

local hex, unhex = t.hex, t.unhex
local builder, ds

local function peer(mode)
	return skynet.newservice("svc_datasheet_peer", mode)
end

local function run(addr, src, ...)
	return skynet.call(addr, "lua", "run", src, ...)
end

-- Runs src in addr and returns pcall's results there (ok, value or error text).
local function try(addr, src, ...)
	return run(addr, "return pcall(function(...) " .. src .. " end, ...)", ...)
end

local function cell_info()
	local service = require "skynet.service"
	return skynet.call(service.query "datasheet", "debug", "INFO")
end

-- Old versions (not current) the cell still keeps.
local function old_versions()
	local n = 0
	for k in pairs(cell_info()) do
		if type(k) ~= "string" then
			n = n + 1
		end
	end
	return n
end

t.case("requiring the reader blocks until some builder is required", function()
	local early
	skynet.fork(function()
		early = peer "reader"
	end)
	skynet.sleep(500)
	t.eq(early, nil, "reader service still starting")
	builder = require "skynet.datasheet.builder"
	ds = require "skynet.datasheet"
	skynet.sleep(1)
	t.ok(early, "reader service started once a builder exists")
	builder.new("early", { v = 1 })
	t.eq(run(early, "return ds.query('early').v"), 1, "the early reader reads")
end)

t.case("compile gives the documented bytes", function()
	local v = { 1, "a", x = "a", y = { true } }
	local y_first = "44000000 02000000 00000000 24000000 02000000 02000000 01050405 01000000" ..
		"00000000 02000000 01000000 04000000 00000000 01000000 00000000 03000000 00000001" ..
		"61 00 79 00 78 00"
	local x_first = "44000000 02000000 00000000 24000000 02000000 02000000 01050504 01000000" ..
		"00000000 02000000 00000000 04000000 01000000 01000000 00000000 03000000 00000001" ..
		"61 00 78 00 79 00"
	-- Dict order is pairs order: pick the expectation that matches it.
	local first_key = next(v, 2)
	t.eq(hex(builder.compile(v)), hex(unhex(first_key == "y" and y_first or x_first)),
		"compile{1, 'a', x = 'a', y = {true}}")
	t.eq(hex(builder.compile {}), "140000000100000000000000000000000000000000", "compile{}")
	t.eq(hex(builder.compile { false }), hex(unhex("1c000000 01000000 00000000 01000000" ..
		"00000000 03000000 00000000 00")), "false is a zero word")
	-- Tables numbered depth first, array part first; strings in order of first use.
	local img = builder.compile { { "b", { "c" } }, "a", k = { "d" } }
	local root, numbers = dump.undump(img)
	t.eq(numbers[root], 0, "root")
	t.eq(numbers[root[1]], 1, "first array table")
	t.eq(numbers[root[1][2]], 2, "its child before the next sibling")
	t.eq(numbers[root.k], 3, "dict table last")
	local strtbl = string.unpack("<I4", img)
	t.eq(img:sub(strtbl + 1), "b\0c\0a\0k\0d\0", "string pool order")
	local shared = { 1 }
	local twice = dump.undump(builder.compile { shared, shared })
	t.ok(twice[1] ~= twice[2] and twice[1][1] == 1 and twice[2][1] == 1, "stored twice")
end)

t.case("value encoding: int32 exact, every other number a 32-bit float", function()
	local v = { 0.1, 2 ^ 31, 1.0, -2 ^ 31, 2 ^ 31 - 1, math.maxinteger, -3, 0.5, 1e300,
		2147483648, -2147483649 }
	builder.new("values", v)
	local r = ds.query "values"
	local u = dump.undump(builder.compile(v))
	for _, got in ipairs { r, u } do
		t.eq(got[1], 0.10000000149011612, "0.1")
		t.eq(string.format("%.17g", got[1]), "0.10000000149011612", "0.1 digits")
		t.eq(math.type(got[2]), "float", "2^31 type")
		t.eq(tostring(got[2]), "2147483648.0", "2^31")
		t.eq(math.type(got[3]), "integer", "integral float in range")
		t.eq(got[3], 1, "1.0")
		t.eq(math.type(got[4]), "integer", "-2^31 type")
		t.eq(got[4], -2147483648, "-2^31")
		t.eq(got[5], 2147483647, "2^31-1")
		t.eq(math.type(got[5]), "integer", "2^31-1 type")
		t.eq(math.type(got[6]), "float", "maxinteger becomes a float")
		t.eq(got[6], 2.0 ^ 63, "maxinteger as f32")
		t.eq(got[7], -3, "-3")
		t.eq(got[8], 0.5, "0.5")
		t.eq(got[9], math.huge, "1e300 overflows f32")
		t.eq(tostring(got[10]), "2147483648.0", "integer 2^31")
		t.eq(tostring(got[11]), "-2147483648.0", "integer -2^31-1 rounds in f32")
		t.eq(#got, 11, "length")
	end
	builder.new("misc", { t = true, f = false, s = "str", e = "" })
	local m = ds.query "misc"
	t.eq(m.t, true, "true")
	t.eq(m.f, false, "false")
	t.eq(m.s, "str", "string")
	t.eq(m.e, "", "empty string")
end)

t.case("key and value rules are enforced in the builder", function()
	t.raises("assertion failed!", builder.compile, { 1, nil, 3 })
	t.raises("assertion failed!", builder.compile, { [true] = 1 })
	t.raises("assertion failed!", builder.compile, { [1.5] = 1 })
	t.raises("assertion failed!", builder.compile, { [0] = 1 })
	t.raises("assertion failed!", builder.compile, { a = { [-1] = 1 } })
	t.raises("assertion failed!", builder.new, "badkey", { [{}] = 1 })
	t.raises("Unsupport value function", builder.compile, { print })
	t.raises("Unsupport value thread", builder.new, "badvalue", { x = coroutine.create(print) })
	t.raises("zero byte cannot be stored", builder.compile, { "a\0b" })
	t.raises("zero byte cannot be stored", builder.compile, { ["k\0"] = 1 })
	t.raises("table expected", builder.compile, "x")
	t.raises("table or image string expected", builder.new, "bad", 42)
	t.raises("name must be a string", builder.new, 1, {})
	t.raises("datasheet: invalid image", builder.new, "garbage", "not an image")
	t.raises("call failed", ds.query, "badkey") -- nothing was published
	t.raises("call failed", ds.query, "garbage")
end)

t.case("the single-builder rule", function()
	builder.new("single", { a = 1 })
	t.raises("assertion failed!", builder.new, "single", { a = 2 })
	t.raises("assertion failed!", builder.update, "nobody", { a = 2 })
	local other = peer "builder"
	local ok, err = try(other, "builder.update('single', {a = 3})")
	t.eq(ok, false, "update from another service")
	t.ok(err:find("assertion failed!", 1, true), "its text: " .. err)
	ok, err = try(other, "builder.new('single', {a = 3})")
	t.eq(ok, false, "new of an existing name from another service")
	t.ok(err:find("call failed", 1, true), "its text: " .. err)
	t.eq(ds.query("single").a, 1, "unchanged")
	-- A compiled image is accepted by new and update.
	builder.new("compiled", builder.compile { a = { 1 } })
	local r = ds.query "compiled"
	local a = r.a
	builder.update("compiled", builder.compile { a = { 2 } })
	t.ok(r.a == a, "identity kept across a compiled update")
	t.eq(a[1], 2, "new content")
	skynet.send(other, "lua", "exit")
end)

t.case("proxies: lazy levels that turn into plain tables", function()
	builder.new("proxy", { a = { b = 1 }, c = { 1, 2, 3 }, s = "str" })
	local root = ds.query "proxy"
	t.ok(ds.query "proxy" == root, "the same root for every query")
	t.eq(type(root), "table", "a real table")
	t.eq(next(root), nil, "next before the first touch")
	t.eq(rawlen(root), 0, "rawlen before the first touch")
	t.ok(getmetatable(root) ~= nil, "metatable before the touch")
	local c = root.c
	t.eq(getmetatable(root), nil, "no metatable after the touch")
	t.eq(rawget(root, "s"), "str", "rawget after the touch")
	t.eq(next(c), nil, "a child is untouched")
	t.eq(#c, 3, "# fills the level")
	t.eq(rawlen(c), 3, "rawlen after")
	t.ok(root.c == root.c and root.a == root.a, "t.c == t.c")
	local n = 0
	for k, v in pairs(root.a) do
		n = n + 1
		t.eq(k, "b", "pairs key")
		t.eq(v, 1, "pairs value")
	end
	t.eq(n, 1, "pairs fills and walks the level")
	root.s = "local"
	c[1] = 100
	t.eq(root.s, "local", "writes are local")
	t.eq(c[1], 100, "array write")
	local other = peer "reader"
	t.eq(run(other, "return ds.query('proxy').s, ds.query('proxy').c[1]"), "str",
		"another reader does not see them")
	t.eq(select(2, run(other, "return ds.query('proxy').s, ds.query('proxy').c[1]")), 1,
		"nor the array write")
	skynet.send(other, "lua", "exit")
end)

t.case("updates reach readers in other services; identity kept, removed tables invalid", function()
	builder.new("cfg", { a = { x = 1, deep = { y = 1 } }, b = { y = 2 }, list = { 1, 2 } })
	local mine = ds.query "cfg"
	local mine_a = mine.a
	local r = peer "reader"
	run(r, [[
		local root = ds.query 'cfg'
		kept.root, kept.a, kept.b, kept.deep = root, root.a, root.b, root.a.deep
		kept.list = root.list
		kept.list[1] = 99
		return kept.a.x + kept.b.y + kept.deep.y
	]])
	builder.update("cfg", { a = { x = 10, deep = { y = 20 } }, b = 5, list = { 3 }, n = { 1 } })
	-- In the builder's own service the new version is visible at once.
	t.eq(mine.a.x, 10, "builder-side reader sees the update at once")
	t.ok(mine.a == mine_a, "builder-side identity")
	t.quiesce()
	t.eq(run(r, "return kept.root == ds.query 'cfg'"), true, "same root")
	t.eq(run(r, "return kept.a == ds.query('cfg').a"), true, "same subtable")
	t.eq(run(r, "return kept.a.x, kept.deep.y, kept.deep == kept.a.deep"), 10,
		"kept subtable shows the new data")
	t.eq(select(2, run(r, "return kept.a.x, kept.deep.y")), 20, "deeper kept table")
	t.eq(run(r, "return kept.deep == kept.a.deep"), true, "deeper identity")
	t.eq(run(r, "return ds.query('cfg').b"), 5, "a table replaced by a number")
	t.eq(run(r, "return kept.list[1], #kept.list"), 3, "local writes are lost")
	t.eq(run(r, "return ds.query('cfg').n[1]"), 1, "a new table")
	local ok, err = try(r, "return kept.b.y")
	t.eq(ok, false, "a removed table raises")
	t.ok(err:find("Invalid proxy (index = ", 1, true), "its text: " .. err)
	ok = try(r, "return next(kept.b)")
	t.eq(ok, true, "next on a removed table is raw")
	ok, err = try(r, "return #kept.b")
	t.ok(not ok and err:find("Invalid proxy (index = ", 1, true), "# on a removed table")
	ok, err = try(r, "for k in pairs(kept.b) do end")
	t.ok(not ok and err:find("Invalid proxy (index = ", 1, true), "pairs on a removed table")
	-- A table that comes back at the same path later is a new one.
	builder.update("cfg", { a = { x = 11 }, b = { y = 7 } })
	t.quiesce()
	t.eq(run(r, "return ds.query('cfg').b.y"), 7, "new b")
	ok = try(r, "return kept.b.y")
	t.eq(ok, false, "the old proxy stays invalid")
	t.eq(run(r, "return kept.deep == nil or pcall(function() return kept.deep.y end)"), false,
		"deep removed")
	t.eq(old_versions(), 0, "old versions freed once every reader moved")
	skynet.send(r, "lua", "exit")
end)

t.case("a failed query is not remembered; concurrent first queries share one", function()
	t.raises("call failed", ds.query, "later")
	builder.new("later", { v = 1 })
	t.eq(ds.query("later").v, 1, "query after creation succeeds")
	builder.new("together", { v = 2 })
	local got = {}
	for i = 1, 3 do
		skynet.fork(function()
			got[i] = ds.query "together"
		end)
	end
	skynet.sleep(1)
	t.ok(got[1] and got[1] == got[2] and got[2] == got[3], "one root for all")
	local errs = {}
	for i = 1, 2 do
		skynet.fork(function()
			errs[i] = select(2, pcall(ds.query, "never"))
		end)
	end
	skynet.sleep(1)
	t.ok(errs[1] and errs[1]:find("call failed", 1, true), "first waiter error")
	t.eq(errs[2], errs[1], "the concurrent query gets the same error")
end)

t.case("a reader that exits around an update leaks no image", function()
	local base = core.live()
	builder.new("leak", { a = { 1 } })
	t.eq(core.live(), base + 1, "one image")
	for round = 1, 6 do
		local r = peer "reader"
		run(r, "kept.a = ds.query('leak').a; return kept.a[1]")
		if round % 2 == 0 then
			skynet.send(r, "lua", "exit")
			builder.update("leak", { a = { round } })
		else
			-- The update's answer is queued behind the exit or crosses it.
			builder.update("leak", { a = { round } })
			skynet.send(r, "lua", "exit")
		end
		if round > 3 then
			t.quiesce()
		end
	end
	t.quiesce()
	t.eq(ds.query("leak").a[1], 6, "current version")
	t.eq(core.live(), base + 1, "only the current image is alive")
	t.eq(old_versions(), 0, "cell keeps no old version")
end)

t.case("old versions live while a reader holds them, and go once it moved", function()
	local base = core.live()
	builder.new("versions", { a = { 1 } })
	local r = peer "reader"
	run(r, "kept.root = ds.query 'versions'")
	local mine = ds.query "versions"
	local info = cell_info()
	local v1 = info.versions.handle
	t.eq(info.versions.monitors, 2, "two readers hold version 1")
	t.eq(core.refs(v1), 3, "C references: the cell's and two sheets'")
	-- A raw holder that does not follow updates pins version 1.
	local cell = require("skynet.service").query "datasheet"
	t.ok(skynet.call(cell, "lua", "query", "versions") == v1, "raw query")
	builder.update("versions", { a = { 2 } })
	t.quiesce()
	t.eq(mine.a[1], 2, "this reader moved")
	t.eq(run(r, "return kept.root.a[1]"), 2, "the other reader moved")
	t.eq(core.live(), base + 2, "version 1 kept for the raw holder")
	t.eq(old_versions(), 1, "the cell lists version 1")
	t.eq(cell_info()[v1], 1, "one reference left on it")
	t.eq(core.refs(v1), 1, "only the cell's C reference")
	skynet.send(cell, "lua", "release", v1)
	t.quiesce()
	t.eq(core.live(), base + 1, "freed once the last holder let go")
	t.eq(old_versions(), 0, "nothing old listed")
	local v2 = cell_info().versions.handle
	t.eq(core.refs(v2), 3, "version 2: the cell and two sheets")
	skynet.send(r, "lua", "exit")
	t.quiesce()
	t.eq(core.refs(v2), 2, "the exited reader's sheet let go")
	t.eq(cell_info().versions.monitors, 1, "and the cell forgot its reference")
end)

t.case("a builder that exits leaves its readers working", function()
	local base = core.live()
	local b = peer "builder"
	run(b, [[
		builder.new('orphan', { a = { b = { c = 'deep' } }, list = { 1, 2, 3 } })
		builder.update('orphan', { a = { b = { c = 'deeper' } }, list = { 4, 5 } })
	]])
	local r = peer "reader"
	run(r, "kept.root = ds.query 'orphan'")
	local root = ds.query "orphan"
	skynet.send(b, "lua", "exit")
	t.quiesce()
	-- Nothing of the image was read before the builder left.
	t.eq(root.a.b.c, "deeper", "read after the builder exited")
	t.eq(#root.list, 2, "list")
	t.eq(run(r, "return kept.root.a.b.c .. kept.root.list[2]"), "deeper5", "other reader")
	t.raises("assertion failed!", builder.update, "orphan", {})
	t.eq(core.live(), base + 1, "one image")
	skynet.send(r, "lua", "exit")
end)

t.case("undump and diff", function()
	local v = { 1, -2, 0.5, "s", true, false, { "x", { y = "z" } }, k = { 7 }, e = {}, s = "s" }
	local img = builder.compile(v)
	local u = dump.undump(img)
	t.same(u, v, "undump(compile(v))")
	local again = dump.dump(u) -- dict order may differ: pairs order is per table
	t.eq(#again, #img, "compile(undump(img)) has the same size")
	t.same(dump.undump(again), v, "and the same content")
	local old = builder.compile { a = { 1 }, b = { 2 }, c = { d = { 3 } } }
	local new = builder.compile { c = { d = { 4 }, e = {} }, b = 5, a = { 7 }, z = {} }
	local d = dump.diff(old, new)
	local ro, mo = dump.undump(old)
	local rn, mn = dump.undump(d)
	t.same(rn, dump.undump(new), "diff keeps the content")
	t.eq(mn[rn], 0, "root keeps 0")
	t.eq(mn[rn.a], mo[ro.a], "a keeps its number")
	t.eq(mn[rn.c], mo[ro.c], "c keeps its number")
	t.eq(mn[rn.c.d], mo[ro.c.d], "c.d keeps its number")
	t.ok(mn[rn.c.e] >= 5 and mn[rn.z] >= 5 and mn[rn.c.e] ~= mn[rn.z], "new tables after old n")
	t.eq(select(2, string.unpack("<I4I4", d)), 7, "slot count")
	t.eq(string.unpack("<I4", d, 9 + 4 * mo[ro.b]), 0xffffffff, "old b is an empty slot")
	t.eq(core.check(d), true, "a diffed image passes the C check")
	-- diff of a diffed image: numbers keep growing, never reused.
	local d2 = dump.diff(d, builder.compile { b = { 1 } })
	local r2, m2 = dump.undump(d2)
	t.eq(m2[r2.b], 7, "b is new again")
	t.raises("datasheet image: too short", dump.undump, "abc")
	t.raises("datasheet image: string expected", dump.undump, 1)
end)

t.case("image strings are checked before use", function()
	local v = { 1, "a", x = "a", y = { true } }
	local good = builder.compile(v)
	local tref = next(v, 2) == "y" and 41 or 49 -- where y's table number is
	t.eq(core.check(good), true, "a compiled image")
	local function patch(s, pos, bytes)
		return s:sub(1, pos - 1) .. bytes .. s:sub(pos + #bytes)
	end
	local bad = {
		{ "short", "abc" },
		{ "header", patch(good, 1, string.pack("<I4", 0x1000)) },
		{ "no slots", patch(good, 5, string.pack("<I4", 0)) },
		{ "slot out of bounds", patch(good, 13, string.pack("<I4", 0x30)) },
		{ "root slot empty", patch(good, 9, string.pack("<I4", 0xffffffff)) },
		{ "bad type", patch(good, 25, "\9") },
		{ "nil type", patch(good, 25, "\0") },
		{ "string offset", patch(good, 33, string.pack("<I4", 6)) },
		{ "key offset", patch(good, 37, string.pack("<I4", 99)) },
		{ "table reference", patch(good, tref, string.pack("<I4", 2)) },
		{ "root referenced", patch(good, tref, string.pack("<I4", 0)) },
		{ "negative count", patch(good, 17, string.pack("<i4", -1)) },
		{ "huge count", patch(good, 17, string.pack("<i4", 0x7fffffff)) },
		{ "no final NUL", good:sub(1, -2) .. "x" },
		{ "truncated", good:sub(1, 40) },
	}
	-- A table referenced twice: table 1 reachable from both array slots.
	local twice = builder.compile { { 1 }, { 2 } }
	bad[#bad + 1] = { "table twice", patch(twice, 37, string.pack("<I4", 1)) }
	for _, b in ipairs(bad) do
		local ok, err = pcall(core.check, b[2])
		t.eq(ok, false, b[1])
		t.ok(err:find("datasheet: invalid image (", 1, true), b[1] .. ": " .. err)
		t.eq(pcall(core.load, b[2]), false, b[1] .. " (load)")
		t.eq(pcall(dump.undump, b[2]), false, b[1] .. " (undump)")
	end
	t.eq(core.check(patch(good, 33, string.pack("<I4", 4))), true, "another string is fine")
	local ptr = core.load(good)
	t.raises("Invalid proxy table", core.update, {}, ptr)
	core.release(ptr)
	t.raises("Invalid data handle", core.new, core.stringpointer(good))
	t.eq(type(core.stringpointer "s"), "userdata", "stringpointer")
end)

t.start()
