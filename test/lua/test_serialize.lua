-- skynet.pack / unpack / packstring: exact bytes, round trips of
-- every type locally and through a real call, limits, malformed input.
local skynet = require "skynet"
local t = require "testlib"

local echo
local spack = string.pack

local function hex(s)
	return (s:gsub(".", function(c)
		return string.format("%02x ", c:byte())
	end))
end

local function bytes(got, want, what)
	if got ~= want then
		error(string.format("%s: got [%s], want [%s]", what, hex(got), hex(want)), 2)
	end
end

local function i64(v)
	return spack("<i8", v)
end

t.case("exact bytes: nil, booleans, integers", function()
	local P = skynet.packstring
	bytes(P(nil), "\x00", "nil")
	bytes(P(false), "\x01", "false")
	bytes(P(true), "\x09", "true")
	bytes(P(0), "\x02", "0")
	bytes(P(1), "\x0a\x01", "1")
	bytes(P(255), "\x0a\xff", "255")
	bytes(P(256), "\x12\x00\x01", "256")
	bytes(P(65535), "\x12\xff\xff", "65535")
	bytes(P(65536), "\x22\x00\x00\x01\x00", "65536")
	bytes(P(0x7fffffff), "\x22\xff\xff\xff\x7f", "0x7fffffff")
	bytes(P(0x80000000), "\x32" .. i64(0x80000000), "0x80000000")
	bytes(P(-1), "\x22\xff\xff\xff\xff", "-1")
	bytes(P(-0x80000000), "\x22\x00\x00\x00\x80", "-0x80000000")
	bytes(P(-0x80000001), "\x32" .. i64(-0x80000001), "-0x80000001")
	bytes(P(math.maxinteger), "\x32" .. i64(math.maxinteger), "maxinteger")
	bytes(P(math.mininteger), "\x32" .. i64(math.mininteger), "mininteger")
end)

t.case("exact bytes: floats", function()
	local P = skynet.packstring
	bytes(P(1.0), "\x42" .. spack("<d", 1.0), "1.0")
	bytes(P(0.0), "\x42" .. spack("<d", 0.0), "0.0")
	bytes(P(-2.5), "\x42" .. spack("<d", -2.5), "-2.5")
	bytes(P(math.huge), "\x42" .. spack("<d", math.huge), "inf")
end)

t.case("exact bytes: strings", function()
	local P = skynet.packstring
	bytes(P(""), "\x04", "empty")
	bytes(P("a"), "\x0c\x61", "a")
	local s31 = string.rep("s", 31)
	bytes(P(s31), "\xfc" .. s31, "31 bytes")
	local s32 = string.rep("m", 32)
	bytes(P(s32), "\x15\x20\x00" .. s32, "32 bytes")
	local s65535 = string.rep("w", 65535)
	bytes(P(s65535), "\x15\xff\xff" .. s65535, "65535 bytes")
	local s65536 = string.rep("l", 65536)
	bytes(P(s65536), "\x25\x00\x00\x01\x00" .. s65536, "65536 bytes")
	bytes(P("a\0b"), "\x1c\x61\x00\x62", "embedded zero")
end)

t.case("exact bytes: tables", function()
	local P = skynet.packstring
	bytes(P({}), "\x06\x00", "{}")
	bytes(P({ 1, 2 }), "\x16\x0a\x01\x0a\x02\x00", "{1,2}")
	bytes(P({ x = 1 }), "\x06\x0c\x78\x0a\x01\x00", "{x=1}")
	bytes(P({ 1, 2, x = 1 }), "\x16\x0a\x01\x0a\x02\x0c\x78\x0a\x01\x00", "{1,2,x=1}")
	bytes(P({ 1, nil, 3 }), "\x1e\x0a\x01\x00\x0a\x03\x00", "{1,nil,3}")
	bytes(P({ { true } }), "\x0e\x0e\x09\x00\x00", "{{true}}")
	local a30, a31 = {}, {}
	for i = 1, 30 do
		a30[i] = 1
	end
	for i = 1, 31 do
		a31[i] = 1
	end
	bytes(P(a30), "\xf6" .. string.rep("\x0a\x01", 30) .. "\x00", "30 items")
	bytes(P(a31), "\xfe\x0a\x1f" .. string.rep("\x0a\x01", 31) .. "\x00", "31 items")
	local a300 = {}
	for i = 1, 300 do
		a300[i] = 0
	end
	bytes(P(a300), "\xfe\x12\x2c\x01" .. string.rep("\x02", 300) .. "\x00", "300 items")
end)

