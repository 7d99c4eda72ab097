-- sproto on outside bytes: truncated, mutated and random messages, packed
-- streams and schema binaries (seeded, bounded loops). Every input either
-- decodes or raises one of the decoder's own errors; what decodes encodes
-- again to bytes that decode to the same value. Under make test-asan this
-- also proves that no input reads out of bounds.
--
-- Under ThreadSanitizer the loops run 20 times fewer inputs: this Lua throws
-- errors with __longjmp_chk, which TSan does not intercept, so every error
-- raised from instrumented C leaves frames on TSan's shadow stack, and tens
-- of thousands of them overflow it. (Bounds are ASan's job; TSan is here for
-- the slots.)
local t = require "testlib"
local sproto = require "sproto"
local parser = require "sprotoparser"
local core = require "sproto.core"

local SCHEMA = [[
.Person { name 0 : string age 1 : integer marital 2 : boolean children 3 : *Person }
.Data { numbers 0 : *integer bools 1 : *boolean number 2 : integer bignumber 3 : integer
	double 4 : double doubles 5 : *double }
.Item { id 0 : integer name 1 : string }
.KV { k 0 : string v 1 : integer }
.Bag { items 0 : *Item(id) kv 1 : *KV() strs 2 : *string bin 5 : binary sub 6 : Item
	big 1000 : integer }
.Dec { d 0 : integer(2) ds 1 : *integer(3) }
]]

local TYPES = { "Person", "Data", "Bag", "Item", "KV" }

local DECODE_ERRORS = {
	"decode error",
	"The table is too deep",
	"Can't find main index",
	"Can't find key field",
	"Can't find value field",
}

local sp = sproto.parse(SCHEMA)

local SCALE <const> = t.under_tsan and 20 or 1

