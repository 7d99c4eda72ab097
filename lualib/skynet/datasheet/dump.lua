-- skynet.datasheet.dump: the binary image a datasheet is published as.
--
--   dump.dump(t)          -> image string (what builder.compile returns)
--   dump.undump(s)        -> root table, map table -> table number
--   dump.diff(old, new)   -> new image renumbered to keep old numbers
--
-- Layout (all integers little-endian, offsets in bytes):
--   u32 strtbl            offset of the string area from the image start
--   u32 n                 number of table slots
--   u32 index[n]          offset of each table from the end of the index,
--                         or 0xFFFFFFFF for a slot with no table (after diff)
--   table records         table 0 is the root
--   string area           each distinct string once, followed by one NUL
-- A table record: i32 narray, i32 ndict, one type byte per array value then
-- per dict entry (zero padded to a multiple of 4), narray 4-byte values,
-- then ndict pairs (u32 key string offset, 4-byte value). Types: 1 integer
-- (i32), 2 real (f32), 3 boolean (bytes 00 00 00 01 for true, zero for
-- false; any non-zero word reads as true), 4 table (its number), 5 string
-- (offset in the string area).
--
-- Encoding order (it fixes the bytes): tables get their numbers depth first,
-- in the order encoding meets them, the array part (1..n as ipairs sees it)
-- before the string keys (in pairs order); a string enters the pool the
-- first time it is met, a key before its value. Integers (or integral
-- floats) in the int32 range are stored exactly, every other number as a
-- 32-bit float. Keys other than the ipairs sequence and strings fail an
-- assertion; values other than numbers, booleans, strings and tables raise
-- "Unsupport value". A table met twice is stored twice; a string holding a
-- zero byte cannot be stored (the pool is NUL-terminated) and raises.
--
-- undump checks every offset it follows and raises "datasheet image: ..."
-- on bytes that are not an image, including a table referenced twice, so
-- that the tree it returns is finite.
--
-- diff(old, new) gives every table of new that sits at a key path where old
-- had a table too (each step of the path a table in both) the number it had
-- in old; the other tables of new get numbers from old's slot count upward,
-- and old numbers without a match become empty slots. Readers rely on this
-- to re-point their proxies in place on an update.
local dump = {}

local spack, sunpack, sbyte, srep, sfind = string.pack, string.unpack, string.byte, string.rep,
	string.find
local tconcat = table.concat
local mtointeger = math.tointeger

local INT32_MIN <const> = -0x80000000
local INT32_MAX <const> = 0x7fffffff
local HOLE <const> = 0xffffffff
local T_INTEGER <const> = 1
local T_REAL <const> = 2
local T_BOOLEAN <const> = 3
local T_TABLE <const> = 4
local T_STRING <const> = 5

local TRUE_WORD <const> = "\0\0\0\1"
local FALSE_WORD <const> = "\0\0\0\0"

-- Encoder state: records[number + 1] is the record of a table, pool the
-- strings in order, offsets string -> offset in the pool.
local function new_encoder()
	return { records = {}, pool = {}, offsets = {}, pool_size = 0 }
end

