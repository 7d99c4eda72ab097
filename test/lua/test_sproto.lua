-- sproto: the schema language and its binary, the message codec with every
-- worked example byte-exact, 0-packing vectors, default tables and the
-- object API. (RPC and slots: test_sproto_rpc; bad input: test_sproto_bad.)
local t = require "testlib"
local u = require "sproto_util"
local parser = require "sprotoparser"
local sproto = require "sproto"
local core = require "sproto.core"

local hexeq, unhex = u.hexeq, u.unhex

local function parse_error(text, want, name)
	local ok, err = pcall(parser.parse, text, name)
	if ok then
		error(string.format("parse of %q succeeded, want error %q", text, want), 2)
	end
	err = tostring(err)
	if not err:find(want, 1, true) then
		error(string.format("parse of %q: got error %q, want %q", text, err, want), 2)
	end
end

---------------------------------------------------------------------------
-- Schema binary

t.case("schema binary: .A { x 0 : integer } is the 46-byte worked example", function()
	local bin = parser.parse(".A { x 0 : integer }")
	hexeq(bin, [[01 00 00 00 26 00 00 00 22 00 00 00 02 00 00 00 00 00 01 00 00 00 41
		13 00 00 00 0f 00 00 00 04 00 00 00 02 00 01 00 02 00 01 00 00 00 78]], "schema")
	-- newlines, comments and CRLF change nothing
	local same = parser.parse("# comment\r\n.A {\r\n  x 0 : integer # the x\n}\n# end")
	u.bytes(same, bin, "with comments")
end)

-- Each record: its words, then S(name); the binary must contain both in a row.
local function has_record(bin, words, name)
	local rec = unhex(words) .. string.pack("<s4", name)
	return bin:find(rec, 1, true) ~= nil
end