-- n inputs, fewer under TSan (see the top)
local function runs(n)
	return math.max(1, n // SCALE)
end

local SAMPLES = {
	{ "Person", { name = "Bob", age = 40, children = { { name = "Alice", age = 13 },
		{ name = "Carol", age = 5, marital = true, children = {} } } } },
	{ "Data", { numbers = { 1, -1, 2 ^ 40 // 1 }, bools = { false, true }, number = 100000,
		bignumber = -10000000000, double = 0.5, doubles = { 1.5, -2 } } },
	{ "Bag", { items = { [10] = { id = 10, name = "sword" } }, kv = { hp = 100 },
		strs = { "a", "", "bc" }, bin = "\0\1\2", sub = { id = 1 }, big = 7 } },
	{ "Item", { id = 0x7fff, name = "x" } },
}

local function allowed(err)
	err = tostring(err)
	for _, e in ipairs(DECODE_ERRORS) do
		if err:find(e, 1, true) then
			return true
		end
	end
	return false
end

-- Decodes bin as typename; checks the outcome; returns the value or nil.
local function try_decode(typename, bin, what)
	local ok, v, used = pcall(sp.decode, sp, typename, bin)
	if not ok then
		if not allowed(v) then
			error(string.format("%s: unexpected error %q", what, tostring(v)), 2)
		end
		return nil
	end
	t.ok(math.type(used) == "integer" and used >= 2 and used <= #bin, what .. ": bytes used")
	-- what decodes re-encodes to bytes that decode to the same value
	local again = sp:encode(typename, v)
	t.same(sp:decode(typename, again), v, what .. ": round trip")
	return v
end

t.case("every prefix of every sample: decodes or 'decode error'", function()
	for _, s in ipairs(SAMPLES) do
		local bin = sp:encode(s[1], s[2])
		t.same(sp:decode(s[1], bin), s[2], s[1] .. " whole")
		for n = 0, #bin - 1 do
			local ok, err = pcall(sp.decode, sp, s[1], bin:sub(1, n))
			if ok then
				-- a prefix may still hold a whole struct (only trailing items lost)
				t.ok(n >= 2, "a prefix shorter than a header cannot decode")
			else
				t.ok(tostring(err):find("decode error", 1, true), "prefix error: " .. tostring(err))
			end
		end
	end
end)

t.case("every byte of every sample, mutated (seeded)", function()
	math.randomseed(1101)
	for _, s in ipairs(SAMPLES) do
		local bin = sp:encode(s[1], s[2])
		for i = 1, #bin do
			for _ = 1, runs(4) do
				local m = bin:sub(1, i - 1) .. string.char(math.random(0, 255)) .. bin:sub(i + 1)
				for k = 1, SCALE == 1 and #TYPES or 1 do
					local typename = TYPES[k]
					try_decode(typename, m, string.format("%s byte %d as %s", s[1], i, typename))
				end
			end
		end
	end
end)

local function random_bytes(n)
	local b = {}
	for i = 1, n do
		b[i] = string.char(math.random(0, 255))
	end
	return table.concat(b)
end

-- Random structs: a plausible header (few words, small skips) and random data,
-- so that decoding gets past the first check.
local function random_struct(max_words)
	local n = math.random(0, max_words)
	local words = {}
	for i = 1, n do
		local r = math.random(1, 4)
		if r == 1 then
			words[i] = string.pack("<I2", 0)
		elseif r == 2 then
			words[i] = string.pack("<I2", math.random(0, 3) * 2 + 1)
		else
			words[i] = string.pack("<I2", math.random(1, 0x7fff) * 2)
		end
	end
	local data = {}
	for i = 1, math.random(0, 4) do
		local len = math.random(0, 12)
		if math.random(1, 4) == 1 then
			len = math.random(0, 0xffffffff)
		end
		data[i] = string.pack("<I4", len) .. random_bytes(math.random(0, 16))
	end
	return string.pack("<I2", n) .. table.concat(words) .. table.concat(data)
end

t.case("random bytes and random structs (seeded)", function()
	math.randomseed(2202)
	for i = 1, runs(5000) do
		local bin = random_bytes(math.random(0, 64))
		local typename = TYPES[math.random(#TYPES)]
		try_decode(typename, bin, "random " .. i)
		local s = random_struct(8)
		try_decode(typename, s, "random struct " .. i)
	end
end)

t.case("decimals on random input: decode or an error, never a crash", function()
	math.randomseed(3303)
	for i = 1, runs(500) do
		local bin = random_struct(3)
		local ok, err = pcall(sp.decode, sp, "Dec", bin)
		t.ok(ok or allowed(err), "Dec " .. i .. ": " .. tostring(err))
	end
end)

t.case("0-packing: random streams", function()
	math.randomseed(4404)
	for i = 1, runs(1500) do
		local s = random_bytes(math.random(0, 40))
		local ok, out = pcall(sproto.unpack, s)
		if ok then
			t.eq(#out % 8, 0, "unpacked size " .. i)
			t.eq(sproto.unpack(sproto.pack(out)), out, "repack " .. i)
		else
			t.ok(tostring(out):find("Invalid unpack stream", 1, true), "error " .. tostring(out))
		end
		-- any bytes pack, and come back padded with zeros
		local back = sproto.unpack(sproto.pack(s))
		t.eq(back:sub(1, #s), s, "pack round trip " .. i)
		t.eq(#back, (#s + 7) // 8 * 8, "padded size " .. i)
	end
	-- sparse inputs exercise runs and their ends
	for i = 1, runs(300) do
		local b = {}
		for j = 1, math.random(0, 3000) do
			b[j] = math.random(1, 8) == 1 and "\0" or "x"
		end
		local s = table.concat(b)
		t.eq(sproto.unpack(sproto.pack(s)):sub(1, #s), s, "sparse " .. i)
	end
end)

t.case("schema binaries: truncated and mutated (seeded)", function()
	math.randomseed(5505)
	local bin = parser.parse(SCHEMA .. [[
.package { type 0 : integer session 1 : integer }
foo 1 { request Person response Data } bar 2 { response nil } baz 3 {}]])
	core.deleteproto(t.ok(core.newproto(bin), "the whole binary loads"))
	local function exercise(cobj, what)
		if not cobj then
			return
		end
		local o = sproto.sharenew(cobj)
		for _, name in ipairs(TYPES) do
			local st = core.querytype(cobj, name)
			if st then
				core.default(st)
				for _, s in ipairs(SAMPLES) do
					local okd, err = pcall(core.decode, st, sp:encode(s[1], s[2]))
					t.ok(okd or allowed(err), what .. ": " .. tostring(err))
				end
			end
		end
		for _, p in ipairs { "foo", "bar", "baz", 1, 2, 3 } do
			o:exist_proto(p)
		end
		core.deleteproto(cobj)
	end
	for n = 0, #bin - 1 do
		exercise(core.newproto(bin:sub(1, n)), "prefix " .. n)
	end
	for i = 1, runs(4000) do
		local at = math.random(1, #bin)
		local m = bin:sub(1, at - 1) .. string.char(math.random(0, 255)) .. bin:sub(at + 1)
		exercise(core.newproto(m), "mutation " .. i)
	end
	for i = 1, runs(500) do
		exercise(core.newproto(random_bytes(math.random(0, 80))), "random schema " .. i)
	end
end)

t.start()