local function intern(enc, s)
	local off = enc.offsets[s]
	if off == nil then
		if sfind(s, "\0", 1, true) then
			error(string.format("datasheet: string with a zero byte cannot be stored (%q)", s), 0)
		end
		off = enc.pool_size
		enc.offsets[s] = off
		enc.pool[#enc.pool + 1] = s
		enc.pool_size = off + #s + 1
	end
	return off
end

local encode_table

-- The type byte (as a one-char string) and the 4-byte word of v.
local function encode_value(enc, v)
	local ty = type(v)
	if ty == "number" then
		local i = mtointeger(v)
		if i and i >= INT32_MIN and i <= INT32_MAX then
			return "\1", spack("<i4", i)
		end
		return "\2", spack("<f", v)
	elseif ty == "string" then
		return "\5", spack("<I4", intern(enc, v))
	elseif ty == "boolean" then
		return "\3", v and TRUE_WORD or FALSE_WORD
	elseif ty == "table" then
		return "\4", spack("<i4", encode_table(enc, v))
	end
	error("Unsupport value " .. tostring(v))
end

function encode_table(enc, t)
	local records = enc.records
	local number = #records
	records[number + 1] = false -- reserve the number before the children take theirs
	local types, words, pairs_ = {}, {}, {}
	local narray = 0
	for i, v in ipairs(t) do
		types[i], words[i] = encode_value(enc, v)
		narray = i
	end
	for k, v in pairs(t) do
		if type(k) == "string" then
			local key = spack("<I4", intern(enc, k))
			local ty, word = encode_value(enc, v)
			types[#types + 1] = ty
			pairs_[#pairs_ + 1] = key .. word
		else
			local i = type(k) == "number" and mtointeger(k)
			assert(i and i >= 1 and i <= narray)
		end
	end
	local typebytes = tconcat(types)
	records[number + 1] = tconcat {
		spack("<i4i4", narray, #pairs_),
		typebytes,
		srep("\0", -#typebytes % 4),
		tconcat(words),
		tconcat(pairs_),
	}
	return number
end

-- The image made of records (a list, slot order) placed at the slots given
-- by slot_of[i] (default: in order), n slots, and the string area `strings`.
local function assemble(records, n, slot_of, strings)
	local index = {}
	for s = 1, n do
		index[s] = HOLE
	end
	local offset = 0
	for i, rec in ipairs(records) do
		index[(slot_of and slot_of[i - 1] or i - 1) + 1] = offset
		offset = offset + #rec
	end
	local words = {}
	for s = 1, n do
		words[s] = spack("<I4", index[s])
	end
	return tconcat {
		spack("<I4I4", 8 + 4 * n + offset, n),
		tconcat(words),
		tconcat(records),
		strings,
	}
end

function dump.dump(t)
	if type(t) ~= "table" then
		error(string.format("datasheet: table expected, got %s", type(t)), 2)
	end
	local enc = new_encoder()
	encode_table(enc, t)
	local strings = tconcat(enc.pool, "\0") .. "\0"
	return assemble(enc.records, #enc.records, nil, strings)
end

-- A checked view of an image: header fields and the slot offsets.
local function open_image(s)
	if type(s) ~= "string" then
		error(string.format("datasheet image: string expected, got %s", type(s)), 3)
	end
	local size = #s
	if size < 8 then
		error("datasheet image: too short for a header", 3)
	end
	local strtbl, n = sunpack("<I4I4", s)
	if n < 1 or 8 + 4 * n > strtbl or strtbl >= size then
		error(string.format("datasheet image: bad header (strtbl = %d, n = %d, size = %d)",
			strtbl, n, size), 3)
	end
	if sbyte(s, size) ~= 0 then
		error("datasheet image: the string area does not end with a zero byte", 3)
	end
	local img = { s = s, strtbl = strtbl, n = n, base = 8 + 4 * n }
	if sunpack("<I4", s, 9) == HOLE then
		error("datasheet image: no root table", 3)
	end
	return img
end

local function slot_offset(img, number)
	return sunpack("<I4", img.s, 9 + 4 * number)
end

-- Record header of table `number`: position (1-based) of its first value
-- word, narray, ndict, position of its first type byte.
local function open_record(img, number)
	local off = slot_offset(img, number)
	local pos = img.base + off -- 0-based
	if off == HOLE or pos + 8 > img.strtbl then
		error(string.format("datasheet image: table %d out of bounds", number), 0)
	end
	local narray, ndict = sunpack("<i4i4", img.s, pos + 1)
	local ntypes = narray + ndict
	if narray < 0 or ndict < 0 or
		pos + 8 + ((ntypes + 3) & ~3) + 4 * narray + 8 * ndict > img.strtbl then
		error(string.format("datasheet image: table %d out of bounds", number), 0)
	end
	return pos + 8 + ((ntypes + 3) & ~3) + 1, narray, ndict, pos + 9
end

local function read_string(img, off)
	if off >= #img.s - img.strtbl then
		error(string.format("datasheet image: string offset %d out of bounds", off), 0)
	end
	return (sunpack("z", img.s, img.strtbl + off + 1))
end

-- Walks the tables reachable from the root; visit(number, narray, ndict,
-- types, words, keys) sees each one (types and words 1-based lists, keys the
-- dict key strings), children before nothing in particular. Raises on bad
-- bytes and on a table referenced twice.
local function walk(img, visit)
	local seen = { [0] = true }
	local function one(number)
		local pos, narray, ndict, tpos = open_record(img, number)
		local s = img.s
		local types, words, keys = {}, {}, {}
		for i = 1, narray + ndict do
			local ty = sbyte(s, tpos + i - 1)
			if ty < T_INTEGER or ty > T_STRING then
				error(string.format("datasheet image: bad type %d in table %d", ty, number), 0)
			end
			types[i] = ty
		end
		for i = 1, narray + ndict do
			if i > narray then
				keys[i - narray] = read_string(img, sunpack("<I4", s, pos))
				pos = pos + 4
			end
			local ty = types[i]
			local word
			if ty == T_INTEGER then
				word = sunpack("<i4", s, pos)
			elseif ty == T_REAL then
				word = sunpack("<f", s, pos)
			elseif ty == T_BOOLEAN then
				word = sunpack("<I4", s, pos) ~= 0
			elseif ty == T_STRING then
				word = read_string(img, sunpack("<I4", s, pos))
			else
				word = sunpack("<I4", s, pos)
				if word >= img.n or seen[word] then
					error(string.format("datasheet image: bad table reference %d in table %d",
						word, number), 0)
				end
				seen[word] = true
			end
			words[i] = word
			pos = pos + 4
		end
		visit(number, narray, ndict, types, words, keys)
		for i = 1, narray + ndict do
			if types[i] == T_TABLE then
				one(words[i])
			end
		end
	end
	one(0)
end

function dump.undump(s)
	local img = open_image(s)
	local tables = {} -- number -> table
	local numbers = {} -- table -> number
	local function table_of(number)
		local t = tables[number]
		if t == nil then
			t = {}
			tables[number] = t
			numbers[t] = number
		end
		return t
	end
	walk(img, function(number, narray, ndict, types, words, keys)
		local t = table_of(number)
		for i = 1, narray + ndict do
			local v = words[i]
			if types[i] == T_TABLE then
				v = table_of(v)
			end
			if i <= narray then
				t[i] = v
			else
				t[keys[i - narray]] = v
			end
		end
	end)
	return tables[0], numbers
end

-- new number -> old number, for the tables of new at key paths where old
-- has a table too.
local function match_numbers(old, new)
	local old_root, old_numbers = dump.undump(old)
	local new_root, new_numbers = dump.undump(new)
	local map = {}
	local function match(o, n)
		map[new_numbers[n]] = old_numbers[o]
		for k, v in pairs(n) do
			local ov = o[k]
			if type(v) == "table" and type(ov) == "table" then
				match(ov, v)
			end
		end
	end
	match(old_root, new_root)
	return map
end

-- The record of table `number` of img with table references renumbered.
local function renumber_record(img, number, map)
	local pos, narray, ndict, tpos = open_record(img, number)
	local s = img.s
	local start = img.base + slot_offset(img, number) + 1
	local parts = { s:sub(start, pos - 1) }
	for i = 1, narray + ndict do
		if i > narray then
			parts[#parts + 1] = s:sub(pos, pos + 3)
			pos = pos + 4
		end
		if sbyte(s, tpos + i - 1) == T_TABLE then
			parts[#parts + 1] = spack("<I4", map[sunpack("<I4", s, pos)])
		else
			parts[#parts + 1] = s:sub(pos, pos + 3)
		end
		pos = pos + 4
	end
	return tconcat(parts)
end

function dump.diff(old, new)
	local map = match_numbers(old, new)
	local old_img, new_img = open_image(old), open_image(new)
	local next_number = old_img.n
	local records, slot_of = {}, {}
	-- Tables of new in slot order; unreachable slots of new are dropped.
	local order = {}
	walk(new_img, function(number)
		order[#order + 1] = number
	end)
	table.sort(order)
	for _, number in ipairs(order) do
		if map[number] == nil then
			map[number] = next_number
			next_number = next_number + 1
		end
	end
	for i, number in ipairs(order) do
		records[i] = renumber_record(new_img, number, map)
		slot_of[i - 1] = map[number]
	end
	return assemble(records, next_number, slot_of, new:sub(new_img.strtbl + 1))
end

return dump