t.case("schema binary: record words of the 274-byte reference schema", function()
	local bin = parser.parse([[
.B { s 1 : string n 3 : *integer }
.A { b 0 : B d 1 : integer(2)
bin 2 : binary f 3 : double m 4 : *B(s) ok 5 : boolean }
foo 1 { request A response B }
bar 2 { response nil } baz 3 {}]])
	t.eq(#bin, 274, "size")
	local records = {
		{ "b", "04 00 00 00 01 00 04 00 02 00" },
		{ "d", "04 00 00 00 02 00 06 00 04 00" },
		{ "bin", "04 00 00 00 06 00 04 00 06 00" },
		{ "f", "04 00 00 00 08 00 01 00 08 00" },
		{ "m", "06 00 00 00 01 00 04 00 0a 00 04 00 04 00" },
		{ "ok", "04 00 00 00 04 00 01 00 0c 00" },
		{ "n", "05 00 00 00 02 00 01 00 08 00 04 00" },
		{ "foo", "04 00 00 00 04 00 02 00 04 00" },
		{ "bar", "05 00 00 00 06 00 01 00 01 00 04 00" },
		{ "baz", "02 00 00 00 08 00" },
	}
	for _, r in ipairs(records) do
		t.ok(has_record(bin, r[2], r[1]), "record of " .. r[1])
	end
	-- group: types and protocols; A (id 0) sorts before B (id 1)
	hexeq(bin:sub(1, 6), "02 00 00 00 00 00", "group words")
	local sp = sproto.new(bin)
	local tag, req, resp = core.protocol(sp.__cobj, "foo")
	t.eq(tag, 1, "foo tag")
	t.eq(req, core.querytype(sp.__cobj, "A"), "foo request is A")
	t.eq(resp, core.querytype(sp.__cobj, "B"), "foo response is B")
end)

t.case("schema binary: *KV() map field, empty types, types only", function()
	local bin = parser.parse(".KV { k 0 : string v 1 : integer } .M { m 0 : *KV() }")
	t.ok(has_record(bin, "07 00 00 00 01 00 02 00 02 00 04 00 02 00 04 00", "m"), "map record")
	hexeq(bin:sub(1, 4), "01 00 00 00", "types only: one field word")
	hexeq(parser.parse(""), "00 00", "empty schema")
	hexeq(parser.parse("  # nothing\n"), "00 00", "blank schema")
	-- a type without fields: 01 00 D S(name)
	local e = parser.parse(".E {}")
	hexeq(e, "01 00 00 00 0d 00 00 00 09 00 00 00 01 00 00 00 01 00 00 00 45", ".E {}")
end)

t.case("schema binary: types sorted by full name in byte order, ids follow", function()
	local bin = parser.parse([[
.b { x 0 : integer }
.B { y 0 : b .Z { } .A { } }
.a { z 0 : B }
p 1 { request { q 0 : integer } }]])
	local sp = sproto.new(bin)
	-- expected order: B, B.A, B.Z, a, b, p.request
	local names = { "B", "B.A", "B.Z", "a", "b", "p.request" }
	for _, n in ipairs(names) do
		t.ok(sp:exist_type(n), "type " .. n)
	end
	-- field y of B refers to b: its id is 4
	t.ok(has_record(bin, "04 00 00 00 01 00 0a 00 02 00", "y"), "y : b has type id 4")
	-- field z of a refers to B: id 0
	t.ok(has_record(bin, "04 00 00 00 01 00 02 00 02 00", "z"), "z : B has type id 0")
end)

t.case("schema language: scoping of nested types", function()
	local sp = sproto.parse([[
.Outer {
	.Inner { v 0 : integer }
	.Mid {
		.Inner { w 0 : string }
		a 0 : Inner        # Outer.Mid.Inner
		b 1 : Outer.Inner  # full name
	}
	i 0 : Inner            # Outer.Inner
	m 1 : Mid
}
.Inner { top 0 : boolean }
.Other { x 0 : Inner }     # top-level Inner
]])
	local v = { i = { v = 1 }, m = { a = { w = "s" }, b = { v = 2 } } }
	t.same(sp:decode("Outer", sp:encode("Outer", v)), v, "round trip through scopes")
	local o = sp:decode("Other", sp:encode("Other", { x = { top = true } }))
	t.eq(o.x.top, true, "top-level Inner")
	t.raises("attempt to index", sp.encode, sp, "Outer", { m = { a = 5 } })
end)

t.case("schema language: lexical rules", function()
	-- no newlines needed, blanks optional around ':' and '{'
	local a = parser.parse(".A{x 0:integer y 1 :string}")
	local b = parser.parse(".A {\n\tx 0 : integer\n\ty 1 : string\n}")
	u.bytes(a, b, "compact form")
	parse_error(".A { x 0 : integer }.B { }", "syntax error at [=text] line (1)")
	parse_error(". A { }", "syntax error")
	parse_error(".A { x 0 : * integer }", "syntax error")
	parse_error(".A { x 0 : integer (2) }", "syntax error")
	parse_error(".A { x0 : integer }", "syntax error")
	parse_error(".A { x 0 : integer y 1 : string", "syntax error")
	parse_error(".A { x -1 : integer }", "syntax error")
	parse_error(".A { x 0 : integer }\r.B {}", "syntax error")
	parse_error("foo 1 { request }", "syntax error")
	parse_error("foo 1 { requests A }", "syntax error")
	parse_error("foo { }", "syntax error")
	-- line numbers count LF and CRLF; the file name is parse's second argument
	parse_error(".A {\n x 0 : integer\r\n y : string\n}", "syntax error at [=text] line (3)")
	parse_error("\n\n\n.A { x 0 : integer ?}", "syntax error at [my.sproto] line (4)",
		"my.sproto")
	parse_error("# c1\n# c2\n.A { x 0 : integer }\n.B {\n  y 1 : boolean ?\n}",
		"syntax error at [=text] line (5)")
end)

t.case("schema language: meaning errors", function()
	parse_error(".A { x 0 : integer x 1 : string }", "redefine x in type A")
	parse_error(".A { x 0 : integer y 0 : string }", "redefine tag 0 in type A")
	parse_error(".A { } .A { }", "redefined A")
	parse_error(".A { .B { } .B { } }", "redefined A.B")
	parse_error(".A { } foo 1 { } foo 2 { }", "redefined foo")
	parse_error(".A { } foo 1 { } bar 1 { }", "redefined protocol tag 1 at bar")
	parse_error(".A { } foo 1 { request A request A }", "redefine request in protocol foo")
	parse_error(".A { } foo 1 { response A response nil }", "redefine response in protocol foo")
	parse_error(".A { } foo 1 { request X }", "Undefined request type X in protocol foo")
	parse_error(".A { } foo 1 { response integer }", "Undefined response type integer in protocol foo")
	parse_error(".A { x 0 : Q }", "Undefined type Q in type A")
	parse_error(".A { .B { x 0 : C } }", "Undefined type C in type A.B")
	parse_error(".KV { k 0 : string } .M { m 0 : *KV() }",
		"Invalid map definition: m, must only have two fields")
	parse_error(".KV { a 0 : string b 1 : string c 2 : string } .M { m 0 : *KV() }",
		"Invalid map definition: m, must only have two fields")
	parse_error(".I { id 0 : integer } .M { m 0 : *I(name) }", "Invalid map index :name")
	parse_error(".I { s 0 : I id 1 : integer } .M { m 0 : *I(s) }", "Invalid map index :s")
	parse_error(".A { b 0 : boolean(2) }", "assertion failed!")
	parse_error(".A { s 0 : string(1) }", "assertion failed!")
	parse_error("foo 1 { }", "assertion failed!")
	parse_error(".A { x 32767 : integer }", "unsigned overflow")
	-- ignored: a name suffix on a non-array field, request nil
	local bin = parser.parse(".I { id 0 : integer } .A { i 0 : I(id) s 1 : string(x) }")
	u.bytes(bin, parser.parse(".I { id 0 : integer } .A { i 0 : I s 1 : string }"), "(name) ignored")
	local sp = sproto.parse(".A { } foo 1 { request nil }")
	local _, req, resp = core.protocol(sp.__cobj, "foo")
	t.eq(req, nil, "request nil")
	t.eq(resp, nil, "no response")
	t.eq(select("#", core.protocol(sp.__cobj, "foo")), 3, "three results")
	-- the highest tag that still fits
	t.ok(sproto.parse(".A { x 32766 : integer }"), "tag 32766")
end)

t.case("schema loader: invalid binaries give nothing", function()
	t.eq(select("#", core.newproto("")), 0, "empty")
	t.eq(select("#", core.newproto("\1\0\0\0\5\0\0\0abc")), 0, "truncated")
	t.raises("bad argument #1 to 'assert' (value expected)", sproto.new, "\1\0\2\0")
	-- fields not ascending
	local good = parser.parse(".A { a 0 : integer b 1 : integer }")
	core.deleteproto(t.ok(core.newproto(good), "good"))
	-- swap the two field records: tags 1 then 0
	local s1 = good:find("\4\0\0\0\2\0\1\0\2\0", 1, true)
	local s2 = good:find("\4\0\0\0\2\0\1\0\4\0", 1, true)
	t.ok(s1 and s2, "records found")
	local bad = good:sub(1, s1 - 1) .. good:sub(s2, s2 + 9) .. good:sub(s1 + 10, s2 - 1) ..
		good:sub(s1, s1 + 9) .. good:sub(s2 + 10)
	t.eq(#bad, #good, "same size")
	t.eq(select("#", core.newproto(bad)), 0, "descending tags refused")
end)

---------------------------------------------------------------------------
-- Messages

local SCHEMA = [[
.Person { name 0 : string age 1 : integer marital 2 : boolean children 3 : *Person }
.Data { numbers 0 : *integer bools 1 : *boolean number 2 : integer bignumber 3 : integer
	double 4 : double doubles 5 : *double fpn 6 : integer(2) }
.G { a 0 : integer z 20000 : integer }
.Item { id 0 : integer name 1 : string }
.KV { k 0 : string v 1 : integer }
.Bag { items 0 : *Item(id) kv 1 : *KV() strs 2 : *string bin 5 : binary sub 6 : Item
	big 1000 : integer }
.Dec { d 0 : *integer(3) one 1 : integer(0) }
]]

local sp = sproto.parse(SCHEMA)

local VECTORS = {
	{ "Person", { name = "Alice", age = 13, marital = false },
		"03 00 00 00 1c 00 02 00 05 00 00 00 41 6c 69 63 65" },
	{ "Person", { name = "Bob", age = 40, children = { { name = "Alice", age = 13 },
		{ name = "Carol", age = 5 } } },
		[[04 00 00 00 52 00 01 00 00 00 03 00 00 00 42 6f 62 26 00 00 00 0f 00 00 00 02 00 00 00
		1c 00 05 00 00 00 41 6c 69 63 65 0f 00 00 00 02 00 00 00 0c 00 05 00 00 00 43 61 72 6f
		6c]] },
	{ "Data", { numbers = { 1, 2, 3, 4, 5 } },
		[[01 00 00 00 15 00 00 00 04 01 00 00 00 02 00 00 00 03 00 00 00 04 00 00 00 05 00 00
		00]] },
	{ "Data", { numbers = { 1, -1, 2 ^ 40 // 1 } },
		[[01 00 00 00 19 00 00 00 08 01 00 00 00 00 00 00 00 ff ff ff ff ff ff ff ff 00 00 00
		00 00 01 00 00]] },
	{ "Data", { bools = { false, true, false } }, "02 00 01 00 00 00 03 00 00 00 00 01 00" },
	{ "Data", { number = 100000, bignumber = -10000000000 },
		[[03 00 03 00 00 00 00 00 04 00 00 00 a0 86 01 00 08 00 00 00 00 1c f4 ab fd ff ff
		ff]] },
	{ "Data", { double = 0.01171875, doubles = { 0.01171875, 23, 4 } },
		[[03 00 07 00 00 00 00 00 08 00 00 00 00 00 00 00 00 00 88 3f 19 00 00 00 08 00 00 00
		00 00 00 88 3f 00 00 00 00 00 00 37 40 00 00 00 00 00 00 10 40]] },
	{ "Data", { fpn = 1.82 }, "02 00 0b 00 6e 01" },
	{ "Data", { number = 0x7ffe, bignumber = 0x7fff },
		"03 00 03 00 fe ff 00 00 04 00 00 00 ff 7f 00 00" },
	{ "Data", { numbers = {}, bools = {}, doubles = {} },
		"04 00 00 00 00 00 05 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00" },
	{ "Data", { number = 3.0 }, "02 00 03 00 08 00" },
	{ "Data", { number = "12" }, "02 00 03 00 1a 00" },
	{ "Person", { children = { {}, { marital = true } } },
		[[02 00 05 00 00 00 10 00 00 00 02 00 00 00 00 00 06 00 00 00 02 00 03 00
		04 00]] },
	{ "G", { a = 1, z = 2 }, "03 00 04 00 3d 9c 06 00" },
	{ "Data", {}, "00 00" },
}

t.case("messages: every worked example, byte-exact", function()
	for i, v in ipairs(VECTORS) do
		hexeq(sp:encode(v[1], v[2]), v[3], string.format("vector %d (%s)", i, v[1]))
	end
end)

-- The value a decode gives back for an encoded value (numbers normalised).
local function normal(v)
	if type(v) == "table" then
		local o = {}
		for k, x in pairs(v) do
			o[k] = normal(x)
		end
		return o
	end
	if math.type(v) == "float" and math.tointeger(v) then
		return math.tointeger(v)
	end
	if type(v) == "string" and tonumber(v) then
		return tonumber(v)
	end
	return v
end

t.case("messages: every worked example decodes back", function()
	for i, v in ipairs(VECTORS) do
		local bin = unhex(v[3])
		local got, used = sp:decode(v[1], bin)
		t.eq(used, #bin, string.format("vector %d bytes used", i))
		if v[2].fpn then
			t.eq(got.fpn, 1.82, "decimal decodes as a float")
			t.eq(math.type(got.fpn), "float", "float")
		elseif v[2].double then
			t.same(got, v[2], "doubles")
			t.eq(math.type(got.doubles[2]), "float", "doubles are floats")
		else
			t.same(normal(got), normal(v[2]), string.format("vector %d", i))
		end
		-- trailing bytes are ignored and not counted
		local _, used2 = sp:decode(v[1], bin .. "\0\0\0xyz")
		t.eq(used2, #bin, "trailing bytes")
	end
end)

t.case("messages: keyed array, map, strings, binary, big tag (95 bytes)", function()
	local v = { items = { [10] = { id = 10, name = "sword" } }, kv = { hp = 100 },
		strs = { "a", "", "bc" }, bin = "\0\1\2", sub = { id = 1 }, big = 7 }
	local bin = sp:encode("Bag", v)
	hexeq(bin, [[08 00 00 00 00 00 00 00 03 00 00 00 00 00 c1 07 10 00
		13 00 00 00 0f 00 00 00 02 00 16 00 00 00 05 00 00 00 73 77 6f 72 64
		10 00 00 00 0c 00 00 00 02 00 00 00 ca 00 02 00 00 00 68 70
		0f 00 00 00 01 00 00 00 61 00 00 00 00 02 00 00 00 62 63
		03 00 00 00 00 01 02
		04 00 00 00 01 00 04 00]], "Bag")
	t.eq(#bin, 95, "size")
	t.same(sp:decode("Bag", bin), v, "decodes back")
	-- several entries: order is free, the decoded tables are equal
	local many = { items = { [1] = { id = 1 }, [2] = { id = 2, name = "x" }, [3] = { id = 3 } },
		kv = { a = 1, b = 2, c = 3 } }
	t.same(sp:decode("Bag", sp:encode("Bag", many)), many, "many entries")
	-- keys of the Lua table do not matter for a keyed array, the element's key does
	local renamed = sp:decode("Bag", sp:encode("Bag", { items = { { id = 5 }, { id = 6 } } }))
	t.same(renamed, { items = { [5] = { id = 5 }, [6] = { id = 6 } } }, "keyed by id")
	-- __pairs is honoured for keyed arrays and maps
	local proxy = setmetatable({}, { __pairs = function()
		return next, { x = 9 }, nil
	end })
	t.same(sp:decode("Bag", sp:encode("Bag", { kv = proxy })), { kv = { x = 9 } }, "__pairs")
end)

t.case("messages: integers at every size boundary", function()
	local cases = {
		{ 0, "02 00 03 00 02 00" },
		{ 0x7ffe, "02 00 03 00 fe ff" },
		{ 0x7fff, "02 00 03 00 00 00 04 00 00 00 ff 7f 00 00" },
		{ -1, "02 00 03 00 00 00 04 00 00 00 ff ff ff ff" },
		{ 0x7fffffff, "02 00 03 00 00 00 04 00 00 00 ff ff ff 7f" },
		{ -0x80000000, "02 00 03 00 00 00 04 00 00 00 00 00 00 80" },
		{ 0x80000000, "02 00 03 00 00 00 08 00 00 00 00 00 00 80 00 00 00 00" },
		{ math.mininteger, "02 00 03 00 00 00 08 00 00 00 00 00 00 00 00 00 00 80" },
	}
	for _, c in ipairs(cases) do
		local bin = sp:encode("Data", { number = c[1] })
		hexeq(bin, c[2], "number " .. c[1])
		t.eq(sp:decode("Data", bin).number, c[1], "decode " .. c[1])
	end
	-- arrays: i32 while every element fits, else all i64
	hexeq(sp:encode("Data", { numbers = { -0x80000000, 0x7fffffff } }),
		"01 00 00 00 09 00 00 00 04 00 00 00 80 ff ff ff 7f", "i32 array")
	local wide = { 1, 2, 3, 0x80000000, -5 }
	local bin = sp:encode("Data", { numbers = wide })
	t.eq(bin:byte(9), 8, "widened to 8")
	t.eq(#bin, 4 + 4 + 1 + 8 * 5, "size")
	t.same(sp:decode("Data", bin).numbers, wide, "widened array decodes")
end)

t.case("messages: decimals", function()
	t.eq(sp:decode("Data", sp:encode("Data", { fpn = -0.015 })).fpn, -0.02, "-0.015 -> -0.02")
	t.eq(sp:decode("Data", sp:encode("Data", { fpn = 0.005 })).fpn, 0.01, "half away from zero")
	t.eq(sp:decode("Data", sp:encode("Data", { fpn = "2.5" })).fpn, 2.5, "numeric string")
	t.eq(sp:decode("Data", sp:encode("Data", { fpn = "x" })).fpn, 0.0, "non-number is 0")
	t.eq(sp:decode("Data", sp:encode("Data", { fpn = 1e6 })).fpn, 1e6, "large")
	local d = sp:decode("Dec", sp:encode("Dec", { d = { 1.5, -2.25, 1e10 }, one = 7 }))
	t.same(d, { d = { 1.5, -2.25, 1e10 }, one = 7.0 }, "decimal array and integer(0)")
	t.eq(math.type(d.one), "float", "integer(0) decodes as a float")
	t.raises("out of the decimal range", sp.encode, sp, "Data", { fpn = 1e300 })
	t.raises("out of the decimal range", sp.encode, sp, "Data", { fpn = 0 / 0 })
end)

t.case("messages: doubles", function()
	for _, x in ipairs { 0.0, -0.0, 1.5, 1e308, math.huge, -math.huge, 5 } do
		local bin = sp:encode("Data", { double = x })
		t.eq(#bin, 2 + 4 + 4 + 8, "always a data item")
		local back = sp:decode("Data", bin).double
		t.eq(back, x + 0.0, "double " .. x)
		t.eq(math.type(back), "float", "float")
	end
	local nan = sp:decode("Data", sp:encode("Data", { double = 0 / 0 })).double
	t.ok(nan ~= nan, "NaN")
	t.eq(sp:decode("Data", sp:encode("Data", { double = "x" })).double, 0.0, "non-number is 0")
end)

t.case("messages: Lua values are read by ordinary indexing", function()
	local proxy = setmetatable({}, { __index = function(_, k)
		if k == "name" then
			return "Eve"
		end
	end })
	u.bytes(sp:encode("Person", proxy), sp:encode("Person", { name = "Eve" }), "__index")
	local arr = setmetatable({}, { __index = function(_, i)
		if i <= 3 then
			return i * 10
		end
	end })
	t.same(sp:decode("Data", sp:encode("Data", { numbers = arr })).numbers, { 10, 20, 30 },
		"array through __index")
	-- an encode inside a metamethod of another encode (each has its own buffer)
	local inner
	local nesting = setmetatable({}, { __index = function(_, k)
		if k == "name" then
			return "Alice"
		elseif k == "age" then -- after name's data item is written
			inner = sp:encode("Data", { numbers = { 1, 2, 3, 4, 5 } })
			return 13
		elseif k == "marital" then
			return false
		end
	end })
	hexeq(sp:encode("Person", nesting), VECTORS[1][3], "outer encode")
	hexeq(inner, VECTORS[3][3], "inner encode")
	-- a plain array stops at the first nil
	t.same(sp:decode("Data", sp:encode("Data", { numbers = { 1, 2, nil, 4 } })).numbers, { 1, 2 },
		"stops at nil")
	-- non-schema keys are ignored
	hexeq(sp:encode("Person", { age = 13, other = "x", [1] = 2 }), "02 00 01 00 1c 00", "ignored")
end)

t.case("messages: type errors", function()
	t.raises("Data.number[0] is not an integer (Is a number)", sp.encode, sp, "Data",
		{ number = 1.5 })
	t.raises("Data.number[0] is not an integer (Is a string)", sp.encode, sp, "Data",
		{ number = "x" })
	t.raises("Data.numbers[3] is not an integer (Is a table)", sp.encode, sp, "Data",
		{ numbers = { 1, 2, {} } })
	t.raises("Person.marital[0] is not a boolean (Is a number)", sp.encode, sp, "Person",
		{ marital = 1 })
	t.raises("Data.bools[2] is not a boolean (Is a string)", sp.encode, sp, "Data",
		{ bools = { true, "x" } })
	t.raises("Person.name[0] is not a string (Is a number)", sp.encode, sp, "Person",
		{ name = 5 })
	t.raises("Bag.strs[1] is not a string (Is a boolean)", sp.encode, sp, "Bag",
		{ strs = { true } })
	t.raises("Data.numbers(1) should be a table or an userdata with metamethods (Is a number)",
		sp.encode, sp, "Data", { numbers = 5 })
	t.raises("attempt to index a number value", sp.encode, sp, "Bag", { sub = 5 })
	t.raises("attempt to index a boolean value", sp.encode, sp, "Person", { children = { true } })
	t.raises("type not found", sp.encode, sp, "Nope", {})
	t.raises("table expected", sp.encode, sp, "Person", nil)
end)

t.case("messages: a type of many fields, with gaps", function()
	-- 40 fields at tags 0, 3, 6, ...: more field words than the encoder keeps on the C stack
	local fields, v, want_words = {}, {}, {}
	for i = 0, 39 do
		fields[#fields + 1] = string.format("f%d %d : integer", i, i * 3)
		v["f" .. i] = i
	end
	local big = sproto.parse(".Big { " .. table.concat(fields, " ") .. " }")
	local bin = big:encode("Big", v)
	want_words[1] = string.pack("<I2", 79) .. string.pack("<I2", 2)
	for i = 1, 39 do
		want_words[#want_words + 1] = "\3\0" .. string.pack("<I2", (i + 1) * 2)
	end
	u.bytes(bin, table.concat(want_words), "40 fields, skips of 2")
	t.same(big:decode("Big", bin), v, "round trip")
	v.f5, v.f39 = nil, "x"
	t.raises("Big.f39[0] is not an integer (Is a string)", big.encode, big, "Big", v)
	v.f39 = 1 << 40
	t.same(big:decode("Big", big:encode("Big", v)), v, "a data item after many words")
end)

t.case("messages: nesting depth 64 and the 16 MiB limit", function()
	local function chain(n)
		local top = {}
		local p = top
		for _ = 2, n do
			p.children = { {} }
			p = p.children[1]
		end
		return top
	end
	local ok = sp:encode("Person", chain(64))
	t.eq(#sp:decode("Person", ok).children, 1, "64 levels")
	t.raises("The table is too deep", sp.encode, sp, "Person", chain(65))
	-- a cycle is caught by the same limit
	local c = {}
	c.children = { c }
	t.raises("The table is too deep", sp.encode, sp, "Person", c)
	-- a hand-made 65-level message is refused by the decoder
	local function nested(levels)
		local msg = "\0\0"
		for _ = 2, levels do
			msg = "\2\0\5\0\0\0" .. string.pack("<s4", string.pack("<s4", msg))
		end
		return msg
	end
	t.eq(#sp:decode("Person", nested(64)).children, 1, "64 levels decode")
	local msg = nested(65)
	t.raises("The table is too deep", sp.decode, sp, "Person", msg)
	local big = string.rep("x", 16 * 1024 * 1024)
	t.raises("object is too large (>16777216)", sp.encode, sp, "Person", { name = big })
	local fits = sp:encode("Person", { name = big:sub(1, 16 * 1024 * 1024 - 20) })
	t.eq(#fits, 16 * 1024 * 1024 - 20 + 8, "just under the limit")
end)

---------------------------------------------------------------------------
-- 0-packing

local PACK = {
	{ "08 00 00 00 03 00 02 00 19 00 00 00 aa 01 00 00", "51 08 03 02 31 19 aa 01" },
	{ string.rep("8a ", 30), "ff 03" .. string.rep(" 8a", 30) .. " 00 00" },
	{ "01 02 03 04 05 06 07 08 01 02 03 04 05 06 07 00",
		"ff 01 01 02 03 04 05 06 07 08 01 02 03 04 05 06 07 00" },
	{ "01 02 03 04 05 06 07 00 01 02 03 04 05 06 07 08",
		"7f 01 02 03 04 05 06 07 ff 00 01 02 03 04 05 06 07 08" },
	{ string.rep("ff ", 16) .. "01 02 03 04 05 06 00 00",
		"ff 02" .. string.rep(" ff", 16) .. " 01 02 03 04 05 06 00 00" },
	{ string.rep("ff ", 16) .. "01 02 03 04 05 00 00 00",
		"ff 01" .. string.rep(" ff", 16) .. " 1f 01 02 03 04 05" },
	{ "31 32 33 34 35 36 37 38 39", "ff 00 31 32 33 34 35 36 37 38 01 39" },
	{ "01 00 03", "05 01 03" },
	{ string.rep("00 ", 16), "00 00" },
	{ "", "" },
}

t.case("pack: reference vectors", function()
	for i, v in ipairs(PACK) do
		local src = unhex(v[1])
		local packed = sproto.pack(src)
		hexeq(packed, v[2], "pack vector " .. i)
		local back = sproto.unpack(packed)
		t.eq(#back % 8, 0, "unpacked size is a multiple of 8")
		u.bytes(back:sub(1, #src), src, "unpack vector " .. i)
		t.eq(back:sub(#src + 1), string.rep("\0", #back - #src), "padding is zeros")
	end
	local x = string.rep("x", 2064)
	local packed = sproto.pack(x)
	t.eq(#packed, 2068, "2064 x: size")
	hexeq(packed:sub(1, 2), "ff ff", "first run of 256 words")
	hexeq(packed:sub(2051, 2052), "ff 01", "second run of 2 words")
	t.eq(sproto.unpack(packed), x, "2064 x back")
end)

t.case("pack: unpack vectors and errors, pointer arguments", function()
	hexeq(sproto.unpack(unhex("00")), "00 00 00 00 00 00 00 00", "00")
	hexeq(sproto.unpack(unhex("01 05")), "05 00 00 00 00 00 00 00", "01 05")
	t.raises("Invalid unpack stream", sproto.unpack, unhex("01"))
	t.raises("Invalid unpack stream", sproto.unpack, unhex("ff"))
	t.raises("Invalid unpack stream", sproto.unpack, unhex("ff 00 61 62 63"))
	t.raises("Invalid unpack stream", sproto.unpack, unhex("03 01"))
	-- packed forms of the worked examples
	local forms = {
		{ 1, "51 03 1c 02 f1 05 41 6c 69 63 01 65" },
		{ 3, "11 01 15 23 04 01 02 22 03 04 02 05" },
		{ 5, "45 02 01 03 08 01" },
		{ 8, "35 02 0b 6e 01" },
		{ 15, "00" },
	}
	for _, f in ipairs(forms) do
		local v = VECTORS[f[1]]
		hexeq(sp:pencode(v[1], v[2]), f[2], "packed vector " .. f[1])
		local got = sp:pdecode(v[1], unhex(f[2]))
		t.same(normal(got), normal(v[2]), "pdecode " .. f[1])
	end
	-- (pointer, size) arguments: a C buffer from skynet.pack
	local skynet = require "skynet"
	local msg, sz = skynet.pack("ignored")
	local s = skynet.tostring(msg, sz)
	t.eq(sproto.pack(msg, sz), sproto.pack(s), "pack(ptr, sz)")
	local p2, sz2 = skynet.pack("ab") -- 14 61 62: a valid packed stream
	t.eq(sproto.unpack(p2, sz2), sproto.unpack(skynet.tostring(p2, sz2)), "unpack(ptr, sz)")
	skynet.trash(msg, sz)
	skynet.trash(p2, sz2)
	t.raises("Need a string or userdata", sproto.pack, 5)
end)

---------------------------------------------------------------------------
-- Defaults and the object API

t.case("default tables", function()
	t.same(sp:default("Data"), { number = 0, bignumber = 0, fpn = 0.0, double = 0.0,
		numbers = { __array = 0 }, bools = { __array = false }, doubles = { __array = 0.0 } },
		"Data")
	t.same(sp:default("Bag"), { items = { __array = "Item" }, kv = { __array = "KV" },
		strs = { __array = "" }, bin = "", sub = { __type = "Item" }, big = 0 }, "Bag")
	local d = sp:default("Data")
	t.eq(math.type(d.number), "integer", "integer default")
	t.eq(math.type(d.fpn), "float", "decimal default")
	t.eq(math.type(d.double), "float", "double default")
	local rp = sproto.parse([[.package { type 0 : integer session 1 : integer }
		foo 1 { request { a 0 : integer } } bar 2 { response nil } baz 3 { response { s 0 : string } }]])
	t.same(rp:default("foo", "REQUEST"), { a = 0 }, "request default")
	t.eq(select("#", rp:default("foo", "RESPONSE")), 0, "no response: nothing")
	t.eq(select("#", rp:default("bar", "RESPONSE")), 0, "response nil: nothing")
	t.same(rp:default("baz", "RESPONSE"), { s = "" }, "response default")
	t.raises("Invalid type", rp.default, rp, "foo", "OTHER")
end)

t.case("object API", function()
	t.eq(sp:exist_type("Person"), true, "exist_type")
	t.eq(sp:exist_type("Nope"), false, "exist_type missing")
	local rp = sproto.parse([[.package { type 0 : integer session 1 : integer }
		foo 1 { request { a 0 : integer } response { b 0 : string } }
		bar 2 { response nil } baz 3 {}]])
	t.eq(rp:exist_proto("foo"), true, "exist_proto name")
	t.eq(rp:exist_proto(2), true, "exist_proto tag")
	t.eq(rp:exist_proto("nope"), false, "exist_proto missing")
	t.eq(rp:exist_proto(9), false, "exist_proto missing tag")
	local req, tag = rp:request_encode("foo", { a = 5 })
	hexeq(req, "01 00 0c 00", "request_encode")
	t.eq(tag, 1, "tag")
	local r2, tag2 = rp:request_encode("baz", { a = 5 })
	t.eq(r2, "", "no request type")
	t.eq(tag2, 3, "baz tag")
	t.eq(rp:response_encode("baz", {}), "", "no response type")
	t.eq(rp:response_encode("bar", nil), "", "response nil")
	t.raises("nil expected, got table", rp.response_encode, rp, "bar", {})
	local v, name = rp:request_decode(1, req)
	t.same(v, { a = 5 }, "request_decode")
	t.eq(name, "foo", "request_decode name")
	local nv, nname = rp:request_decode("baz", "")
	t.eq(nv, nil, "request_decode without request type")
	t.eq(nname, "baz", "baz")
	local resp = rp:response_encode("foo", { b = "hi" })
	local rv, used = rp:response_decode("foo", resp)
	t.same(rv, { b = "hi" }, "response_decode")
	t.eq(used, #resp, "response_decode used")
	t.eq(select("#", rp:response_decode("baz", "")), 0, "response_decode none")
	t.eq(select("#", rp:response_decode("bar", "")), 0, "response_decode response nil")
	local q = sproto.queryproto(rp, "foo")
	t.eq(q.name, "foo", "queryproto name")
	t.eq(q.tag, 1, "queryproto tag")
	t.eq(sproto.queryproto(rp, 1), q, "cached by tag")
	t.raises("nope not found", rp.request_encode, rp, "nope", {})
	t.raises("99 not found", rp.request_encode, rp, 99, {})
	-- decode's trailing table argument receives the fields
	local into = { keep = true }
	local got = core.decode(core.querytype(rp.__cobj, "foo.request"), req, into)
	t.eq(got, into, "into is returned")
	t.same(into, { keep = true, a = 5 }, "into filled")
	local _, _, nullresp = core.protocol(rp.__cobj, "bar")
	t.eq(select("#", core.decode(nullresp, "")), 0, "decode(NULL) gives nothing")
	t.raises("Need a string or userdata", core.decode, core.querytype(rp.__cobj, "foo.request"),
		5)
	-- the schema printed back in the schema language (to stdout)
	core.dumpproto(rp.__cobj)
end)

t.case("sproto objects free their schema when collected; sharenew ones do not", function()
	local bin = parser.parse(SCHEMA)
	for _ = 1, 50 do
		local o = sproto.new(bin)
		o:encode("Person", { name = "x" })
	end
	collectgarbage()
	local cobj = core.newproto(bin)
	sproto.sharenew(cobj) -- garbage at once
	collectgarbage()
	local again = sproto.sharenew(cobj)
	hexeq(again:encode("Person", { age = 13 }), "02 00 01 00 1c 00", "still valid")
	core.deleteproto(cobj)
end)

t.start()