t.case("exact bytes: several values, __pairs", function()
	local P = skynet.packstring
	bytes(P(1, "a", nil), "\x0a\x01\x0c\x61\x00", "1, 'a', nil")
	local proxy = setmetatable({ ignored = true }, {
		__pairs = function()
			return next, { k = "v" }, nil
		end,
	})
	bytes(P(proxy), "\x06\x0c\x6b\x0c\x76\x00", "__pairs table")
	local with_len = setmetatable({ 7 }, {
		__len = function()
			return 100
		end,
		__index = function()
			return 0
		end,
	})
	bytes(P(with_len), "\x0e\x0a\x07\x00", "__len and __index are ignored")
end)

local SAMPLES = {
	{ "nil", nil },
	{ "true", true },
	{ "false", false },
	{ "0", 0 },
	{ "1", 1 },
	{ "255", 255 },
	{ "256", 256 },
	{ "65535", 65535 },
	{ "65536", 65536 },
	{ "int32 max", 0x7fffffff },
	{ "int32 max+1", 0x80000000 },
	{ "-1", -1 },
	{ "-256", -256 },
	{ "int32 min", -0x80000000 },
	{ "int32 min-1", -0x80000001 },
	{ "maxinteger", math.maxinteger },
	{ "mininteger", math.mininteger },
	{ "0.0", 0.0 },
	{ "1.0", 1.0 },
	{ "-0.5", -0.5 },
	{ "pi", math.pi },
	{ "1e300", 1e300 },
	{ "inf", math.huge },
	{ "-inf", -math.huge },
	{ "empty string", "" },
	{ "short string", "hello" },
	{ "binary string", "\0\1\2\255\254" },
	{ "32-byte string", string.rep("z", 32) },
	{ "70000-byte string", string.rep("q", 70000) },
}

local function check_value(got, want, name)
	if type(want) == "number" then
		t.eq(math.type(got), math.type(want), name .. " subtype")
	end
	t.eq(got, want, name)
end

t.case("round trip of every scalar, locally", function()
	for _, s in ipairs(SAMPLES) do
		local name, v = s[1], s[2]
		local n = select("#", skynet.unpack(skynet.packstring(v)))
		t.eq(n, 1, name .. " value count")
		check_value(skynet.unpack(skynet.packstring(v)), v, name)
		local msg, sz = skynet.pack(v)
		check_value(skynet.unpack(msg, sz), v, name .. " (buffer)")
		t.eq(skynet.tostring(msg, sz), skynet.packstring(v), name .. " tostring")
		skynet.trash(msg, sz)
	end
	local nan = skynet.unpack(skynet.packstring(0 / 0))
	t.ok(nan ~= nan, "NaN")
	t.eq(math.type(nan), "float", "NaN subtype")
end)

t.case("round trip of every scalar through a call", function()
	for _, s in ipairs(SAMPLES) do
		local name, v = s[1], s[2]
		local r = table.pack(skynet.call(echo, "lua", "echo", v))
		t.eq(r.n, 1, name .. " value count")
		check_value(r[1], v, name)
	end
end)

