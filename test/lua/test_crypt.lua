-- skynet.crypt: the export list, every reference vector (hashkey, DH, hmac64,
-- hmac64_md5, hmac_hash, DES in both padding modes, base64, hex, SHA-1,
-- HMAC-SHA1, xor_str), the lenient decoders' quirks and every error text.
-- client.crypt and the compat name crypt give the same functions.
local t = require "testlib"
local crypt = require "skynet.crypt"

local hex, bin = t.hex, t.unhex

local function bytes(got, want_hex, what)
	local want = bin(want_hex)
	if got ~= want then
		error(string.format("%s: got %s, want %s", what, hex(got), hex(want)), 2)
	end
end

local KEY8 <const> = "12345678"
local K0123 <const> = "\x01\x23\x45\x67\x89\xab\xcd\xef"
local ZERO8 <const> = string.rep("\0", 8)
local FF8 <const> = string.rep("\xff", 8)
local P <const> = "\xc5\xff\xff\xff\xff\xff\xff\xff"

local EXPORTS <const> = {
	"hashkey", "randomkey", "desencode", "desdecode", "hexencode", "hexdecode", "hmac64",
	"hmac64_md5", "dhexchange", "dhsecret", "base64encode", "base64decode", "sha1",
	"hmac_sha1", "hmac_hash", "xor_str",
}

t.case("export list is exact; padding table", function()
	local want = { padding = "table" }
	for _, k in ipairs(EXPORTS) do
		want[k] = "function"
	end
	for k, v in pairs(crypt) do
		t.eq(type(v), want[k], "type of crypt." .. tostring(k))
	end
	for k, ty in pairs(want) do
		t.eq(type(crypt[k]), ty, "crypt." .. k)
	end
	t.eq(crypt.padding.iso7816_4, 0, "padding.iso7816_4")
	t.eq(crypt.padding.pkcs7, 1, "padding.pkcs7")
	local n = 0
	for _ in pairs(crypt.padding) do
		n = n + 1
	end
	t.eq(n, 2, "keys in padding")
end)

t.case("client.crypt and the compat name give the same functions", function()
	local client = require "client.crypt"
	for _, k in ipairs(EXPORTS) do
		t.eq(type(client[k]), "function", "client.crypt." .. k)
	end
	bytes(client.hashkey("hello"), "99 30 92 0f cb ef 18 67", "client hashkey")
	bytes(client.dhexchange(KEY8), "a1 8e 89 af 97 22 2f 0e", "client dhexchange")
	t.eq(client.padding.pkcs7, 1, "client padding")
	local saved = package.path
	package.path = "./lualib/compat10/?.lua;" .. saved
	local ok, compat = pcall(require, "crypt")
	package.path = saved
	t.ok(ok, "require crypt: " .. tostring(compat))
	t.ok(compat == crypt, "require 'crypt' is the skynet.crypt table")
end)

t.case("hashkey vectors", function()
	bytes(crypt.hashkey(""), "05 15 00 00 a7 c6 67 4e", "hashkey('')")
	bytes(crypt.hashkey("hello"), "99 30 92 0f cb ef 18 67", "hashkey(hello)")
	bytes(crypt.hashkey("skynet"), "43 be f4 1b ac 48 ce 7f", "hashkey(skynet)")
	bytes(crypt.hashkey(string.rep("\xff", 100)), "61 34 a1 69 ab 17 a6 1f", "hashkey(ff x100)")
	bytes(crypt.hashkey("123"), "fb 89 87 0b 60 ca 9a 1a", "hashkey('123')")
	bytes(crypt.hashkey(123), "fb 89 87 0b 60 ca 9a 1a", "hashkey(123)")
	t.raises("string expected", crypt.hashkey, {})
	t.raises("string expected", crypt.hashkey)
end)

