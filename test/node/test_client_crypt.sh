#!/bin/sh
# A plain lua5.4 (no skynet) loads client.crypt from luaclib/client.so and
# md5 from lualib/md5.lua + luaclib/md5.so, as a terminal client does, and
# gets the reference bytes. A sanitizer build's modules do not load into the
# system interpreter: then (SKYNET_SAN set, and only then) plain copies are
# built from the same sources.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. test/node/lib.sh

CPATH="$B/luaclib/?.so"
if [ -n "$SKYNET_SAN" ]; then
	echo "note: $SKYNET_SAN build: checking plain builds of the same sources"
	# shellcheck disable=SC2046 # pkg-config prints several words
	cc -std=gnu11 -O1 -fPIC -shared $(pkg-config --cflags lua5.4 libcrypto) \
		-o "$dir/client.so" lualib-src/client/lua-crypt.c lualib-src/lua-crypt.c \
		$(pkg-config --libs libcrypto) &&
		cc -std=gnu11 -O1 -fPIC -shared $(pkg-config --cflags lua5.4 libcrypto) \
			-o "$dir/md5.so" lualib-src/md5/lua-md5.c $(pkg-config --libs libcrypto)
	check plain_copies_build $?
	CPATH="$dir/?.so"
fi

run() { # lua code; prints what it prints, fails on any error
	LUA_CPATH="$CPATH" LUA_PATH="./lualib/?.lua" timeout 10 lua5.4 -e "$1"
}

# The client's view: a DH exchange, the login token under DES, hmac_hash.
out=$(run '
local crypt = require "client.crypt"
local function hex(s)
	return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end
local a, b = "12345678", "\x01\x23\x45\x67\x89\xab\xcd\xef"
local secret = crypt.dhsecret(crypt.dhexchange(a), b)
assert(secret == crypt.dhsecret(crypt.dhexchange(b), a))
print(hex(crypt.hashkey("hello")), hex(secret), hex(crypt.desencode(a, "hello")),
	crypt.desdecode(a, crypt.desencode(a, "hello", 1), 1), hex(crypt.hmac_hash(a, "hello")),
	crypt.base64encode(crypt.sha1("abc")))
' 2>&1)
echo "$out"
[ "$out" = "9930920fcbef1867	eec67b59b03b862d	7e38177924357156	hello	c7c836eeffbdd948	qZk+NkcGgWq6PiVxeFDCbJzQ2J0=" ]
check client_crypt_in_plain_lua $?

out=$(run '
local md5 = require "md5"
print(md5.sumhexa("abc"), md5.hmacmd5("data", ("k"):rep(100)),
	md5.decrypt(md5.crypt("plain", "key", "seed"), "key"))
' 2>&1)
echo "$out"
[ "$out" = "900150983cd24fb0d6963f7d28e17f72	38a034384b6cbf08275f34dc859e6d6b	plain" ]
check md5_in_plain_lua $?

summary
