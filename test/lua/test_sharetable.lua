-- skynet.sharetable on stock Lua: loadfile/loadstring/loadtable, query,
-- queryall, address, argument and build errors (C texts checked on the core
-- directly, call failed through the cell), what readers get (values, #,
-- pairs, identity, table/boolean/float keys, shared functions), writes,
-- rawset staying local, other services, update re-pointing proxies in place
-- (removed subtables detach), and version lifetime counted with the store's
-- live-version counter.
local skynet = require "skynet"
local t = require "testlib"
local sharetable = require "skynet.sharetable"
local core = require "skynet.sharetable.core"

local function live()
	collectgarbage()
	return (core.stat())
end

local function reader()
	return skynet.newservice("svc_sharetable_reader")
end

t.case("API names, address", function()
	for _, k in ipairs { "loadfile", "loadstring", "loadtable", "query", "queryall", "update" } do
		t.eq(type(sharetable[k]), "function", "sharetable." .. k)
	end
	local addr = sharetable.address
	t.eq(math.type(addr), "integer", "address")
	t.eq(sharetable.address, addr, "the same cell")
	t.eq(require("skynet.service").query("sharetable"), addr, "the cell is named sharetable")
end)

t.case("loadfile, loadstring, loadtable, query, queryall", function()
	sharetable.loadfile("./test/lua/sharetable_conf.lua", 7, true)
	local c = sharetable.query("./test/lua/sharetable_conf.lua")
	t.eq(c.n, 7, "argument")
	t.eq(c.flag, true, "boolean argument")
	t.eq(c.name, "conf7", "standard library")
	t.eq(#c.list, 3, "#")
	sharetable.loadstring("st.str", "local a, b = ... return { sum = a + b, s = 'x' }", 2, 3.5)
	local s = sharetable.query("st.str")
	t.eq(s.sum, 5.5, "loadstring")
	sharetable.loadtable("st.tab", { 1, 2, k = { v = "w" } })
	local tb = sharetable.query("st.tab")
	t.eq(tb.k.v, "w", "loadtable")
	t.raises("assertion failed!", sharetable.loadtable, "st.tab2", "not a table")
	t.eq(sharetable.query("st.nothing"), nil, "unknown name")
	local all = sharetable.queryall { "st.str", "st.tab", "st.nothing" }
	t.ok(all["st.str"] == s and all["st.tab"] == tb, "queryall gives the same objects")
	t.eq(all["st.nothing"], nil, "missing names omitted")
	local every = sharetable.queryall()
	t.ok(every["st.str"] == s and every["./test/lua/sharetable_conf.lua"] == c, "queryall()")
	local info = skynet.call(sharetable.address, "debug", "INFO")
	t.eq(type(info["st.str"].size), "number", "debug INFO size")
	t.ok(info["st.str"].current ~= nil, "debug INFO current")
end)

t.case("argument rules and build errors: C texts, call failed through the cell", function()
	local m = core.matrix
	local src = { "string", "return {}", "x" }
	t.raises("bad argument #2 to 'matrix' (Type invalid)", m, src, "str")
	t.raises("bad argument #3 to 'matrix' (Only support light C function)", m, src, 1, function() end)
	t.raises("Type invalid", m, src, {})
	local ok = m(src, 1, true, nil, print)
	t.ok(ok, "numbers, booleans, nil, light C functions")
	t.raises("Not a table, it's a number.", m, { "string", "return 1", "x" })
	t.raises("Not a table, it's a nil.", m, { "string", "local x = 1", "x" })
	t.raises("Can't share metatable", m, { "string", "return setmetatable({}, {})", "x" })
	t.raises("Can't share metatable", m, { "string", "return { a = { setmetatable({}, {}) } }", "x" })
	t.raises("Invalid function with upvalue", m, { "string", "return { f = function() return print end }", "x" })
	t.raises("Invalid function with upvalue", m, { "string", "local u = 1 return { f = function() return u end }", "x" })
	t.raises("Invalid type [userdata]", m, { "string", "return { io.stdout }", "x" })
	t.raises("Invalid type [thread]", m, { "string", "return { [coroutine.create(print)] = 1 }", "x" })
	t.raises("x:1:", m, { "string", "return {", "x" })
	t.raises("boom", m, { "string", "error 'boom'", "x" })
	t.raises("cannot open", m, { "file", "./no/such/file.lua" })
	t.raises("call failed", sharetable.loadstring, "st.bad", "return 1")
	t.raises("call failed", sharetable.loadstring, "st.bad", "return {}", "string argument")
	t.raises("call failed", sharetable.loadfile, "./no/such/file.lua")
	t.raises("Unsupport type function", sharetable.loadstring, "st.bad", "return {}", print)
	t.eq(sharetable.query("st.bad"), nil, "nothing stored")
end)

t.case("a failed build leaves no version behind", function()
	local before = live()
	for _ = 1, 10 do
		pcall(core.matrix, { "string", "return { a = { b = { 'x', setmetatable({}, {}) } } }", "x" })
		pcall(core.matrix, { "string", "return { 1, 2, { function() return _ENV end } }", "x" })
	end
	t.eq(live(), before, "live versions")
end)

t.case("readers get tables: values, #, pairs, ipairs, identity, keys", function()
	sharetable.loadstring("st.read", [[
		local shared = { v = "shared" }
		local key = { "k" }
		local t = { 10, 20, 30, s = "str", f = 1.5, yes = true, no = false,
			a = shared, b = shared, sub = { deep = { x = 1 } },
			[true] = "T", [false] = "F", [2.5] = "float", [key] = "by table", key = key }
		t.self = t
		return t
	]])
	local r = sharetable.query("st.read")
	t.eq(type(r), "table", "type")
	t.eq(getmetatable(r), false, "getmetatable")
	t.ok(sharetable.query("st.read") == r, "query gives the same object")
	t.eq(r[2], 20, "array")
	t.eq(r.s, "str", "string")
	t.eq(r.f, 1.5, "float")
	t.eq(r.no, false, "false")
	t.eq(#r, 3, "#")
	t.ok(r.sub == r.sub, "subtable identity")
	t.ok(r.a == r.b, "one table reached twice is one object")
	t.ok(r.self == r, "cycle")
	t.eq(r.sub.deep.x, 1, "deep")
	t.eq(r[true], "T", "boolean key")
	t.eq(r[false], "F", "false key")
	t.eq(r[2.5], "float", "float key")
	t.eq(r[2.0], 20, "integral float key")
	t.eq(r[r.key], "by table", "table key")
	t.eq(r[{ "k" }], nil, "another table is another key")
	t.eq(r[nil], nil, "nil key")
	local n, keys = 0, {}
	for k, v in pairs(r) do
		n = n + 1
		keys[k] = v
	end
	t.eq(n, 16, "pairs count")
	t.eq(keys[r.key], "by table", "pairs gives table keys as the same objects")
	t.ok(keys.sub == r.sub, "pairs gives the same subtables")
	local order = {}
	for k in pairs(r) do
		order[#order + 1] = k
		if #order == 3 then
			break
		end
	end
	t.eq(table.concat(order, ","), "1,2,3", "array part first")
	local sum = 0
	for _, v in ipairs(r) do
		sum = sum + v
	end
	t.eq(sum, 60, "ipairs")
	t.eq(table.concat(r, "+"), "10+20+30", "table.concat")
	t.eq(select("#", table.unpack(r)), 3, "table.unpack")
	t.eq(next(r), nil, "next sees an empty table (documented difference)")
	t.eq(rawlen(r), 0, "rawlen too")
	local msg, sz = skynet.pack(r.sub)
	local back = skynet.unpack(msg, sz)
	skynet.trash(msg, sz)
	t.same(back, { deep = { x = 1 } }, "skynet.pack through __pairs")
end)

t.case("functions without upvalues and light C functions are shared", function()
	sharetable.loadstring("st.fn", [[
		local function add(a, b) return a + b end
		return { add = add, again = add, max = math.max, [add] = "function key",
			bad = function() local x return x.y end }
	]])
	local f = sharetable.query("st.fn")
	t.eq(f.add(2, 3), 5, "Lua function")
	t.ok(f.add == f.again, "loaded once")
	t.ok(f.max == math.max, "light C function")
	t.eq(f[f.add], "function key", "function key")
	t.raises("st.fn:3: attempt to index a nil value", f.bad)
end)

t.case("writes fail, rawset stays local", function()
	sharetable.loadtable("st.ro", { x = 1, sub = { y = 2 } })
	local r = sharetable.query("st.ro")
	t.raises("attempt to change a shared table", function()
		r.x = 2
	end)
	t.raises("attempt to change a shared table", function()
		r.sub.z = 2
	end)
	t.raises("attempt to change a shared table", table.insert, r, 1)
	t.raises("protected metatable", setmetatable, r, {})
	local other = reader()
	skynet.call(other, "lua", "query", "st.ro")
	rawset(r, "x", 9)
	t.eq(r.x, 9, "rawset shadows here")
	t.eq(skynet.call(other, "lua", "get", "st.ro", "x"), 1, "not elsewhere")
	skynet.call(other, "lua", "rawset", "st.ro", "x", 7)
	t.eq(skynet.call(other, "lua", "get", "st.ro", "x"), 7, "there")
	t.eq(r.x, 9, "not here")
	local fresh = reader()
	skynet.call(fresh, "lua", "query", "st.ro")
	t.eq(skynet.call(fresh, "lua", "get", "st.ro", "x"), 1, "the shared data is untouched")
	skynet.send(other, "lua", "exit")
	skynet.send(fresh, "lua", "exit")
end)

t.case("readers keep their version until update; update re-points in place", function()
	sharetable.loadstring("st.upd", "return { v = 1, keep = { w = 1 }, gone = { z = 1 }, list = { 1, 2 } }")
	local r = sharetable.query("st.upd")
	local keep, gone, list = r.keep, r.gone, r.list
	local function upvalue_sees()
		return keep.w
	end
	local other = reader()
	skynet.call(other, "lua", "query", "st.upd")
	skynet.call(other, "lua", "keep", "keep", "st.upd", "keep")
	sharetable.loadstring("st.upd", "return { v = 2, keep = { w = 2 }, gone = 5, list = { 1, 2, 3 } }")
	t.eq(r.v, 1, "still the old version here")
	t.eq(skynet.call(other, "lua", "get", "keep", "w"), 1, "and there")
	sharetable.update("st.upd", "st.never.queried")
	t.eq(r.v, 2, "root re-pointed")
	t.eq(upvalue_sees(), 2, "an upvalue holding a kept subtable shows the new content")
	t.eq(#list, 3, "# of the new version")
	t.ok(r.keep == keep, "identity kept")
	t.ok(sharetable.query("st.upd") == r, "query gives the same object after update")
	t.raises("sharetable: table removed by update", function()
		return gone.z
	end)
	t.raises("sharetable: table removed by update", function()
		return #gone
	end)
	t.raises("sharetable: table removed by update", pairs, gone)
	t.eq(r.gone, 5, "the new value")
	t.eq(skynet.call(other, "lua", "get", "keep", "w"), 1, "the other reader did not update")
	skynet.call(other, "lua", "update", "st.upd")
	t.eq(skynet.call(other, "lua", "get", "keep", "w"), 2, "now it did")
	t.eq(skynet.call(other, "lua", "get", "st.upd", "v"), 2, "its root too")
	skynet.send(other, "lua", "exit")
end)

t.case("update follows table keys", function()
	local src = "local k = { 'k' } return { holder = { k }, [k] = '%s', a = { n = %d } }"
	sharetable.loadstring("st.keys", src:format("v1", 1))
	local r = sharetable.query("st.keys")
	local seen
	for k in pairs(r) do -- meets the key table first as a key (no path yet)
		if type(k) == "table" and r[k] == "v1" then
			seen = k
		end
	end
	local key = r.holder[1] -- now reached by a path
	t.ok(key == seen, "one object")
	local a = r.a
	sharetable.loadstring("st.keys", src:format("v2", 2))
	sharetable.update("st.keys")
	t.eq(r[key], "v2", "the key proxy was re-pointed too")
	t.eq(a.n, 2, "child")
end)

t.case("old versions die when the last reader updates, drops or exits", function()
	local base = live()
	sharetable.loadtable("st.life", { v = 1, sub = { 1 } })
	t.eq(live(), base + 1, "one version")
	local readers = {}
	for i = 1, 3 do
		readers[i] = reader()
		skynet.call(readers[i], "lua", "query", "st.life")
		skynet.call(readers[i], "lua", "keep", "sub", "st.life", "sub")
	end
	sharetable.loadtable("st.life", { v = 2, sub = { 2 } })
	t.eq(live(), base + 2, "the old version is held by its readers")
	skynet.call(readers[1], "lua", "update", "st.life")
	t.eq(live(), base + 2, "two readers left")
	skynet.call(readers[2], "lua", "drop", "st.life")
	skynet.call(readers[2], "lua", "drop", "sub")
	t.eq(live(), base + 2, "one reader left")
	skynet.send(readers[3], "lua", "exit")
	t.quiesce()
	t.eq(live(), base + 1, "gone with the last reader")
	t.eq(skynet.call(readers[1], "lua", "get", "sub", 1), 2, "the updated reader reads on")
	skynet.send(readers[1], "lua", "exit")
	skynet.send(readers[2], "lua", "exit")
	t.quiesce()
	t.eq(live(), base + 1, "the cell keeps the current one")
end)

t.case("update releases the old version at once", function()
	local base = live()
	sharetable.loadtable("st.once", { sub = { 1 } })
	local r = reader()
	skynet.call(r, "lua", "query", "st.once")
	skynet.call(r, "lua", "keep", "sub", "st.once", "sub")
	for v = 2, 4 do
		sharetable.loadtable("st.once", { sub = { v } })
		t.eq(live(), base + 2, "held by the reader " .. v)
		skynet.call(r, "lua", "update", "st.once")
		t.eq(live(), base + 1, "released by its update " .. v)
	end
	t.eq(skynet.call(r, "lua", "get", "sub", 1), 4, "the kept subtable shows the last version")
	skynet.send(r, "lua", "exit")
end)

t.case("readers that exit while versions change leave nothing behind", function()
	local base = live()
	sharetable.loadtable("st.exit", { v = 0 })
	local n = t.under_tsan and 4 or 10
	for i = 1, n do
		local r = reader()
		skynet.call(r, "lua", "query", "st.exit")
		skynet.call(r, "lua", "keep", "x", "st.exit")
		skynet.fork(sharetable.loadtable, "st.exit", { v = i })
		if i % 2 == 0 then
			skynet.send(r, "lua", "update", "st.exit")
			skynet.send(r, "lua", "exit")
		else
			skynet.kill(r)
		end
	end
	t.quiesce()
	t.eq(live(), base + 1, "only the current version")
	local r = sharetable.query("st.exit")
	t.eq(r.v, n, "data")
end)

t.start()