t.case("many values and trailing nils survive", function()
	local r = table.pack(skynet.unpack(skynet.packstring(1, nil, "x", nil, nil)))
	t.eq(r.n, 5, "count")
	t.eq(r[3], "x", "3rd")
	local c = table.pack(skynet.call(echo, "lua", "echo", nil, nil, nil))
	t.eq(c.n, 3, "count through a call")
	local many = {}
	for i = 1, 200 do
		many[i] = i
	end
	local back = table.pack(skynet.call(echo, "lua", "echo", table.unpack(many)))
	t.eq(back.n, 200, "200 values")
	t.eq(back[200], 200, "last value")
end)

t.case("nested and mixed tables round trip", function()
	local inner = { deep = { deeper = { deepest = "bottom" } } }
	local v = {
		1,
		2.5,
		"three",
		false,
		{ 10, 20, 30 },
		name = "mixed",
		[100] = "sparse",
		[-1] = "negative key",
		[1.5] = "float key",
		[true] = "boolean key",
		nested = inner,
		empty = {},
		list = { { a = 1 }, { b = 2 }, { c = { 3 } } },
	}
	t.same(skynet.unpack(skynet.packstring(v)), v, "local")
	t.same(skynet.call(echo, "lua", "echo", v), v, "through a call")
	local shared = { "shared" }
	local twice = skynet.unpack(skynet.packstring({ a = shared, b = shared }))
	t.same(twice.a, shared, "a copy of a shared table")
	t.ok(twice.a ~= twice.b, "shared references become separate tables")
end)

t.case("big tables and large strings round trip", function()
	local big = {}
	for i = 1, 20000 do
		big[i] = i * 3
		big["k" .. i] = { i, tostring(i) }
	end
	t.same(skynet.call(echo, "lua", "echo", big), big, "20000 items + 20000 keys")
	local s = string.rep("0123456789abcdef", 64 * 1024) -- 1 MB
	t.eq(skynet.call(echo, "lua", "echo", s), s, "1 MB string")
	local huge = string.rep("\0\255", 4 * 1024 * 1024) -- 8 MB
	t.eq(skynet.call(echo, "lua", "echo", huge), huge, "8 MB string")
end)

t.case("lightuserdata round trips within the process", function()
	local msg, sz = skynet.pack("buffer")
	local back = skynet.unpack(skynet.packstring(msg))
	t.eq(back, msg, "same pointer")
	skynet.trash(msg, sz)
end)

local function nest(levels, leaf)
	local root = {}
	local cur = root
	for _ = 2, levels do
		local nxt = {}
		cur[1] = nxt
		cur = nxt
	end
	cur[1] = leaf
	return root
end

t.case("nesting limit: 32 levels pack, deeper fails", function()
	local ok32 = skynet.unpack(skynet.packstring(nest(32, "leaf")))
	local d = ok32
	for _ = 1, 31 do
		d = d[1]
	end
	t.eq(d[1], "leaf", "leaf of 32 levels")
	t.raises("serialize can't pack too depth table", skynet.packstring, nest(33, "leaf"))
	t.raises("serialize can't pack too depth table", skynet.pack, nest(100, 1))
end)

t.case("cycles fail cleanly", function()
	local cyc = {}
	cyc.self = cyc
	t.raises("serialize can't pack too depth table", skynet.packstring, cyc)
	local a, b = {}, {}
	a.b, b.a = b, a
	t.raises("serialize can't pack too depth table", skynet.pack, a)
end)

t.case("unsupported types raise", function()
	t.raises("Unsupport type function to serialize", skynet.packstring, print)
	t.raises("Unsupport type function to serialize", skynet.packstring, { f = function() end })
	t.raises("Unsupport type thread to serialize", skynet.packstring, coroutine.create(print))
	t.raises("Unsupport type userdata to serialize", skynet.packstring, io.stdout)
	t.raises("Unsupport type", skynet.send, echo, "lua", "echo", print)
	t.eq(skynet.call(echo, "lua", "ping"), "pong", "service fine after failed packs")
end)

