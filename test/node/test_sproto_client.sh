#!/bin/sh
# A plain lua5.4 (no skynet) loads sproto (lualib/sproto.lua,
# lualib/sprotoparser.lua and luaclib/sproto.so), as the reference's terminal
# client does, and talks the demo's protocol: its requests have the
# reference bytes and a server reply dispatches to the right session. A
# sanitizer build's modules do not load into the system interpreter: then
# (SKYNET_SAN set, and only then) a plain copy is built from the same sources.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. test/node/lib.sh

CPATH="$B/luaclib/?.so"
if [ -n "$SKYNET_SAN" ]; then
	echo "note: $SKYNET_SAN build: checking a plain build of the same sources"
	mkdir -p "$dir/sproto"
	# shellcheck disable=SC2046 # pkg-config prints several words
	# sproto.so carries the allocator, as the Makefile links it.
	cc -std=gnu11 -O1 -fPIC -shared $(pkg-config --cflags lua5.4) -Iskynet-src \
		-o "$dir/sproto.so" lualib-src/sproto/*.c skynet-src/skynet_malloc.c
	check plain_copy_builds $?
	CPATH="$dir/?.so"
fi

out=$(LUA_CPATH="$CPATH" LUA_PATH="./lualib/?.lua" timeout 10 lua5.4 -e '
local sproto = require "sproto"
local function hex(s)
	return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end
local c2s = sproto.parse [[
.package { type 0 : integer session 1 : integer }
handshake 1 { response { msg 0 : string } }
set 3 { request { what 0 : string value 1 : string } }
]]
local s2c = sproto.parse ".package { type 0 : integer session 1 : integer } heartbeat 1 {}"
local host = s2c:host "package"
local request = host:attach(c2s)
local server = c2s:host "package"
local _, name, _, respond = server:dispatch(request("handshake", nil, 1))
local kind, session, reply = host:dispatch(respond({ msg = "Welcome" }))
print(hex(request("set", { what = "hello", value = "world" }, 2)), name, kind, session, reply.msg)
' 2>&1)
echo "$out"
[ "$out" = "550208060210053f68656c6c6f053e776f726c64	handshake	RESPONSE	1	Welcome" ]
check sproto_in_plain_lua $?

summary
