-- sprotoparser: sproto schema text -> schema binary (the input of
-- sproto.core.newproto).
--
--   parse(text [, filename]) -> binary string
--   dump(binary)             -> prints it as hex, 16 bytes a line
--
-- Design. A hand-written recursive-descent parser (no LPeg) in two passes:
--   1. syntax: the text becomes a tree of type nodes
--      { name = full name, fields = {...}, children = {...} } and protocol
--      nodes; the first character that fits no rule raises
--      "syntax error at [<file>] line (<n>)", n being the line of that
--      character (LF and CRLF end lines; a comment runs from # to the end of
--      its line). A syntax error is reported before any check of pass 2.
--   2. meaning: types are registered by full name (a nested .Inner in .Outer
--      is Outer.Inner; protocol p's inline bodies are p.request and
--      p.response), duplicates are refused, every field type is resolved
--      (a builtin first, then the enclosing type's full name and each shorter
--      dot-prefix of it, then the top level) and the field suffixes are
--      checked: (N) on an integer is a decimal with N digits, *T(name)
--      keys an array of structs by one of T's builtin fields, *T() makes a
--      map of a two-field T.
-- Blanks separate the items of a body; they are optional around ':' and '{',
-- required between a name and its tag, and refused after '.', after '*' and
-- before a type's '('.
--
-- The binary is itself a sproto message (group { type 0 : *type
-- protocol 1 : *protocol }) written in one fixed shape that the C loader
-- expects: types sorted by full name in byte order (a type's index there is
-- its id), fields by tag, protocols by tag; field and protocol records carry
-- one-tag skip words (01 00) for absent slots. Tags and type ids are written
-- as inline values, so each must keep (n + 1) * 2 within 16 bits
-- (string.pack refuses larger ones).
local M = {}

local byte = string.byte
local find = string.find
local sub = string.sub
local spack = string.pack
local sformat = string.format
local concat = table.concat

local BUILTIN <const> = { integer = 0, boolean = 1, string = 2, binary = 2, double = 3 }

local C_TAB <const> = 9
local C_LF <const> = 10
local C_CR <const> = 13
local C_SPACE <const> = 32
local C_HASH <const> = 35
local C_LPAREN <const> = 40
local C_RPAREN <const> = 41
local C_STAR <const> = 42
local C_DOT <const> = 46
local C_COLON <const> = 58
local C_LBRACE <const> = 123
local C_RBRACE <const> = 125

---------------------------------------------------------------------------
-- Pass 1: syntax. The state S = { text, pos, line, file }.

local function syntax_error(S)
	error(sformat("syntax error at [%s] line (%d)", S.file, S.line), 0)
end

-- Skips blanks and comments; true when it skipped anything.
local function blanks(S)
	local text, pos, line = S.text, S.pos, S.line
	local start = pos
	while true do
		local c = byte(text, pos)
		if c == C_SPACE or c == C_TAB then
			pos = pos + 1
		elseif c == C_LF then
			pos = pos + 1
			line = line + 1
		elseif c == C_CR and byte(text, pos + 1) == C_LF then
			pos = pos + 2
			line = line + 1
		elseif c == C_HASH then
			local nl = find(text, "\n", pos, true)
			if nl then
				pos = nl + 1
				line = line + 1
			else
				pos = #text + 1
			end
		else
			break
		end
	end
	S.pos, S.line = pos, line
	return pos > start
end

local function peek(S)
	return byte(S.text, S.pos)
end

local function expect(S, c)
	if byte(S.text, S.pos) ~= c then
		syntax_error(S)
	end
	S.pos = S.pos + 1
end

local function is_name_start(c)
	return c ~= nil and (c == 95 or (c >= 65 and c <= 90) or (c >= 97 and c <= 122))
end

local function name(S)
	local s, e = find(S.text, "^[A-Za-z_][A-Za-z0-9_]*", S.pos)
	if not s then
		syntax_error(S)
	end
	S.pos = e + 1
	return sub(S.text, s, e)
end

local function tag(S)
	local s, e = find(S.text, "^[0-9]+", S.pos)
	if not s then
		syntax_error(S)
	end
	S.pos = e + 1
	return math.tointeger(tonumber(sub(S.text, s, e))) or tonumber(sub(S.text, s, e))
end

-- A type reference: name { '.' name }, no blanks inside.
local function typeref(S)
	local s = S.pos
	name(S)
	while peek(S) == C_DOT do
		S.pos = S.pos + 1
		name(S)
	end
	return sub(S.text, s, S.pos - 1)
end

local struct_body

-- name tag ':' ['*'] typeref ['(' [digits | name] ')']
local function field(S, node)
	local line = S.line
	local fname = name(S)
	if not blanks(S) then
		syntax_error(S)
	end
	local ftag = tag(S)
	blanks(S)
	expect(S, C_COLON)
	blanks(S)
	local array = false
	if peek(S) == C_STAR then
		array = true
		S.pos = S.pos + 1
	end
	local ref = typeref(S)
	local suffix
	if peek(S) == C_LPAREN then
		S.pos = S.pos + 1
		blanks(S)
		local s, e = find(S.text, "^[0-9]+", S.pos)
		if s then
			suffix = tonumber(sub(S.text, s, e))
			S.pos = e + 1
		elseif is_name_start(peek(S)) then
			suffix = name(S)
		else
			suffix = ""
		end
		blanks(S)
		expect(S, C_RPAREN)
	end
	node.fields[#node.fields + 1] = {
		name = fname, tag = ftag, array = array, ref = ref, suffix = suffix, line = line,
	}
end

-- '.' name '{' body '}', inside a type whose full name is `scope` (or at the
-- top level when scope is nil).
local function typedef(S, scope)
	expect(S, C_DOT)
	local tname = name(S)
	blanks(S)
	expect(S, C_LBRACE)
	return struct_body(S, scope and (scope .. "." .. tname) or tname)
end

-- After '{': fields and nested types up to the matching '}'.
function struct_body(S, fullname)
	local node = { name = fullname, fields = {}, children = {} }
	blanks(S)
	while peek(S) ~= C_RBRACE do
		local c = peek(S)
		if c == C_DOT then
			node.children[#node.children + 1] = typedef(S, fullname)
		elseif is_name_start(c) then
			field(S, node)
		else
			syntax_error(S)
		end
		local sep = blanks(S)
		if peek(S) ~= C_RBRACE and not sep then
			syntax_error(S)
		end
	end
	S.pos = S.pos + 1
	return node
end

-- name tag '{' { ('request' | 'response') (typeref | '{' body '}') } '}'
local function protocol(S)
	local pname = name(S)
	if not blanks(S) then
		syntax_error(S)
	end
	local node = { name = pname, tag = tag(S), parts = {} }
	blanks(S)
	expect(S, C_LBRACE)
	blanks(S)
	while peek(S) ~= C_RBRACE do
		local kind = name(S)
		if kind ~= "request" and kind ~= "response" then
			S.pos = S.pos - #kind
			syntax_error(S)
		end
		local sep = blanks(S)
		if peek(S) == C_LBRACE then
			S.pos = S.pos + 1
			node.parts[#node.parts + 1] = {
				kind = kind, body = struct_body(S, pname .. "." .. kind),
			}
		else
			if not sep then
				syntax_error(S)
			end
			node.parts[#node.parts + 1] = { kind = kind, ref = typeref(S) }
		end
		sep = blanks(S)
		if peek(S) ~= C_RBRACE and not sep then
			syntax_error(S)
		end
	end
	S.pos = S.pos + 1
	return node
end

local function parse_syntax(text, file)
	local S = { text = text, pos = 1, line = 1, file = file }
	local types, protocols = {}, {}
	blanks(S)
	while S.pos <= #text do
		local c = peek(S)
		if c == C_DOT then
			types[#types + 1] = typedef(S, nil)
		elseif is_name_start(c) then
			protocols[#protocols + 1] = protocol(S)
		else
			syntax_error(S)
		end
		local sep = blanks(S)
		if S.pos <= #text and not sep then
			syntax_error(S)
		end
	end
	return types, protocols
end

---------------------------------------------------------------------------
-- Pass 2: meaning.

-- Registers node and its nested types in `all` (full name -> node), in order.
local function register(all, order, node)
	if all[node.name] then
		error("redefined " .. node.name, 0)
	end
	all[node.name] = node
	order[#order + 1] = node
	local names, tags = {}, {}
	for _, f in ipairs(node.fields) do
		if names[f.name] then
			error(sformat("redefine %s in type %s", f.name, node.name), 0)
		end
		names[f.name] = true
		if tags[f.tag] then
			error(sformat("redefine tag %s in type %s", f.tag, node.name), 0)
		end
		tags[f.tag] = true
	end
	for _, child in ipairs(node.children) do
		register(all, order, child)
	end
end

-- The full name a field's type reference stands for, or nil.
local function resolve(all, scope, ref)
	local prefix = scope
	while prefix do
		local full = prefix .. "." .. ref
		if all[full] then
			return full
		end
		prefix = prefix:match("^(.*)%.[^.]*$")
	end
	if all[ref] then
		return ref
	end
	return nil
end

local function field_by_name(node, fname)
	for _, f in ipairs(node.fields) do
		if f.name == fname then
			return f
		end
	end
	return nil
end

local function lowest_tag_field(node)
	local low
	for _, f in ipairs(node.fields) do
		if low == nil or f.tag < low.tag then
			low = f
		end
	end
	return low
end

-- Fills f.buildin / f.extra / f.struct / f.key / f.map for field f of node.
local function check_field(all, node, f)
	local b = BUILTIN[f.ref]
	local suffix = f.suffix
	if b then
		f.buildin = b
		if f.ref == "binary" then
			f.extra = 1
		end
		if math.type(suffix) ~= nil then
			assert(f.ref == "integer" or f.array)
			if f.ref == "integer" then
				f.extra = suffix
			end
		end
		return
	end
	local full = resolve(all, node.name, f.ref)
	if not full then
		error(sformat("Undefined type %s in type %s", f.ref, node.name), 0)
	end
	f.struct = full
	if suffix == nil then
		return
	end
	if not f.array then
		assert(math.type(suffix) == nil)
		return
	end
	local sub_node = all[full]
	if suffix == "" then
		if #sub_node.fields ~= 2 then
			error(sformat("Invalid map definition: %s, must only have two fields", f.name), 0)
		end
		local key = lowest_tag_field(sub_node)
		if not BUILTIN[key.ref] or key.array then
			error(sformat("Invalid map definition: %s, key %s must be a builtin type",
				f.name, key.name), 0)
		end
		f.key = key.tag
		f.map = true
	else
		local key = field_by_name(sub_node, tostring(suffix))
		if not key or not BUILTIN[key.ref] or key.array then
			error("Invalid map index :" .. tostring(suffix), 0)
		end
		f.key = key.tag
	end
end

local function check_protocols(all, order, protocols)
	local by_name, by_tag = {}, {}
	for _, p in ipairs(protocols) do
		if by_name[p.name] then
			error("redefined " .. p.name, 0)
		end
		if by_tag[p.tag] then
			error(sformat("redefined protocol tag %s at %s", p.tag, p.name), 0)
		end
		by_name[p.name], by_tag[p.tag] = p, p
		local seen = {}
		for _, part in ipairs(p.parts) do
			if seen[part.kind] then
				error(sformat("redefine %s in protocol %s", part.kind, p.name), 0)
			end
			seen[part.kind] = true
			if part.body then
				register(all, order, part.body)
				p[part.kind] = part.body.name
			elseif part.ref == "nil" then
				if part.kind == "response" then
					p.confirm = true
				end
			else
				p[part.kind] = part.ref
			end
		end
	end
end

local function bytes_less(a, b)
	local n = math.min(#a, #b)
	for i = 1, n do
		local x, y = byte(a, i), byte(b, i)
		if x ~= y then
			return x < y
		end
	end
	return #a < #b
end

local function by_tag(a, b)
	return a.tag < b.tag
end

---------------------------------------------------------------------------
-- The binary.

local SKIP <const> = "\1\0"
local DATA <const> = "\0\0"

local function inline(n)
	return spack("<I2", (n + 1) * 2)
end

local function item(s)
	return spack("<s4", s)
end

local function array(records)
	local parts = {}
	for i, r in ipairs(records) do
		parts[i] = item(r)
	end
	return item(concat(parts))
end

-- words: the field words; the record is their count, the words, then the name.
local function record(words, rname)
	return spack("<I2", #words) .. concat(words) .. item(rname)
end

local function field_record(f, ids)
	local words = { DATA }
	if f.buildin then
		words[2] = inline(f.buildin)
		words[3] = f.extra and inline(f.extra) or SKIP
	else
		words[2] = SKIP
		words[3] = inline(ids[f.struct])
	end
	words[4] = inline(f.tag)
	if f.array then
		words[#words + 1] = inline(1)
		if f.key then
			words[#words + 1] = inline(f.key)
			if f.map then
				words[#words + 1] = inline(1)
			end
		end
	end
	return record(words, f.name)
end

local function type_record(node, ids)
	if #node.fields == 0 then
		return "\1\0" .. DATA .. item(node.name)
	end
	local fields = {}
	for i, f in ipairs(node.fields) do
		fields[i] = f
	end
	table.sort(fields, by_tag)
	local records = {}
	for i, f in ipairs(fields) do
		records[i] = field_record(f, ids)
	end
	return "\2\0" .. DATA .. DATA .. item(node.name) .. array(records)
end

local function protocol_record(p, all, ids)
	local words = { DATA, inline(p.tag) }
	local function id(kind)
		local ref = p[kind]
		if not all[ref] then
			error(sformat("Undefined %s type %s in protocol %s", kind, ref, p.name), 0)
		end
		return ids[ref]
	end
	if p.request or p.response or p.confirm then
		words[3] = p.request and inline(id("request")) or SKIP
		if p.response then
			words[4] = inline(id("response"))
		elseif p.confirm then
			words[4] = SKIP
			words[5] = inline(1)
		end
	end
	return record(words, p.name)
end

function M.parse(text, filename)
	assert(type(text) == "string", "sprotoparser.parse: text must be a string")
	local type_nodes, protocols = parse_syntax(text, filename or "=text")
	local all, order = {}, {}
	for _, node in ipairs(type_nodes) do
		register(all, order, node)
	end
	check_protocols(all, order, protocols)
	for _, node in ipairs(order) do
		for _, f in ipairs(node.fields) do
			check_field(all, node, f)
		end
	end
	local names = {}
	for i, node in ipairs(order) do
		names[i] = node.name
	end
	table.sort(names, bytes_less)
	local ids = {}
	for i, n in ipairs(names) do
		ids[n] = i - 1
	end
	local type_records = {}
	for i, n in ipairs(names) do
		type_records[i] = type_record(all[n], ids)
	end
	table.sort(protocols, by_tag)
	local proto_records = {}
	for i, p in ipairs(protocols) do
		proto_records[i] = protocol_record(p, all, ids)
	end
	if #type_records == 0 then
		assert(#proto_records == 0)
		return "\0\0"
	end
	if #proto_records == 0 then
		return "\1\0" .. DATA .. array(type_records)
	end
	return "\2\0" .. DATA .. DATA .. array(type_records) .. array(proto_records)
end

function M.dump(bin)
	local line = {}
	for i = 1, #bin do
		line[#line + 1] = sformat("%02x", byte(bin, i))
		if #line == 16 then
			print(concat(line, " "))
			line = {}
		end
	end
	if #line > 0 then
		print(concat(line, " "))
	end
end

return M
