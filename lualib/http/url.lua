-- http.url: splitting a request target into its path and query, and
-- decoding a query string ("+" is a space, %XX a byte).
local url = {}

local sgsub = string.gsub

local function decode_byte(h)
	return string.char(tonumber(h, 16))
end

local function decode(s)
	s = sgsub(s, "+", " ")
	return (sgsub(s, "%%(..)", decode_byte))
end
url.decode = decode

-- path (decoded) and query (raw, "" when there is none).
function url.parse(u)
	local path, query = u:match "^([^?]*)%??(.*)$"
	return decode(path), query
end

-- key=value pairs separated by "&", decoded; a repeated key becomes an
-- array of its values in order.
function url.parse_query(q)
	local r = {}
	for k, v in q:gmatch "&?([^=]*)=([^&]*)" do
		k, v = decode(k), decode(v)
		local cur = r[k]
		if cur == nil then
			r[k] = v
		elseif type(cur) == "table" then
			cur[#cur + 1] = v
		else
			r[k] = { cur, v }
		end
	end
	return r
end

return url
