-- A small JSON encoder and decoder for the tests that speak JSON (the
-- browser test's DevTools client). Not a service: require "json_min".
-- encode: tables with keys 1..n are arrays (an empty table is an object),
-- others objects with string keys; json.null stands for null. decode:
-- the whole grammar; null becomes json.null; raises on bad input.
local M = {}

M.null = setmetatable({}, { __tostring = function() return "null" end })

local sformat = string.format
local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
	["\r"] = "\\r", ["\t"] = "\\t" }

local function encode_string(s)
	return '"' .. s:gsub('[%c"\\]', function(c)
		return ESC[c] or sformat("\\u%04x", c:byte())
	end) .. '"'
end

local function encode(v, out)
	local t = type(v)
	if v == M.null or v == nil then
		out[#out + 1] = "null"
	elseif t == "boolean" then
		out[#out + 1] = tostring(v)
	elseif t == "number" then
		out[#out + 1] = math.type(v) == "integer" and tostring(v) or sformat("%.17g", v)
	elseif t == "string" then
		out[#out + 1] = encode_string(v)
	elseif t == "table" then
		if #v > 0 then
			out[#out + 1] = "["
			for i = 1, #v do
				if i > 1 then
					out[#out + 1] = ","
				end
				encode(v[i], out)
			end
			out[#out + 1] = "]"
		else
			out[#out + 1] = "{"
			local first = true
			for k, x in pairs(v) do
				if not first then
					out[#out + 1] = ","
				end
				first = false
				out[#out + 1] = encode_string(tostring(k))
				out[#out + 1] = ":"
				encode(x, out)
			end
			out[#out + 1] = "}"
		end
	else
		error("json: cannot encode a " .. t)
	end
end

function M.encode(v)
	local out = {}
	encode(v, out)
	return table.concat(out)
end

local decode_value

local function skip(s, i)
	return s:find("[^ \t\r\n]", i) or #s + 1
end

local function decode_string(s, i)
	local out = {}
	i = i + 1
	while true do
		local c = s:sub(i, i)
		if c == "" then
			error("json: unfinished string")
		elseif c == '"' then
			return table.concat(out), i + 1
		elseif c == "\\" then
			local e = s:sub(i + 1, i + 1)
			local map = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }
			if e == "u" then
				local cp = tonumber(s:sub(i + 2, i + 5), 16) or error("json: bad \\u escape")
				i = i + 6
				if cp >= 0xd800 and cp < 0xdc00 and s:sub(i, i + 1) == "\\u" then
					local lo = tonumber(s:sub(i + 2, i + 5), 16)
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
					i = i + 6
				end
				out[#out + 1] = utf8.char(cp)
			else
				out[#out + 1] = map[e] or error("json: bad escape")
				i = i + 2
			end
		else
			local j = s:find('["\\]', i) or #s + 1
			out[#out + 1] = s:sub(i, j - 1)
			i = j
		end
	end
end

function decode_value(s, i)
	i = skip(s, i)
	local c = s:sub(i, i)
	if c == "{" then
		local t = {}
		i = skip(s, i + 1)
		if s:sub(i, i) == "}" then
			return t, i + 1
		end
		while true do
			local k
			k, i = decode_string(s, skip(s, i))
			i = skip(s, i)
			assert(s:sub(i, i) == ":", "json: expected ':'")
			t[k], i = decode_value(s, i + 1)
			i = skip(s, i)
			c = s:sub(i, i)
			if c == "}" then
				return t, i + 1
			end
			assert(c == ",", "json: expected ','")
			i = i + 1
		end
	elseif c == "[" then
		local t = {}
		i = skip(s, i + 1)
		if s:sub(i, i) == "]" then
			return t, i + 1
		end
		while true do
			local v
			v, i = decode_value(s, i)
			t[#t + 1] = v
			i = skip(s, i)
			c = s:sub(i, i)
			if c == "]" then
				return t, i + 1
			end
			assert(c == ",", "json: expected ','")
			i = i + 1
		end
	elseif c == '"' then
		return decode_string(s, i)
	elseif s:find("^true", i) then
		return true, i + 4
	elseif s:find("^false", i) then
		return false, i + 5
	elseif s:find("^null", i) then
		return M.null, i + 4
	end
	local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
	if not num or num == "" then
		error("json: unexpected input at " .. i)
	end
	return math.tointeger(tonumber(num)) or tonumber(num), i + #num
end

function M.decode(s)
	local v, i = decode_value(s, 1)
	i = skip(s, i)
	if i <= #s then
		error("json: trailing bytes")
	end
	return v
end

return M
