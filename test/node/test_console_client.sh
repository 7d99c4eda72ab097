#!/bin/sh
# The debug console's terminal client (examples/console_client.lua, what
# `make console` runs) against a real-time node whose start service is a
# debug console on a free port: `list` piped in prints the launcher's list
# and <CMD OK>, a bad command <CMD Error> with the reason, and the client
# exits 0 at the end of its input; a refused connection exits 1 with the
# reason. Every wait is bounded; the node is killed on every path.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
node=
cleanup() {
	[ -n "$node" ] && kill "$node" 2>/dev/null && wait "$node" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
. test/node/lib.sh
finish() {
	summary
	exit
}

# The client's socket module; a sanitizer build's copy does not load into the
# system interpreter, so a plain one is built from the same source then.
CPATH=$(client_cpath clientsocket "$dir")
LUA_CPATH="$CPATH" timeout 10 lua5.4 -e 'require "clientsocket"'
check clientsocket_loads $?
[ "$failed" -eq 0 ] || finish

cat >"$dir/config" <<CFG
root = "$PWD/"
thread = 2
harbor = 0
timer = "real"
start = "debug_console 127.0.0.1 0"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua"
luaservice = root .. "service/?.lua"
lualoader = root .. "lualib/loader.lua"
logger = "$dir/node.log"
CFG
"$B/skynet" "$dir/config" &
node=$!
port=
i=0
while [ -z "$port" ] && [ $i -lt 300 ] && kill -0 "$node" 2>/dev/null; do
	sleep 0.1
	port=$(sed -n 's/.*Start debug console at 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/node.log" \
		2>/dev/null)
	i=$((i + 1))
done
[ -n "$port" ]
check console_listens $?
[ -n "$port" ] || finish

# console NAME INPUT: pipes INPUT through the client; output in $dir/NAME, status in rc.
console() {
	printf '%b' "$2" | LUA_CPATH="$CPATH" timeout 15 lua5.4 examples/console_client.lua \
		127.0.0.1 "$port" >"$dir/$1" 2>&1
	rc=$?
	echo "-- $1 (status $rc):"
	cat "$dir/$1"
}

console list 'list\n'
[ "$rc" -eq 0 ]
check list_exits_0 $?
grep -q '^:[0-9a-f]\{8\}	snlua debug_console 127\.0\.0\.1 0$' "$dir/list" &&
	[ "$(tail -n 1 "$dir/list")" = "<CMD OK>" ]
check list_prints_services_then_ok $?
! grep -q Welcome "$dir/list"
check no_welcome_line_when_piped $?

console bad 'nosuchcmd\n\nlist\n'
[ "$rc" -eq 0 ]
check bad_command_exits_0 $?
sed -n 1,2p "$dir/bad" >"$dir/bad.head"
printf 'Invalid command nosuchcmd, type help for command list\n<CMD Error>\n' |
	cmp -s - "$dir/bad.head"
check bad_command_error_then_next $?
[ "$(grep -c '^<CMD' "$dir/bad")" -eq 2 ] && [ "$(tail -n 1 "$dir/bad")" = "<CMD OK>" ]
check blank_line_skipped_next_answered $?

console quit 'quit\nlist\n'
[ "$rc" -eq 0 ] && [ "$(cat "$dir/quit")" = "<CMD OK>" ]
check quit_ends_the_client $?

kill "$node"
wait "$node" 2>/dev/null
node=
console refused 'list\n'
[ "$rc" -eq 1 ] && grep -q "^console: 127\.0\.0\.1:$port: connect: " "$dir/refused"
check refused_exits_1_with_reason $?

finish