t.case("randomkey: 8 bytes, not all zero, not repeating", function()
	local seen = {}
	for _ = 1, 64 do
		local k = crypt.randomkey()
		t.eq(#k, 8, "randomkey length")
		t.ok(k ~= ZERO8, "randomkey all zero")
		t.ok(not seen[k], "randomkey repeated " .. hex(k))
		seen[k] = true
		t.eq(#crypt.dhexchange(k), 8, "dhexchange(randomkey())")
	end
end)

t.case("dhexchange vectors", function()
	bytes(crypt.dhexchange("\1" .. string.rep("\0", 7)), "05 00 00 00 00 00 00 00", "dh(1)")
	bytes(crypt.dhexchange("\2" .. string.rep("\0", 7)), "19 00 00 00 00 00 00 00", "dh(2)")
	bytes(crypt.dhexchange(KEY8), "a1 8e 89 af 97 22 2f 0e", "dh(12345678)")
	bytes(crypt.dhexchange(K0123), "3d cb 75 f5 0f d0 29 72", "dh(0123..ef)")
	bytes(crypt.dhexchange(FF8), "4e 2e a6 ba f6 51 b3 77", "dh(ff x8)")
	bytes(crypt.dhexchange(bin("c4 ff ff ff ff ff ff ff")), "01 00 00 00 00 00 00 00", "dh(P-1)")
end)

t.case("dhsecret vectors, both pairings, the base-P quirk", function()
	local want = "ee c6 7b 59 b0 3b 86 2d"
	bytes(crypt.dhsecret(crypt.dhexchange(KEY8), K0123), want, "dhsecret(pub(a), b)")
	bytes(crypt.dhsecret(crypt.dhexchange(K0123), KEY8), want, "dhsecret(pub(b), a)")
	local two, three = "\2" .. string.rep("\0", 7), "\3" .. string.rep("\0", 7)
	bytes(crypt.dhsecret(two, three), "08 00 00 00 00 00 00 00", "2^3")
	bytes(crypt.dhsecret(FF8, FF8), "2c 4f 08 1c 6a c8 d4 44", "ff^ff")
	bytes(crypt.dhsecret(P, "\1" .. string.rep("\0", 7)), "c5 ff ff ff ff ff ff ff", "P^1")
	bytes(crypt.dhsecret(P, two), "00 00 00 00 00 00 00 00", "P^2")
	-- random pairs agree too
	for _ = 1, 8 do
		local a, b = crypt.randomkey(), crypt.randomkey()
		t.eq(crypt.dhsecret(crypt.dhexchange(a), b), crypt.dhsecret(crypt.dhexchange(b), a),
			"shared secret")
	end
end)

t.case("dh errors", function()
	t.raises("Invalid dh uint64 key", crypt.dhexchange, "1234567")
	t.raises("Invalid dh uint64 key", crypt.dhexchange, "123456789")
	t.raises("Invalid dh uint64 key", crypt.dhexchange, "")
	t.raises("Can't be 0", crypt.dhexchange, ZERO8)
	t.raises("Invalid uint64 x", crypt.dhsecret, "1234567", KEY8)
	t.raises("Invalid uint64 y", crypt.dhsecret, KEY8, "123456789")
	t.raises("Can't be 0", crypt.dhsecret, ZERO8, KEY8)
	t.raises("Can't be 0", crypt.dhsecret, KEY8, ZERO8)
	t.raises("string expected", crypt.dhsecret, KEY8)
end)

t.case("hmac64 and hmac64_md5 vectors and errors", function()
	local cases = {
		{ KEY8, "abcdefgh", "ac 9f fd a9 54 7a 02 7a", "c2 a3 47 48 cf 83 4a f4" },
		{ ZERO8, ZERO8, "a2 a9 0f e5 ec 19 0e e5", "54 ff be bd 72 81 33 f0" },
		{ K0123, bin("fe dc ba 98 76 54 32 10"), "29 82 00 06 ac d5 03 b1",
			"82 d0 ed c5 c7 00 a4 cd" },
	}
	for i, c in ipairs(cases) do
		bytes(crypt.hmac64(c[1], c[2]), c[3], "hmac64 #" .. i)
		bytes(crypt.hmac64_md5(c[1], c[2]), c[4], "hmac64_md5 #" .. i)
	end
	for _, f in ipairs { crypt.hmac64, crypt.hmac64_md5 } do
		t.raises("Invalid uint64 x", f, "1234567", KEY8)
		t.raises("Invalid uint64 x", f, "", KEY8)
		t.raises("Invalid uint64 y", f, KEY8, "123456789")
		t.raises("Invalid uint64 y", f, KEY8, "")
	end
end)

t.case("hmac_hash vectors and errors", function()
	bytes(crypt.hmac_hash(KEY8, "hello"), "c7 c8 36 ee ff bd d9 48", "hmac_hash(12345678, hello)")
	bytes(crypt.hmac_hash(ZERO8, ""), "ae 30 de a8 97 c7 48 0a", "hmac_hash(0, '')")
	bytes(crypt.hmac_hash(K0123, "skynet"), "05 4a 6c 6e d5 ac 79 49", "hmac_hash(0123, skynet)")
	t.eq(crypt.hmac_hash(KEY8, "hello"), crypt.hmac64(crypt.hashkey("hello"), KEY8),
		"hmac_hash = hmac64(hashkey(text), key)")
	t.raises("Invalid uint64 key", crypt.hmac_hash, "1234567", "hello")
	t.raises("Invalid uint64 key", crypt.hmac_hash, "123456789", "hello")
end)

t.case("DES vectors, both paddings", function()
	-- the textbook single-block vector: the first block of the output
	local out = crypt.desencode(bin("13 34 57 79 9b bc df f1"), bin("01 23 45 67 89 ab cd ef"))
	bytes(out:sub(1, 8), "85 e8 13 54 0f 0a b4 05", "textbook DES")
	local V = {
		{ "", "8d 3d 43 8a 71 8b 45 10", "fe b9 59 b7 d4 64 2f cb" },
		{ "hello", "7e 38 17 79 24 35 71 56", "ba 16 c6 a0 25 71 25 af" },
		{ "12345678", "96 d0 02 88 78 d5 8c 89 8d 3d 43 8a 71 8b 45 10",
			"96 d0 02 88 78 d5 8c 89 fe b9 59 b7 d4 64 2f cb" },
		{ "0123456789", "8b b4 7a 0c f0 a9 62 6d 36 e5 df 09 ce 56 76 bf",
			"8b b4 7a 0c f0 a9 62 6d 3a 6b 42 b3 fd 75 46 cc" },
	}
	for _, v in ipairs(V) do
		local what = string.format("des(%q)", v[1])
		bytes(crypt.desencode(KEY8, v[1]), v[2], what .. " default")
		bytes(crypt.desencode(KEY8, v[1], 0), v[2], what .. " iso")
		bytes(crypt.desencode(KEY8, v[1], crypt.padding.iso7816_4), v[2], what .. " iso name")
		bytes(crypt.desencode(KEY8, v[1], 1), v[3], what .. " pkcs7")
		t.eq(crypt.desdecode(KEY8, bin(v[2])), v[1], what .. " decode iso")
		t.eq(crypt.desdecode(KEY8, bin(v[3]), crypt.padding.pkcs7), v[1], what .. " decode pkcs7")
	end
end)

t.case("DES round trips and lengths", function()
	local key = crypt.randomkey()
	for len = 0, 33 do
		local text = string.rep("\0", len // 2) .. string.rep("\x80", len - len // 2)
		for mode = 0, 1 do
			local c = crypt.desencode(key, text, mode)
			t.eq(#c, (len + 8) & ~7, "cipher length")
			t.eq(crypt.desdecode(key, c, mode), text, "round trip")
		end
	end
end)

t.case("DES unpadding rules", function()
	-- one cipher block whose plaintext is the given 8 bytes
	local function block(plain)
		return crypt.desencode(KEY8, plain):sub(1, 8)
	end
	t.eq(crypt.desdecode(KEY8, block("abcdefg\x80")), "abcdefg", "iso 80 last")
	t.eq(crypt.desdecode(KEY8, block("\x80" .. string.rep("\0", 7))), "", "iso 80 first")
	t.eq(crypt.desdecode(KEY8, block("abc\x80\0\0\0\0")), "abc", "iso 80 then zeros")
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, block(ZERO8))
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, block("abcdefgh"))
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, block("abc\x80\0\0\1\0"))
	-- the padding of the other mode is refused
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, crypt.desencode(KEY8, "hello", 1))
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, crypt.desencode(KEY8, "hello", 0), 1)
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, bin("fe b9 59 b7 d4 64 2f cb"), 0)
	-- PKCS#7 checks
	t.eq(crypt.desdecode(KEY8, block("abcdefg\1"), 1), "abcdefg", "pkcs7 1")
	t.eq(crypt.desdecode(KEY8, block(string.rep("\8", 8)), 1), "", "pkcs7 8")
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, block("abcdefg\0"), 1)
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, block("abcdefg\9"), 1)
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, block(FF8), 1)
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, block("abcde\2\3\3"), 1)
	t.raises("Invalid des crypt text", crypt.desdecode, KEY8, block("a\7\7\7\7\7\6\7"), 1)
	t.eq(crypt.desdecode(KEY8, block("abcd\4\4\4\4") .. block("\1\7\7\7\7\7\7\7"), 1),
		"abcd\4\4\4\4\1", "pkcs7 two blocks")
	-- only the last block is looked at
	t.eq(crypt.desdecode(KEY8, block(ZERO8) .. block("xyz\x80\0\0\0\0")), ZERO8 .. "xyz",
		"two blocks")
