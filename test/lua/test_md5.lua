-- md5 (lualib/md5.lua over md5.core): the key set, the digest and HMAC-MD5
-- vectors, exor, the seeded stream cipher's reference bytes, round trips and
-- every error path.
local t = require "testlib"
local md5 = require "md5"

local hex, bin = t.hex, t.unhex

t.case("md5 is md5.core plus sumhexa and hmacmd5", function()
	t.ok(md5 == require "md5.core", "require 'md5' returns the md5.core table")
	local want = {
		sum = "function", sumhexa = "function", hmacmd5 = "function", exor = "function",
		crypt = "function", decrypt = "function", _VERSION = "string", _COPYRIGHT = "string",
		_DESCRIPTION = "string",
	}
	for k, v in pairs(md5) do
		t.eq(type(v), want[k], "type of md5." .. tostring(k))
	end
	for k, ty in pairs(want) do
		t.eq(type(md5[k]), ty, "md5." .. k)
	end
	t.eq(md5._VERSION, "MD5 1.2", "_VERSION")
	t.eq(md5._COPYRIGHT, "Copyright (C) 2003-2013 PUC-Rio", "_COPYRIGHT")
	t.eq(md5._DESCRIPTION, "Basic cryptographic facilities", "_DESCRIPTION")
end)

t.case("sum and sumhexa vectors", function()
	t.eq(md5.sumhexa(""), "d41d8cd98f00b204e9800998ecf8427e", "sumhexa('')")
	t.eq(md5.sumhexa("abc"), "900150983cd24fb0d6963f7d28e17f72", "sumhexa(abc)")
	t.eq(md5.sumhexa(("x"):rep(200)), "30a83621ce5422fbdfdd539777458c78", "sumhexa(x*200)")
	t.eq(md5.sum("abc"), bin("900150983cd24fb0d6963f7d28e17f72"), "sum(abc) raw")
	t.eq(#md5.sum(""), 16, "sum length")
	t.eq(md5.sumhexa(123), md5.sumhexa("123"), "numbers read as text")
	t.raises("string expected", md5.sum, {})
end)

t.case("hmacmd5 vectors", function()
	t.eq(md5.hmacmd5("The quick brown fox jumps over the lazy dog", "key"),
		"80070713463e7749b90c2dc24911e275", "hmacmd5 fox")
	t.eq(md5.hmacmd5("data", ("k"):rep(100)), "38a034384b6cbf08275f34dc859e6d6b",
		"hmacmd5 long key")
	t.eq(md5.hmacmd5("msg", ("k"):rep(64)), "7350d7e9ec9d1235174e9ded54edfa8c", "64-byte key")
	t.eq(md5.hmacmd5("", ""), "74e6f7298a9c2d168935f58c001bad88", "empty")
	t.raises("md5.hmacmd5: key must be a string", md5.hmacmd5, "data", {})
	t.raises("md5.hmacmd5: data must be a string", md5.hmacmd5, nil, "key")
end)

t.case("exor", function()
	t.eq(md5.exor("abc", "\1\2\3"), "\x60\x60\x60", "exor vector")
	t.eq(md5.exor("", ""), "", "empty")
	t.raises("(lengths must be equal)", md5.exor, "abc", "ab")
	local err = t.raises("lengths must be equal", md5.exor, "a", "")
	t.ok(err:find("#2", 1, true), "argument 2 is blamed: " .. err)
end)

t.case("crypt reference vectors", function()
	t.eq(hex(md5.crypt("hello world, this is a test", "key", "seed")),
		"0473656564c78025b74eeaf25687f4eaabf911327da70e275df474f7f20c85b4", "crypt 27 bytes")
	t.eq(md5.crypt("abc", "k", ""), bin("00 60 ab 59"), "crypt empty seed")
	t.eq(md5.crypt("", "key", ""), "\0", "crypt empty message")
	local c = md5.crypt("abc", "k")
	t.eq(#c, 12, "time seed length")
	t.eq(c:byte(1), 8, "time seed size byte")
	t.eq(md5.decrypt(c, "k"), "abc", "time seed round trip")
end)

t.case("crypt / decrypt round trips", function()
	local seeds = { "", "s", "seed", ("z"):rep(16) }
	local keys = { "", "k", ("key"):rep(85) .. "x" } -- 256 bytes
	for _, seed in ipairs(seeds) do
		for _, key in ipairs(keys) do
			for len = 0, 40, 7 do
				local msg = ("m"):rep(len // 2) .. ("\0"):rep(len - len // 2)
				local c = md5.crypt(msg, key, seed)
				t.eq(#c, 1 + #seed + len, "cipher length")
				t.eq(c:sub(1, 1 + #seed), string.char(#seed) .. seed, "seed header")
				t.eq(md5.decrypt(c, key), msg, "round trip")
			end
		end
	end
	-- the keystream depends on the key and the seed
	t.ok(md5.crypt("same", "k1", "s") ~= md5.crypt("same", "k2", "s"), "key matters")
	t.ok(md5.crypt("same", "k", "s1"):sub(3) ~= md5.crypt("same", "k", "s2"):sub(3),
		"seed matters")
end)

t.case("crypt / decrypt errors", function()
	t.raises("seed too long (> 16)", md5.crypt, "abc", "k", ("s"):rep(17))
	t.raises("key too long (> 256)", md5.crypt, "abc", ("k"):rep(257))
	t.raises("key too long (> 256)", md5.decrypt, "\0abc", ("k"):rep(257))
	t.raises("string expected, got nil", md5.crypt, "abc", "k", nil)
	t.raises("string expected", md5.crypt, "abc")
	t.raises("(invalid cyphered string)", md5.decrypt, "", "k")
	t.raises("(invalid cyphered string)", md5.decrypt, "\5abcd", "k")
	t.raises("(invalid cyphered string)", md5.decrypt, "\17" .. ("s"):rep(20), "k")
	t.raises("(invalid cyphered string)", md5.decrypt, "\255", "k")
	t.eq(md5.decrypt("\4abcd", "k"), "", "seed only, empty message")
end)

t.start()
