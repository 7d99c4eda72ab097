#!/bin/sh
# Memory comes back: on a real-time node, 200 services that each built about
# 0.5 MB of Lua tables are killed; within 8 s the process's RSS must fall back
# to less than a quarter of the growth (test/lua/svc_trim.lua measures). With
# config malloc_trim = false the memory stays (glibc keeps it in its arenas),
# which is checked too, so the test shows the trim is what returns it.
# Under a sanitizer the allocator is the sanitizer's, not glibc's: skipped.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. test/node/lib.sh

if [ -n "$SKYNET_SAN" ]; then
	echo "note: $SKYNET_SAN build: malloc_trim acts on glibc's heap only; skipped"
	summary
	exit
fi

# run TRIM: prints "before peak after" (KB) of a node with malloc_trim = TRIM.
run() {
	cat >"$dir/config" <<CFG
config_keys = "root"
root = "$PWD/"
thread = 2
harbor = 0
start = "svc_trim"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua"
luaservice = root .. "service/?.lua;" .. root .. "test/lua/?.lua"
lualoader = root .. "lualib/loader.lua"
logger = "$dir/node.log"
malloc_trim = $1
CFG
	timeout 60 "$B/skynet" "$dir/config" | sed -n 's/^trim: before=\([0-9]*\) peak=\([0-9]*\) after=\([0-9]*\)$/\1 \2 \3/p'
}

# back BEFORE PEAK AFTER: the growth left is under a quarter of the peak's.
back() {
	[ -n "$3" ] && [ $(($3 - $1)) -lt $((($2 - $1) / 4)) ]
}

on=$(run true)
echo "malloc_trim = true: before peak after (KB) = $on"
# shellcheck disable=SC2086 # three numbers
back $on
check memory_returned_after_services_exit $?

off=$(run false)
echo "malloc_trim = false: before peak after (KB) = $off"
[ -n "$off" ] && ! back $off
check memory_kept_without_trim $?

summary
