-- bson (luaclib/bson.so): every constructor and type, every reference example
-- byte for byte, the encoder's array/document rules and ordering, in-place
-- updates, bson.type, every encode and decode error, and a seeded loop of
-- truncated and random documents that must decode or fail with a known error.
local t = require "testlib"
local bson = require "bson"

local spack = string.pack

-- Under ThreadSanitizer every Lua error thrown from the (instrumented) bson
-- module through the uninstrumented liblua leaves frames on TSan's shadow
-- stack, which aborts past 65536 frames in one thread: the single-threaded
-- decode loops stay short there, and run whole in the other builds.
local UNDER_TSAN <const> = t.under_tsan
local MUTATIONS <const> = UNDER_TSAN and 300 or 3000
local RANDOMS <const> = UNDER_TSAN and 200 or 2000

local unhex = t.unhex
local function hex(s)
	return t.hex(s, " ")
end

local function bytes(got, want_hex, what)
	local want = unhex(want_hex)
	if got ~= want then
		error(string.format("%s: got [%s], want [%s]", what, hex(got), hex(want)), 2)
	end
end

local function doc_bytes(doc)
	return tostring(doc)
end

-- A document from raw element bytes (the length and final zero added).
local function rawdoc(elements)
	return spack("<i4", #elements + 5) .. elements .. "\0"
end

-- Decodes bytes held in a Lua string (through a pointer to them).
local function decode_bytes(s)
	return bson.decode(bson.to_lightuserdata(s))
end

local function bstr(s)
	return spack("<i4", #s + 1) .. s .. "\0"
end

local function len_meta(n, f)
	return setmetatable({}, {
		__len = function()
			return n
		end,
		__index = function(_, i)
			return f(i)
		end,
	})
end

t.case("exports and constants", function()
	for _, name in ipairs({ "encode", "encode_order", "decode", "date", "timestamp", "regex", "binary",
		"objectid", "int64", "to_lightuserdata", "type" }) do
		t.eq(type(bson[name]), "function", name)
	end
	bytes(bson.null, "00 0a", "null")
	bytes(bson.minkey, "00 ff", "minkey")
	bytes(bson.maxkey, "00 7f", "maxkey")
end)

t.case("reference examples, byte for byte", function()
	local E = bson.encode_order
	bytes(doc_bytes(bson.encode({ a = 1 })), "0c 00 00 00 10 61 00 01 00 00 00 00", "encode{a=1}")
	bytes(doc_bytes(E("a", 1, "b", "x")),
		"15 00 00 00 10 61 00 01 00 00 00 02 62 00 02 00 00 00 78 00 00", "a,b")
	bytes(doc_bytes(E("n", 1.5, "t", true, "f", false)),
		"18 00 00 00 01 6e 00 00 00 00 00 00 00 f8 3f 08 74 00 01 08 66 00 00 00", "n,t,f")
	bytes(doc_bytes(E("big", 1 << 40, "neg", -1, "i32max", 2147483647, "i32over", 2147483648)),
		"38 00 00 00 12 62 69 67 00 00 00 00 00 00 01 00 00 10 6e 65 67 00 ff ff ff ff 10 69 33 32 "
			.. "6d 61 78 00 ff ff ff 7f 12 69 33 32 6f 76 65 72 00 00 00 00 80 00 00 00 00 00",
		"integers")
	bytes(doc_bytes(E("arr", { 1, 2, 3 })),
		"24 00 00 00 04 61 72 72 00 1a 00 00 00 10 30 00 01 00 00 00 10 31 00 02 00 00 00 10 32 00 "
			.. "03 00 00 00 00 00", "array")
	bytes(doc_bytes(E("n", bson.null)), "08 00 00 00 0a 6e 00 00", "null")
	bytes(doc_bytes(E("d", bson.date(1700000000))),
		"10 00 00 00 09 64 00 00 68 e5 cf 8b 01 00 00 00", "date")
	bytes(doc_bytes(E("t", bson.timestamp(1700000000, 5))),
		"10 00 00 00 11 74 00 05 00 00 00 00 f1 53 65 00", "timestamp")
	bytes(doc_bytes(E("r", bson.regex("^a.*", "i"))),
		"0f 00 00 00 0b 72 00 5e 61 2e 2a 00 69 00 00", "regex")
	bytes(doc_bytes(E("b", bson.binary("\1\2"))),
		"0f 00 00 00 05 62 00 02 00 00 00 00 01 02 00", "binary")
	bytes(doc_bytes(E("o", bson.objectid("0123456789abcdef01234567"))),
		"14 00 00 00 07 6f 00 01 23 45 67 89 ab cd ef 01 23 45 67 00", "objectid")
	bytes(doc_bytes(E("e", E("z", 1))),
		"14 00 00 00 03 65 00 0c 00 00 00 10 7a 00 01 00 00 00 00 00", "embedded")
	bytes(doc_bytes(E("l", len_meta(2, function(i)
		return i * 10
	end))), "1b 00 00 00 04 6c 00 13 00 00 00 10 30 00 0a 00 00 00 10 31 00 14 00 00 00 00 00", "__len")
	bytes(doc_bytes(E(1, "v")), "0e 00 00 00 02 31 00 02 00 00 00 76 00 00", "number key")
end)

t.case("reference constructor strings", function()
	bytes(bson.date(1700000000), "00 09 00 f1 53 65", "date")
	bytes(bson.int64(-2), "00 12 fe ff ff ff ff ff ff ff", "int64")
	bytes(bson.timestamp(1700000000, 5), "00 11 05 00 00 00 00 f1 53 65", "timestamp")
	bytes(bson.regex("x"), "00 0b 78 00 00", "regex")
	bytes(bson.binary("\1\2"), "00 05 00 01 02", "binary")
	-- timestamp(sec) always has increment 0, even after counter-driven calls
	for _ = 1, 3 do
		bytes(bson.timestamp(100), "00 11 00 00 00 00 64 00 00 00", "timestamp(100)")
		bson.timestamp(100, nil)
	end
end)

t.case("reference in-place update", function()
	local doc = bson.encode_order("a", 1, "b", 2.5, "c", true, "d", bson.date(1700000000), "o",
		bson.objectid("0123456789abcdef01234567"))
	t.eq(doc:makeindex(), doc, "makeindex returns the document")
	doc.a = 7
	doc.b = 3.25
	doc.c = false
	doc.d = bson.date(1)
	doc.o = bson.objectid("ffffffffffffffffffffffff")
	bytes(doc_bytes(doc), "35 00 00 00 10 61 00 07 00 00 00 01 62 00 00 00 00 00 00 00 0a 40 08 63 "
		.. "00 00 09 64 00 e8 03 00 00 00 00 00 00 07 6f 00 ff ff ff ff ff ff ff ff ff ff ff ff 00",
		"updated")
	t.same(doc:decode(), { a = 7, b = 3.25, c = false, d = bson.date(1),
		o = bson.objectid("ffffffffffffffffffffffff") }, "decoded after update")
end)

t.case("constructors: date, timestamp, int64 truncation and counters", function()
	bytes(bson.date((1 << 32) + 5), "00 09 05 00 00 00", "date truncated to 32 bits")
	bytes(bson.date(-1), "00 09 ff ff ff ff", "date(-1)")
	-- encode reads the date payload as u32 seconds
	bytes(doc_bytes(bson.encode_order("d", bson.date(-1))),
		"10 00 00 00 09 64 00 " .. hex(spack("<i8", 4294967295 * 1000)) .. " 00", "date u32 * 1000")
	bytes(bson.timestamp((1 << 32) + 1, (1 << 32) + 2), "00 11 02 00 00 00 01 00 00 00", "truncated")
	bytes(bson.timestamp(9, 0xffffffff), "00 11 ff ff ff ff 09 00 00 00", "inc max")
	local a = select(3, bson.type(bson.timestamp(1, nil)))
	local b = select(3, bson.type(bson.timestamp(1, nil)))
	t.eq(b, a + 1, "timestamp(sec, nil) counts up")
	bytes(bson.int64(math.mininteger), "00 12 00 00 00 00 00 00 00 80", "int64 min")
	bytes(bson.int64(7), "00 12 07 00 00 00 00 00 00 00", "int64(7)")
	bytes(bson.regex("a", "imx"), "00 0b 61 00 69 6d 78 00", "regex options")
	bytes(bson.binary(""), "00 05 00", "empty binary")
	t.raises("number expected", bson.date, "x")
	t.raises("number has no integer representation", bson.int64, 1.5)
	t.raises("string expected", bson.regex, nil)
	t.raises("string expected", bson.binary, {})
end)

t.case("constructors: objectid", function()
	bytes(bson.objectid("zzZZ00090a0A0b0B0f0F0g0G"), "00 07 33 33 00 09 0a 0a 0b 0b 0f 0f 10 10",
		"digit values")
	bytes(bson.objectid("--..!!  ~~00112233445566"), "00 07 00 00 00 00 00 00 11 22 33 44 55 66",
		"other characters are 0")
	t.raises("Invalid objectid 0123", bson.objectid, "0123")
	t.raises("Invalid objectid 12", bson.objectid, 12)
	t.raises("Invalid objectid " .. string.rep("a", 25), bson.objectid, string.rep("a", 25))
	local seen = {}
	local now = os.time()
	local last
	for i = 1, 1000 do
		local id = bson.objectid()
		t.eq(#id, 14, "new id size")
		t.eq(id:sub(1, 2), "\0\7", "new id tag")
		t.ok(not seen[id], "new ids are unique")
		seen[id] = true
		local sec = string.unpack(">I4", id, 3)
		t.ok(sec >= now - 1 and sec <= now + 60, "new id starts with the time")
		local counter = string.unpack(">I3", id, 12)
		if last then
			t.eq(counter, (last + 1) & 0xffffff, "counter counts up")
		end
		last = counter
		if i == 1 then
			local name, h = bson.type(id)
			t.eq(name, "objectid", "type of a new id")
			t.eq(bson.objectid(h), id, "hex round trip")
		end
	end
end)

t.case("bson.type", function()
	local function types(v)
		return table.pack(bson.type(v))
	end
	t.same(types(1), { n = 2, "number", 1 }, "number")
	t.same(types(1.5), { n = 2, "number", 1.5 }, "float")
	t.same(types(false), { n = 2, "boolean", false }, "boolean")
	local tab = {}
	t.same(types(tab), { n = 2, "table", tab }, "table")
	t.same(types("abc"), { n = 2, "string", "abc" }, "string")
	t.same(types("\0"), { n = 2, "string", "\0" }, "one zero byte is a string")
	t.same(types(""), { n = 2, "string", "" }, "empty string")
	t.same(types(nil), { n = 1, "nil" }, "nil")
	t.same(types(bson.null), { n = 1, "nil" }, "null")
	t.same(types(bson.minkey), { n = 1, "minkey" }, "minkey")
	t.same(types(bson.maxkey), { n = 1, "maxkey" }, "maxkey")
	t.same(types(bson.binary("\1\0\2")), { n = 3, "binary", "\1\0\2", 0 }, "binary")
	t.same(types("\0\5\x80xy"), { n = 3, "binary", "xy", 0x80 }, "binary subtype")
	t.same(types(bson.objectid("0123456789ABCDEF01234567")),
		{ n = 2, "objectid", "0123456789abcdef01234567" }, "objectid lowercase")
	t.same(types(bson.date(1700000000)), { n = 2, "date", 1700000000 }, "date")
	t.same(types(bson.date(-5)), { n = 2, "date", -5 }, "date is signed")
	t.same(types(bson.timestamp(1700000000, 5)), { n = 3, "timestamp", 1700000000, 5 }, "timestamp")
	t.same(types(bson.timestamp(0xffffffff, 0xfffffffe)), { n = 3, "timestamp", 0xffffffff,
		0xfffffffe }, "timestamp unsigned")
	t.same(types(bson.regex("^a", "i")), { n = 3, "regex", "^a", "i" }, "regex")
	t.same(types(bson.regex("^a")), { n = 3, "regex", "^a", "" }, "regex no options")
	t.same(types("\0\11ab\0cd"), { n = 3, "regex", "ab", "cd" }, "regex unterminated options")
	t.same(types(bson.int64(-2)), { n = 2, "int64", -2 }, "int64")
	for _, ty in ipairs({ 0x0c, 0x0d, 0x0e, 0x0f }) do
		t.same(types("\0" .. string.char(ty) .. "raw\0"), { n = 2, "unsupported", "raw\0" },
			"unsupported " .. ty)
	end
	t.raises("Invalid regex", bson.type, "\0\11abc")
	t.raises("Invalid subtype 6", bson.type, "\0\6")
	t.raises("Invalid subtype 19", bson.type, "\0\19xx")
	t.raises("Invalid subtype 1", bson.type, "\0\1")
	t.raises("Invalid date", bson.type, "\0\9abc")
	t.raises("Invalid timestamp", bson.type, "\0\17abc")
	t.raises("Invalid int64", bson.type, "\0\18abc")
	t.raises("Invalid object id abc", bson.type, "\0\7abc")
	t.raises("Invalid binary", bson.type, "\0\5")
	t.raises("Invalid type function", bson.type, print)
	t.raises("Invalid type thread", bson.type, coroutine.create(print))
	t.raises("Invalid type userdata", bson.type, bson.encode({}))
end)

t.case("encode: value mapping", function()
	local function one(v)
		return doc_bytes(bson.encode_order("k", v))
	end
	local function el(ty, payload)
		return hex(rawdoc(string.char(ty) .. "k\0" .. payload))
	end
	bytes(one(-2147483648), el(0x10, spack("<i4", -2147483648)), "int32 min")
	bytes(one(-2147483649), el(0x12, spack("<i8", -2147483649)), "below int32")
	bytes(one(math.maxinteger), el(0x12, spack("<i8", math.maxinteger)), "maxinteger")
	bytes(one(1.0), el(0x01, spack("<d", 1.0)), "integral float stays a double")
	bytes(one(math.huge), el(0x01, spack("<d", math.huge)), "inf")
	bytes(one(-0.0), el(0x01, spack("<d", -0.0)), "-0.0")
	local nan = one(0 / 0)
	t.eq(#nan, 16, "NaN is a double")
	t.eq(nan:byte(5), 0x01, "NaN type")
	bytes(one(true), el(0x08, "\1"), "true")
	bytes(one(""), el(0x02, bstr("")), "empty string")
	bytes(one("a\0b"), el(0x02, bstr("a\0b")), "embedded zero in a value")
	bytes(one("\0"), el(0x02, bstr("\0")), "one zero byte is an ordinary string")
	bytes(one(bson.minkey), el(0xff, ""), "minkey")
	bytes(one(bson.maxkey), el(0x7f, ""), "maxkey")
	bytes(one(bson.int64(5)), el(0x12, spack("<i8", 5)), "int64 of a small value")
	bytes(one("\0\5\x80xy"), el(0x05, spack("<i4", 2) .. "\x80xy"), "binary subtype kept")
	bytes(one(bson.timestamp(7)), el(0x11, spack("<I4I4", 0, 7)), "timestamp")
	bytes(one({}), el(0x03, rawdoc("")), "empty table is a document")
	local long = string.rep("x", 5000)
	bytes(one(long), el(0x02, bstr(long)), "a string past the inline buffer")
	-- legacy values are copied as decoded
	local code = "\0\13" .. bstr("f()")
	bytes(one(code), el(0x0d, bstr("f()")), "jscode")
	bytes(one("\0\14" .. bstr("s")), el(0x0e, bstr("s")), "symbol")
	local ptr = bstr("ns") .. string.rep("\1", 12)
	bytes(one("\0\12" .. ptr), el(0x0c, ptr), "dbpointer")
	local scope = rawdoc("\16x\0" .. spack("<i4", 1))
	local cws = spack("<i4", 4 + #bstr("f") + #scope) .. bstr("f") .. scope
	bytes(one("\0\15" .. cws), el(0x0f, cws), "code_w_s")
end)

t.case("encode: arrays and documents", function()
	local E = function(v)
		return doc_bytes(bson.encode_order("k", v))
	end
	local function el(ty, payload)
		return hex(rawdoc(string.char(ty) .. "k\0" .. payload))
	end
	local i32 = function(v)
		return spack("<i4", v)
	end
	-- first key 1: an array of rawlen elements; other keys dropped
	bytes(E({ 1, 2, x = 5 }), el(0x04, rawdoc("\16" .. "0\0" .. i32(1) .. "\16" .. "1\0" .. i32(2))),
		"other keys of an array are dropped")
	-- first key 2 <= rawlen: an array, and its nil element is a hole
	t.raises("Bson array has a hole (nil), Use bson.null instead", bson.encode_order, "k",
		{ nil, 2, 3 })
	bytes(E({ bson.null, 2 }), el(0x04, rawdoc("\10" .. "0\0" .. "\16" .. "1\0" .. i32(2))),
		"null in an array")
	-- first key above rawlen: a document, and a number key fails
	t.raises("Bson dictionary's key can't be number", bson.encode_order, "k", { [2] = 1 })
	t.raises("Bson dictionary's key can't be number", bson.encode_order, "k", { [1.5] = 1 })
	-- __len wins over everything, elements read with __index
	bytes(E(setmetatable({ x = 1 }, { __len = function()
		return 0
	end })), el(0x04, rawdoc("")), "__len 0")
	bytes(E(len_meta(-3, print)), el(0x04, rawdoc("")), "negative __len")
	t.raises("__len should return integer", bson.encode_order, "k", len_meta(1.0, print))
	t.raises("__len should return integer", bson.encode_order, "k", len_meta("1", print))
	t.raises("Bson array has a hole", bson.encode_order, "k", len_meta(3, function(i)
		return i < 3 and i or nil
	end))
	-- __pairs: a document in the order the iterator gives
	local function ordered(...)
		local keys = { ... }
		return setmetatable({ 1, 2, 3 }, { __pairs = function(tab)
			local i = 0
			return function()
				i = i + 1
				if keys[i] then
					return keys[i], i * 100
				end
			end, tab, nil
		end })
	end
	bytes(E(ordered("z", "a", "m")), el(0x03, rawdoc("\16z\0" .. i32(100) .. "\16a\0" .. i32(200)
		.. "\16m\0" .. i32(300))), "__pairs order")
	bytes(doc_bytes(bson.encode(ordered("b", "a"))),
		hex(rawdoc("\16b\0" .. i32(100) .. "\16a\0" .. i32(200))), "top-level __pairs order")
	-- the top level is a document even when it looks like an array
	t.raises("Bson dictionary's key can't be number", bson.encode, { 1, 2 })
	bytes(doc_bytes(bson.encode(len_meta(1, print))), "05 00 00 00 00", "the top level ignores __len")
	-- arrays of arrays and documents, and decode gives them back
	local v = { { 1, { 2 } }, { x = { y = "z" } }, bson.null }
	local got = bson.decode(bson.encode({ v = v }))
	t.same(got, { v = v }, "nested round trip")
	-- encode_order keeps argument order; array keys count from "0"
	local big = {}
	for i = 1, 12 do
		big[i] = i
	end
	local elements = {}
	for i = 1, 12 do
		elements[i] = "\16" .. tostring(i - 1) .. "\0" .. i32(i)
	end
	bytes(E(big), el(0x04, rawdoc(table.concat(elements))), "keys 0..11")
	bytes(doc_bytes(bson.encode_order("b", 1, "a", 2, "c", 3)),
		hex(rawdoc("\16b\0" .. i32(1) .. "\16a\0" .. i32(2) .. "\16c\0" .. i32(3))), "argument order")
	bytes(doc_bytes(bson.encode_order()), "05 00 00 00 00", "no pairs")
	bytes(doc_bytes(bson.encode({})), "05 00 00 00 00", "empty")
	bytes(doc_bytes(bson.encode_order(1.5, true)), hex(rawdoc("\0081.5\0\1")), "float key")
end)

t.case("encode: number keys from __pairs take their string form", function()
	local function proxy(data)
		return setmetatable({}, { __pairs = function()
			return next, data, nil
		end })
	end
	bytes(doc_bytes(bson.encode(proxy({ [7] = 8 }))), hex(rawdoc("\16" .. "7\0" .. spack("<i4", 8))),
		"integer key")
	bytes(doc_bytes(bson.encode_order("k", proxy({ [1.5] = true }))),
		hex(rawdoc("\3k\0" .. rawdoc("\8" .. "1.5\0\1"))), "float key")
	-- the iterator still gets the number back as its control value
	t.same(bson.decode(bson.encode(proxy({ [7] = 8, [9] = 10, [11] = proxy({ [1] = 2, [3] = 4 }) }))),
		{ ["7"] = 8, ["9"] = 10, ["11"] = { ["1"] = 2, ["3"] = 4 } }, "nested proxies")
	t.raises("Invalid key type : boolean", bson.encode, proxy({ [true] = 1 }))
	t.raises("Invalid utf8 string", bson.encode, proxy({ ["\xff"] = 1 }))
	-- without __pairs a number key stays an error
	t.raises("Bson dictionary's key can't be number", bson.encode, { [7] = 8 })
end)

t.case("encode: embedded documents", function()
	local inner = bson.encode_order("z", 1)
	local want = "14 00 00 00 03 65 00 0c 00 00 00 10 7a 00 01 00 00 00 00 00"
	bytes(doc_bytes(bson.encode_order("e", bson.to_lightuserdata(inner))), want, "light userdata")
	bytes(doc_bytes(bson.encode({ e = inner })), want, "encode with a userdata value")
	local s = doc_bytes(inner)
	bytes(doc_bytes(bson.encode_order("e", bson.to_lightuserdata(s))), want, "pointer to a string")
	local arr = bson.encode_order("a", { inner, inner })
	t.same(bson.decode(arr), { a = { { z = 1 }, { z = 1 } } }, "userdata inside an array")
	t.raises("Invalid bson block", bson.encode_order, "e", bson.to_lightuserdata(spack("<i4", 3)))
	t.raises("Invalid document end", bson.encode_order, "e", bson.to_lightuserdata("\5\0\0\0\1"))
	t.raises("userdata or string", bson.to_lightuserdata, 5)
end)

t.case("encode: errors", function()
	t.raises("table expected", bson.encode, "x")
	t.raises("table expected", bson.encode)
	t.raises("Invalid ordered dict", bson.encode_order, "a")
	t.raises("Invalid ordered dict", bson.encode_order, "a", 1, "b")
	t.raises("Argument 3 need a string", bson.encode_order, "a", 1, true, 2)
	t.raises("Argument 1 need a string", bson.encode_order, {}, 1)
	t.raises("Invalid key type : boolean", bson.encode, { [true] = 1 })
	t.raises("Invalid key type : table", bson.encode, { [{}] = 1 })
	t.raises("Bson dictionary's key can't be number", bson.encode, { [3] = 1 })
	t.raises("Invalid value type : function", bson.encode, { f = print })
	t.raises("Invalid value type : thread", bson.encode_order, "c", coroutine.create(print))
	t.raises("Bson array has a hole (nil), Use bson.null instead", bson.encode_order, "a", nil)
	t.raises("Invalid utf8 string", bson.encode, { ["\xff"] = 1 })
	t.raises("Invalid utf8 string", bson.encode_order, "\xc0\x80", 1)
	t.raises("Invalid utf8 string", bson.encode, { k = "\xc3" })
	t.raises("Bson key can't contain a zero byte", bson.encode, { ["a\0b"] = 1 })
	t.raises("Bson key can't contain a zero byte", bson.encode_order, "\0\10", 1)
	-- tagged strings
	t.raises("Invalid subtype 6", bson.encode_order, "u", "\0\6")
	t.raises("Invalid subtype 19", bson.encode_order, "u", "\0\19" .. string.rep("\0", 16))
	t.raises("Invalid subtype 1", bson.encode_order, "u", "\0\1" .. spack("<d", 1))
	t.raises("Invalid object id abc", bson.encode_order, "o", "\0\7abc")
	t.raises("Invalid date", bson.encode_order, "d", "\0\9abc")
	t.raises("Invalid timestamp", bson.encode_order, "t", "\0\17abc")
	t.raises("Invalid int64", bson.encode_order, "i", "\0\18abc")
	t.raises("Invalid binary", bson.encode_order, "b", "\0\5")
	t.raises("Invalid regex", bson.encode_order, "r", "\0\11ab")
	t.raises("Invalid regex", bson.encode_order, "r", "\0\11ab\0cd")
	t.raises("Invalid regex", bson.encode_order, "r", bson.regex("a\0b", "i"))
	t.raises("Invalid utf8 string", bson.encode_order, "r", bson.regex("\xff"))
	t.raises("Invalid utf8 string", bson.encode_order, "r", bson.regex("a", "\xff"))
	t.raises("Invalid bson string , length = 0", bson.encode_order, "j", "\0\13" .. spack("<i4", 0))
	t.raises("Invalid bson block", bson.encode_order, "j", "\0\13" .. spack("<i4", 9) .. "ab")
	t.raises("Invalid bson value of type 14", bson.encode_order, "s", "\0\14" .. bstr("s") .. "x")
	t.raises("Invalid bson block", bson.encode_order, "p", "\0\12" .. bstr("ns") .. "short")
	t.raises("Invalid bson block", bson.encode_order, "c", "\0\15" .. spack("<i4", 4))
	-- depth: 128 nested tables (the top one included) encode, 129 do not
	local function nest(n)
		local v = {}
		for _ = 2, n do
			v = { x = v }
		end
		return v
	end
	t.ok(bson.encode(nest(128)), "128 tables")
	t.raises("Too depth while encoding bson", bson.encode, nest(129))
	local arrays = {}
	for _ = 2, 129 do
		arrays = { arrays }
	end
	t.raises("Too depth while encoding bson", bson.encode_order, "a", arrays)
	local cycle = {}
	cycle.self = cycle
	t.raises("Too depth while encoding bson", bson.encode, cycle)
	-- an error inside a metamethod passes through
	t.raises("boom", bson.encode, setmetatable({}, { __pairs = function()
		error("boom")
	end }))
end)

t.case("UTF-8 rule", function()
	local good = { "plain", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\xa0\x80",
		"\xf4\x8f\xbf\xbf", "\xc2\x80", "\xe0\xa0\x80", "\xf0\x90\x80\x80", "a\0b" }
	for _, s in ipairs(good) do
		t.ok(pcall(bson.encode_order, "k", s), "accepted value " .. hex(s))
		if not s:find("\0", 1, true) then
			t.ok(pcall(bson.encode_order, s, 1), "accepted key " .. hex(s))
		end
	end
	local bad = { "\xc0\x80", "\xff", "\xc3", "\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf",
		"\xf0\x80\x80\x80", "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xe2\x82", "\xc3\x41",
		"\xe2\x28\xa1", "\xf8\x88\x80\x80\x80", "\xfe", "ok\xc3" }
	for _, s in ipairs(bad) do
		t.raises("Invalid utf8 string", bson.encode_order, "k", s)
		t.raises("Invalid utf8 string", bson.encode_order, s, 1)
	end
end)

t.case("the bson userdata", function()
	local doc = bson.encode_order("a", 1)
	t.eq(type(doc), "userdata", "type")
	t.eq(#doc, 12, "#doc")
	t.eq(tostring(doc), unhex("0c 00 00 00 10 61 00 01 00 00 00 00"), "tostring gives raw bytes")
	t.same(doc:decode(), { a = 1 }, "doc:decode()")
	t.same(bson.decode(doc), { a = 1 }, "bson.decode(doc)")
	t.same(decode_bytes(tostring(doc)), { a = 1 }, "decode through a pointer")
	-- decode wants a (light)userdata: anything else gives nothing
	for _, v in ipairs({ "string", 1, true, {} }) do
		t.eq(select("#", bson.decode(v)), 0, "decode(" .. type(v) .. ")")
	end
	t.eq(select("#", bson.decode()), 0, "decode()")
	t.eq(select("#", bson.decode(tostring(doc))), 0, "decode of a string")
end)

t.case("decode: every type", function()
	local i32 = function(v)
		return spack("<i4", v)
	end
	local doc = rawdoc(table.concat({
		"\1d\0" .. spack("<d", -2.5),
		"\2s\0" .. bstr("h\0i"),
		"\3o\0" .. rawdoc("\16x\0" .. i32(1)),
		"\4a\0" .. rawdoc("\16" .. "0\0" .. i32(10) .. "\16" .. "1\0" .. i32(11) .. "\2" .. "5\0"
			.. bstr("six")),
		"\5b\0" .. i32(2) .. "\x80xy",
		"\7i\0" .. string.rep("\xab", 12),
		"\8t\0\2",
		"\8f\0\0",
		"\9D\0" .. spack("<i8", 1700000000123),
		"\9N\0" .. spack("<i8", -1500),
		"\10n\0",
		"\11r\0a*\0i\0",
		"\12p\0" .. bstr("ns") .. string.rep("\1", 12),
		"\13j\0" .. bstr("f()"),
		"\14y\0" .. bstr("sym"),
		"\15c\0" .. i32(4 + 6 + 5) .. bstr("f") .. rawdoc(""),
		"\16I\0" .. i32(-7),
		"\17T\0" .. spack("<I4I4", 5, 1700000000),
		"\18L\0" .. spack("<i8", math.mininteger),
		"\255m\0",
		"\127M\0",
	}))
	local got = decode_bytes(doc)
	t.same(got, {
		d = -2.5,
		s = "h\0i",
		o = { x = 1 },
		a = { 10, 11, [6] = "six" },
		b = "\0\5\x80xy",
		i = "\0\7" .. string.rep("\xab", 12),
		t = true,
		f = false,
		D = bson.date(1700000000),
		N = bson.date(-1),
		n = bson.null,
		r = bson.regex("a*", "i"),
		p = "\0\12" .. bstr("ns") .. string.rep("\1", 12),
		j = "\0\13" .. bstr("f()"),
		y = "\0\14" .. bstr("sym"),
		c = "\0\15" .. i32(15) .. bstr("f") .. rawdoc(""),
		I = -7,
		T = bson.timestamp(1700000000, 5),
		L = math.mininteger,
		m = bson.minkey,
		M = bson.maxkey,
	}, "decoded")
	t.eq(math.type(got.I), "integer", "int32 is an integer")
	t.eq(math.type(got.L), "integer", "int64 is an integer")
	-- legacy values encode back to the same elements
	local again = bson.encode_order("p", got.p, "j", got.j, "y", got.y, "c", got.c)
	bytes(tostring(again), hex(rawdoc("\12p\0" .. bstr("ns") .. string.rep("\1", 12) .. "\13j\0"
		.. bstr("f()") .. "\14y\0" .. bstr("sym") .. "\15c\0" .. i32(15) .. bstr("f") .. rawdoc(""))),
		"legacy round trip")
	-- array keys are tonumber(key) + 1
	t.same(decode_bytes(rawdoc("\4a\0" .. rawdoc("\8" .. "1.5\0\1" .. "\8" .. "-1\0\1"))),
		{ a = { [2.5] = true, [0] = true } }, "odd array keys")
end)

t.case("round trips", function()
	local v = {
		i = 1, neg = -2147483648, big = 1 << 40, f = 0.1, inf = -math.huge, s = "héllo",
		yes = true, no = false, empty = {}, arr = { 1, "two", { 3 }, { four = 4 } },
		null = bson.null, min = bson.minkey, max = bson.maxkey, bin = bson.binary("\0\1\255"),
		oid = bson.objectid(), date = bson.date(123456), ts = bson.timestamp(99, 3),
		re = bson.regex("^x$", "m"), i64 = bson.int64(3),
	}
	local got = bson.decode(bson.encode(v))
	v.i64 = 3 -- an int64 decodes as a Lua integer
	t.same(got, v, "round trip")
	local nan = bson.decode(bson.encode({ x = 0 / 0 })).x
	t.ok(nan ~= nan, "NaN round trip")
	-- a big document (buffer growth)
	local many = {}
	for i = 1, 3000 do
		many["key" .. i] = { i, tostring(i) }
	end
	t.same(bson.decode(bson.encode(many)), many, "3000 keys")
end)

t.case("in-place update: every type and error", function()
	local oid = bson.objectid("000102030405060708090a0b")
	local doc = bson.encode_order("i", 1, "l", 1 << 40, "d", 0.5, "b", true, "o", oid, "t",
		bson.timestamp(1, 2), "D", bson.date(3), "s", "str", "n", bson.null, "sub", { x = 1 })
	t.raises("call makeindex first", function()
		doc.i = 2
	end)
	doc:makeindex()
	doc.i = -5
	doc.l = math.maxinteger
	doc.d = 3 -- an integer into a double
	doc.b = 0 -- truthiness: 0 is true
	doc.t = bson.timestamp(10, 20)
	doc.D = bson.date(4)
	doc.o = bson.objectid("ffeeddccbbaa998877665544")
	local got = doc:decode()
	t.same(got, { i = -5, l = math.maxinteger, d = 3.0, b = true, o = bson.objectid(
		"ffeeddccbbaa998877665544"), t = bson.timestamp(10, 20), D = bson.date(4), s = "str",
		n = bson.null, sub = { x = 1 } }, "updated")
	t.eq(math.type(got.d), "float", "a double stays a double")
	doc.b = nil
	t.eq(doc:decode().b, false, "nil is false")
	t.raises("4294967296 must be a 32bit integer ", function()
		doc.i = 1 << 32
	end)
	t.raises("1.5 must be a 32bit integer ", function()
		doc.i = 1.5
	end)
	t.raises("x must be a 32bit integer ", function()
		doc.i = "x"
	end)
	t.raises("a\0b must be a 32bit integer ", function()
		doc.i = "a\0b"
	end)
	t.raises("2.0 must be a 64bit integer ", function()
		doc.l = 2.0
	end)
	t.raises("number expected", function()
		doc.d = {}
	end)
	t.raises("Type mismatch, need bson type 7", function()
		doc.o = bson.date(1)
	end)
	t.raises("Type mismatch, need bson type 7", function()
		doc.o = 12
	end)
	t.raises("Invalid object id", function()
		doc.o = "\0\7abc"
	end)
	t.raises("Type mismatch, need bson type 9", function()
		doc.D = "x"
	end)
	t.raises("Invalid date", function()
		doc.D = "\0\9abcdef"
	end)
	t.raises("Type mismatch, need bson type 17", function()
		doc.t = bson.date(1)
	end)
	t.raises("Invalid timestamp", function()
		doc.t = "\0\17abc"
	end)
	t.raises("Can't replace key : s", function()
		doc.s = "other"
	end)
	t.raises("Can't replace key : n", function()
		doc.n = 1
	end)
	t.raises("Can't replace key : sub", function()
		doc.sub = 1
	end)
	t.raises("Can't replace key : nokey", function()
		doc.nokey = 1
	end)
	t.raises("Can't replace key : 1", function()
		doc[1] = 1
	end)
	-- the errors changed nothing
	local after = doc:decode()
	t.eq(after.i, -5, "i kept")
	t.eq(after.o, bson.objectid("ffeeddccbbaa998877665544"), "o kept")
	-- an index that names a type or place it cannot hold
	debug.setuservalue(doc, { x = 5 << 8 | 2, y = 1000 << 8 | 1 }, 1)
	t.raises("Can't replace type 2", function()
		doc.x = 1
	end)
	t.raises("Can't replace type 1", function()
		doc.y = 1
	end)
	t.raises("bson expected", bson.encode({}).makeindex, {})
end)

t.case("decode: every error", function()
	local i32 = function(v)
		return spack("<i4", v)
	end
	local function fails(text, s, what)
		local ok, err = pcall(decode_bytes, s)
		if ok or not tostring(err):find(text, 1, true) then
			error(string.format("%s: want %q, got %s", what, text, tostring(err)), 2)
		end
	end
	fails("Invalid bson block (3:4)", i32(3), "length below 4")
	fails("Invalid bson block (4:4)", i32(4), "length 4")
	fails("Invalid bson block (0:4)", i32(-1) .. "\0", "negative length")
	fails("Invalid document end", "\5\0\0\0\1", "last byte not zero")
	fails("Invalid document end", "\6\0\0\0\0\0", "zero type before the end")
	fails("Invalid bson block : cstring", "\8\0\0\0\16ab\0", "key runs into the end")
	fails("Invalid bson block (2:4)", "\10\0\0\0\16a\0\1\0\0", "truncated int32")
	fails("Invalid bson block (7:8)", rawdoc("\1d\0" .. string.rep("\1", 7)), "truncated double")
	fails("Invalid bson block (0:1)", rawdoc("\8b\0"), "missing boolean")
	fails("Invalid bson block (5:12)", rawdoc("\7o\0" .. string.rep("\1", 5)), "short object id")
	fails("Invalid bson string , length = 0", rawdoc("\2s\0" .. i32(0)), "string length 0")
	fails("Invalid bson string , length = -5", rawdoc("\2s\0" .. i32(-5)), "negative string")
	fails("Invalid bson block (8:12)", rawdoc("\2s\0" .. i32(8) .. "abcd"), "string too long")
	fails("Invalid bson string , length = 0", rawdoc("\13j\0" .. i32(0)), "jscode length 0")
	fails("Invalid bson block (4:12)", rawdoc("\12p\0" .. bstr("n") .. "abcd"), "dbpointer id")
	fails("Invalid bson block (9:20)", rawdoc("\3o\0" .. i32(20) .. "abcde"), "document too long")
	fails("Invalid bson block (9:4)", rawdoc("\3o\0" .. i32(4) .. "abcde"), "document too short")
	fails("Invalid document end", rawdoc("\3o\0" .. i32(5) .. "x"), "subdocument end")
	fails("Invalid bson block (9:-1)", rawdoc("\5b\0" .. i32(-1) .. "abcde"), "binary negative")
	fails("Invalid bson block (9:10)", rawdoc("\5b\0" .. i32(5) .. "\0abcd"), "binary too long")
	fails("Invalid bson block (3:5)", rawdoc("\5b\0" .. "\0\0\0"), "binary header")
	fails("Invalid bson block : cstring", rawdoc("\11r\0abc"), "regex pattern")
	fails("Invalid bson block : cstring", rawdoc("\11r\0abc\0i"), "regex options")
	fails("Invalid bson block (8:9)", rawdoc("\15c\0" .. i32(9) .. "abcd"), "code_w_s")
	fails("Invalid bson type : 6", rawdoc("\6u\0"), "undefined")
	fails("Invalid bson type : 19", rawdoc("\19x\0" .. string.rep("\0", 16)), "decimal128")
	fails("Invalid bson type : 128", rawdoc("\128x\0"), "type 128")
	fails("Invalid bson array key : x", rawdoc("\4a\0" .. rawdoc("\8x\0\1")), "array key")
	-- nesting: 128 documents decode, 129 do not
	local function nested(n)
		local s = rawdoc("")
		for _ = 2, n do
			s = rawdoc("\3a\0" .. s)
		end
		return s
	end
	t.ok(decode_bytes(nested(128)), "128 documents")
	fails("Too depth while decoding bson", nested(129), "129 documents")
	fails("Too depth while decoding bson", nested(5000), "5000 documents")
	t.ok(decode_bytes(tostring(bson.encode({ a = { { { {} } } } }))), "arrays nest too")
	-- the length bounds what is read: bytes after it are ignored
	t.same(decode_bytes(rawdoc("\8b\0\1") .. "junk"), { b = true }, "trailing bytes")
end)

-- Outside bytes: every prefix and seeded random mutations of a document with
-- every type must decode to a table or fail with one of the decoder's errors.
t.case("decode: truncated and random input", function()
	local KNOWN = { "Invalid bson block", "Invalid document end", "Invalid bson string , length =",
		"Invalid bson type : ", "Too depth while decoding bson", "Invalid bson array key : " }
	local function check(s, what)
		local ok, res = pcall(decode_bytes, s)
		if ok then
			if type(res) ~= "table" then
				error(what .. ": decode gave " .. type(res))
			end
			-- a decoded value encodes or fails cleanly
			local eok, eres = pcall(bson.encode, res)
			if not eok and type(eres) ~= "string" then
				error(what .. ": encode raised a " .. type(eres))
			end
			return true
		end
		for _, text in ipairs(KNOWN) do
			if tostring(res):find(text, 1, true) then
				return false
			end
		end
		error(string.format("%s: unexpected error %q", what, tostring(res)))
	end
	-- the first i32 bounds what the decoder reads through a pointer: keep it
	-- within the string (and try the ones a mutation made shorter)
	local function bounded(s)
		if #s < 4 then
			return s .. string.rep("\0", 4 - #s)
		end
		local claimed = string.unpack("<i4", s)
		if claimed < 0 or claimed > #s then
			return spack("<i4", #s) .. s:sub(5)
		end
		return s
	end
	local sample = tostring(bson.encode_order("d", 1.5, "s", "text", "o", { x = 1, y = { 1, 2 } },
		"b", bson.binary("bin"), "i", bson.objectid("0123456789abcdef01234567"), "t", true,
		"D", bson.date(5), "n", bson.null, "r", bson.regex("a", "b"), "p", "\0\12" .. bstr("n")
		.. string.rep("\1", 12), "j", "\0\13" .. bstr("c"), "c", "\0\15" .. spack("<i4", 15)
		.. bstr("f") .. rawdoc(""), "I", 7, "T", bson.timestamp(1, 2), "L", 1 << 40, "m",
		bson.minkey, "M", bson.maxkey))
	t.ok(check(sample, "sample"), "the sample decodes")
	local decoded, failed = 0, 0
	for n = 4, #sample - 1 do
		local cut = sample:sub(1, n)
		if check(bounded(spack("<i4", n) .. cut:sub(5)), "prefix " .. n) then
			decoded = decoded + 1
		else
			failed = failed + 1
		end
	end
	t.eq(decoded, 0, "a cut document never decodes")
	math.randomseed(20240611)
	local random = math.random
	for i = 1, MUTATIONS do
		local b = { sample:byte(1, -1) }
		for _ = 1, random(1, 4) do
			b[random(1, #b)] = random(0, 255)
		end
		local s = string.char(table.unpack(b))
		if random(4) == 1 then
			s = s:sub(1, random(4, #s))
		end
		check(bounded(s), "mutation " .. i)
	end
	for i = 1, RANDOMS do
		local n = random(4, 64)
		local b = {}
		for k = 1, n do
			b[k] = random(0, 255)
		end
		check(bounded(string.char(table.unpack(b))), "random " .. i)
	end
	t.ok(failed > 0, "prefixes were tried")
end)

t.start()