end)

t.case("DES errors", function()
	t.raises("Invalid key size 7, need 8 bytes", crypt.desencode, "1234567", "x")
	t.raises("Invalid key size 9, need 8 bytes", crypt.desencode, "123456789", "x")
	t.raises("Invalid key size 0, need 8 bytes", crypt.desdecode, "", ZERO8)
	t.raises("Invalid padding mode 2", crypt.desencode, KEY8, "x", 2)
	t.raises("Invalid padding mode -1", crypt.desdecode, KEY8, ZERO8, -1)
	t.raises("Invalid des crypt text length 0", crypt.desdecode, KEY8, "")
	t.raises("Invalid des crypt text length 7", crypt.desdecode, KEY8, "1234567")
	t.raises("Invalid des crypt text length 9", crypt.desdecode, KEY8, "123456789")
	t.raises("string expected", crypt.desencode, KEY8)
end)

t.case("hex vectors and the decoder's quirks", function()
	t.eq(crypt.hexencode("\0\1\171\255"), "0001abff", "hexencode")
	t.eq(crypt.hexencode(""), "", "hexencode('')")
	t.eq(crypt.hexdecode("0001abff"), "\0\1\171\255", "hexdecode")
	t.eq(crypt.hexdecode(""), "", "hexdecode('')")
	local all = {}
	for i = 0, 255 do
		all[#all + 1] = string.char(i)
	end
	all = table.concat(all)
	t.eq(crypt.hexdecode(crypt.hexencode(all)), all, "every byte round trip")
	t.eq(crypt.hexdecode("0g"), "\x10", "0g")
	t.eq(crypt.hexdecode("gg"), "\x10", "gg")
	t.eq(crypt.hexdecode("g0"), "\x00", "g0")
	t.eq(crypt.hexdecode("WX"), "\x01", "WX")
	t.eq(crypt.hexdecode("_a"), "\x8a", "_a")
	t.eq(crypt.hexdecode("`f"), "\x9f", "`f")
	t.raises("Invalid hex text", crypt.hexdecode, "AB")
	t.raises("Invalid hex text", crypt.hexdecode, "0h")
	t.raises("Invalid hex text", crypt.hexdecode, "aV")
	t.raises("Invalid hex text", crypt.hexdecode, "0:")
	t.raises("Invalid hex text size 3", crypt.hexdecode, "abc")
	t.raises("Invalid hex text size 1", crypt.hexdecode, "a")
end)

-- A plain Lua encoder, to check the C one across its internal chunks.
local B64 <const> = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function lua_base64(s)
	local out = {}
	for i = 1, #s, 3 do
		local a, b, c = s:byte(i, i + 2)
		local n = (a << 16) | ((b or 0) << 8) | (c or 0)
		local q = {}
		for j = 1, 4 do
			local d = (n >> (6 * (4 - j))) & 63
			q[j] = B64:sub(d + 1, d + 1)
		end
		if not b then
			q[3], q[4] = "=", "="
		elseif not c then
			q[4] = "="
		end
		out[#out + 1] = table.concat(q)
	end
	return table.concat(out)
end

t.case("base64 encoding vectors", function()
	local V = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" }
	for i, want in ipairs(V) do
		t.eq(crypt.base64encode(("foobar"):sub(1, i - 1)), want, "base64encode #" .. i)
	end
	t.eq(crypt.base64encode("\0\xff\xfe\1"), "AP/+AQ==", "base64encode(00 ff fe 01)")
	local rng = 12345
	local parts = {}
	for i = 1, 3 * 4096 * 2 + 7 do
		rng = (rng * 1103515245 + 12345) % 2147483648
		parts[i] = string.char(rng >> 16 & 255)
	end
	local big = table.concat(parts)
	local enc = crypt.base64encode(big)
	t.eq(enc, lua_base64(big), "long input")
	t.eq(crypt.base64decode(enc), big, "long round trip")
	for len = 0, 20 do
		local s = big:sub(1, len)
		t.eq(crypt.base64decode(crypt.base64encode(s)), s, "round trip " .. len)
	end
end)

t.case("base64 lenient decoding", function()
	t.eq(crypt.base64decode("Zm 9v\nYmFy"), "foobar", "junk inside")
	t.eq(crypt.base64decode(""), "", "empty")
	t.eq(crypt.base64decode("Zm9vYg"), "foob", "no padding")
	t.eq(crypt.base64decode("Zm9vYg="), "foob", "one =")
	t.eq(crypt.base64decode("Zm9vYg=="), "foob", "two =")
	t.eq(crypt.base64decode("Zg\n"), "f", "short group then junk")
	t.eq(crypt.base64decode("Zg==Zg=="), "ff", "independent groups")
	t.eq(crypt.base64decode("Zm8"), "fo", "three symbols")
	t.eq(crypt.base64decode("-Z_m9v"), "foo", "junk before and inside")
	t.eq(crypt.base64decode("AP/+AQ=="), "\0\xff\xfe\1", "+ and /")
	local bad = { "Zm9v\n", "Zm9vYmFy ", "Zm9vYmFy\r\n", "Z", "Zh==", "Zm9=", "====", "-_-_",
		"=Zg=", "Z=g=", "Zg=a", "Zm9vY", " " }
	for _, s in ipairs(bad) do
		local ok, err = pcall(crypt.base64decode, s)
		t.ok(not ok, string.format("base64decode(%q) should fail", s))
		t.ok(tostring(err):find("Invalid base64 text", 1, true), "error text: " .. tostring(err))
	end
end)

t.case("sha1 and hmac_sha1", function()
	t.eq(hex(crypt.sha1("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d", "sha1(abc)")
	t.eq(hex(crypt.sha1("")), "da39a3ee5e6b4b0d3255bfef95601890afd80709", "sha1('')")
	t.eq(hex(crypt.hmac_sha1("key", "The quick brown fox jumps over the lazy dog")),
		"de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9", "hmac_sha1 fox")
	t.eq(hex(crypt.hmac_sha1("", "")), "fbdb1d1b18aa6c08324b7d64b71fb76370690e1d", "empty")
	t.eq(hex(crypt.hmac_sha1(string.rep("\xaa", 80),
		"Test Using Larger Than Block-Size Key - Hash Key First")),
		"aa4ae5e15272d00e95705637ce8a3b55ed402112", "RFC 2202 #6 (long key)")
	t.eq(hex(crypt.hmac_sha1(string.rep("k", 64), "msg")),
		"1b372955c5162b8ba20a1974833498d3f7ec728a", "64-byte key")
	t.eq(hex(crypt.hmac_sha1(string.rep("k", 65), "msg")),
		"b75a0671ed2de039c033e5440f4bf8564f37fefe", "65-byte key")
	t.raises("string expected", crypt.hmac_sha1, "key")
end)

t.case("xor_str", function()
	t.eq(crypt.xor_str("hello", "k"), "\x03\x0e\x07\x07\x04", "xor_str(hello, k)")
	t.eq(crypt.xor_str("", "k"), "", "empty text")
	t.eq(crypt.xor_str("abcdef", "\1\2"), "\x60\x60\x62\x66\x64\x64", "repeating key")
	t.eq(crypt.xor_str(crypt.xor_str("secret text", "key"), "key"), "secret text", "inverse")
	t.raises("Can't xor empty string", crypt.xor_str, "hello", "")
	t.raises("Can't xor empty string", crypt.xor_str, "", "")
end)

t.start()
