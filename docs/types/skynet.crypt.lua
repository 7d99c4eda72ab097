---@meta skynet.crypt
-- Editor help: `require "skynet.crypt"` (also `client.crypt` for plain
-- lua5.4 clients). Every function takes and returns strings of raw bytes;
-- an "8-byte key" is a string of exactly 8 bytes.

local crypt = {}

---An 8-byte hash of a string.
---@param str string
---@return string
function crypt.hashkey(str) end

---8 random bytes.
---@return string
function crypt.randomkey() end

---DES-encrypts text with an 8-byte key; padding (mode 0: ISO 7816-4, 1: PKCS#7) is always
---added.
---@param key string
---@param text string
---@param padding? integer 0 (default) or 1
---@return string
function crypt.desencode(key, text, padding) end

---Decrypts desencode's output (raises on bad padding).
---@param key string
---@param text string
---@param padding? integer
---@return string
function crypt.desdecode(key, text, padding) end

---Lower-case hex of the bytes.
---@param str string
---@return string
function crypt.hexencode(str) end

---Bytes of a lower-case hex string (raises on a bad digit).
---@param str string
---@return string
function crypt.hexdecode(str) end

---skynet's 8-byte HMAC of two 8-byte strings (one MD5 round).
---@param x string
---@param y string
---@return string
function crypt.hmac64(x, y) end

---8-byte HMAC of two 8-byte strings from MD5(x y x y x y).
---@param x string
---@param y string
---@return string
function crypt.hmac64_md5(x, y) end

---Diffie-Hellman public value of an 8-byte private key (mod 2^64 - 59, generator 5).
---@param key string
---@return string
function crypt.dhexchange(key) end

---Diffie-Hellman shared secret from the peer's public value and our private key.
---@param peer string
---@param key string
---@return string
function crypt.dhsecret(peer, key) end

---Base64 of the bytes.
---@param str string
---@return string
function crypt.base64encode(str) end

---Bytes of a base64 string (bytes outside the alphabet are skipped).
---@param str string
---@return string
function crypt.base64decode(str) end

---SHA-1 digest (20 raw bytes).
---@param str string
---@return string
function crypt.sha1(str) end

---HMAC-SHA1 (20 raw bytes).
---@param key string
---@param text string
---@return string
function crypt.hmac_sha1(key, text) end

---hmac64(hashkey(text), key).
---@param key string 8 bytes
---@param text string
---@return string
function crypt.hmac_hash(key, text) end

---Repeating-key XOR.
---@param str string
---@param key string
---@return string
function crypt.xor_str(str, key) end

return crypt
