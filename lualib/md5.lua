-- md5: the md5.core C module (sum, exor, crypt, decrypt) plus two helpers
-- written over it: sumhexa (the digest in lowercase hex) and hmacmd5
-- (RFC 2104 HMAC-MD5, message first, key second, in lowercase hex).
local core = require "md5.core"

local BLOCK <const> = 64 -- MD5's block size, in bytes

local function tohex(s)
	return (s:gsub(".", function(c)
		return string.format("%02x", c:byte())
	end))
end

local function check_string(v, func, what)
	local t = type(v)
	if t == "number" then
		return tostring(v)
	elseif t ~= "string" then
		error(string.format("md5.%s: %s must be a string (%s)", func, what, t), 3)
	end
	return v
end

function core.sumhexa(s)
	return tohex(core.sum(s))
end

function core.hmacmd5(data, key)
	data = check_string(data, "hmacmd5", "data")
	key = check_string(key, "hmacmd5", "key")
	if #key > BLOCK then
		key = core.sum(key)
	end
	key = key .. string.rep("\0", BLOCK - #key)
	local inner = core.sum(core.exor(key, string.rep("\x36", BLOCK)) .. data)
	return tohex(core.sum(core.exor(key, string.rep("\x5c", BLOCK)) .. inner))
end

return core