t.case("empty input unpacks to nothing", function()
	t.eq(select("#", skynet.unpack(nil)), 0, "nil")
	t.eq(select("#", skynet.unpack("")), 0, "empty string")
end)

t.case("malformed input raises", function()
	local bad = {
		{ "type 7", "\x07" },
		{ "truncated uint8", "\x0a" },
		{ "truncated uint16", "\x12\x01" },
		{ "truncated int32", "\x22\x01\x02\x03" },
		{ "truncated int64", "\x32\x01\x02\x03\x04\x05\x06\x07" },
		{ "truncated double", "\x42\x00\x00" },
		{ "bad number cookie", "\x1a\x01" },
		{ "short string past the end", "\x2c\x61" },
		{ "long string length past the end", "\x15\x10\x00abc" },
		{ "long string truncated length", "\x15\x10" },
		{ "long string bad width", "\x1d\x01\x00\x00a" },
		{ "table without terminator", "\x16\x0a\x01\x0a\x02" },
		{ "table missing array items", "\x1e\x0a\x01" },
		{ "table hash without value", "\x06\x0c\x78" },
		{ "array length as a float", "\xfe\x42" .. spack("<d", 31.0) .. string.rep("\x02", 31) .. "\x00" },
		{ "array length as a string", "\xfe\x0c\x61\x00" },
		{ "light userdata truncated", "\x03\x01\x02" },
		{ "huge array length, no items", "\xfe\x22\xff\xff\xff\x7f", "any" },
		{ "negative array length", "\xfe\x22\xff\xff\xff\xff", "any" },
		{ "int64 array length", "\xfe\x32" .. i64(1 << 40), "any" },
	}
	for _, b in ipairs(bad) do
		local ok, err = pcall(skynet.unpack, b[2])
		t.eq(ok, false, b[1] .. " must raise")
		if not b[3] then
			t.ok(tostring(err):find("Invalid serialize stream", 1, true), b[1] .. " error text: " .. tostring(err))
		end
	end
	local ok, err = pcall(skynet.unpack, "\x07")
	t.ok(not ok and tostring(err):find("Invalid serialize stream", 1, true), "type 7 text: " .. tostring(err))
end)

t.case("random garbage never crashes the node", function()
	local seed = 12345
	local function rnd(n) -- small LCG, deterministic
		seed = (seed * 1103515245 + 12345) % 2147483648
		return seed % n
	end
	local raised = 0
	for _ = 1, 3000 do
		local len = rnd(40)
		local chars = {}
		for i = 1, len do
			chars[i] = string.char(rnd(256))
		end
		if not pcall(skynet.unpack, table.concat(chars)) then
			raised = raised + 1
		end
	end
	t.ok(raised > 0, "some garbage must be rejected")
	-- Every prefix of a valid message is rejected or decodes cleanly.
	local full = skynet.packstring({ 1, "two", { three = 3.0 }, string.rep("x", 300) }, "tail")
	for i = 1, #full - 1 do
		pcall(skynet.unpack, full:sub(1, i))
	end
	t.eq(skynet.call(echo, "lua", "ping"), "pong", "node fine")
end)

t.case("a garbage message makes the receiver fail the call, not die", function()
	local done, ok, err
	local co = skynet.fork(function()
		ok, err = pcall(skynet.rawcall, echo, "lua", "\x07\x07\x07")
		done = true
	end)
	skynet.sleep(100)
	if not done then
		skynet.killthread(co)
	end
	t.ok(done, "the caller was left waiting: an undecodable request got no error reply")
	t.eq(ok, false, "call must fail")
	t.ok(tostring(err):find("call failed", 1, true), "error text: " .. tostring(err))
	t.eq(skynet.call(echo, "lua", "ping"), "pong", "receiver fine")
end)

t.start(nil, function()
	echo = skynet.newservice("svc_echo")
end)
