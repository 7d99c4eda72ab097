---@meta md5
-- Editor help: `require "md5"` (md5.core plus sumhexa and hmacmd5), for
-- services and plain lua5.4 alike.

local md5 = {}

---16 raw bytes of MD5(s).
---@param s string
---@return string
function md5.sum(s) end

---MD5(s) in lower-case hex.
---@param s string
---@return string
function md5.sumhexa(s) end

---a XOR b, byte by byte (equal lengths only).
---@param a string
---@param b string
---@return string
function md5.exor(a, b) end

---Encrypts msg with an MD5 stream cipher: one byte #seed, the seed, then the ciphertext.
---@param msg string
---@param key string at most 256 bytes
---@param seed? string at most 16 bytes (default: the current time)
---@return string
function md5.crypt(msg, key, seed) end

---The msg that md5.crypt encrypted.
---@param cipher string
---@param key string
---@return string
function md5.decrypt(cipher, key) end

---HMAC-MD5 (RFC 2104) of data with key, in lower-case hex.
---@param data string|number
---@param key string|number
---@return string
function md5.hmacmd5(data, key) end

return md5
