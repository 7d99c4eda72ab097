#!/bin/sh
# skynet's client.socket (luaclib/client.so, next to client.crypt) in a
# plain lua5.4, as client scripts and test bots use it: connect failure
# text, readstdin's lines (then nil, "eof"), usleep; then, against a
# real-time node (test/lua/svc_flow_node.lua: the standard gate, an agent
# answering "ping" with "pong"), test/node/socket_client.lua sends raw
# bytes (a frame split over two sends, two frames in one), gets nil from
# recv while nothing came and "" once the node is gone. A sanitizer build's
# modules do not load into the system interpreter: then a plain client.so
# is built from the same sources. Every wait is bounded; the node and the
# client are killed on every path.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
node=
client=
cleanup() {
	[ -n "$client" ] && kill "$client" 2>/dev/null && wait "$client" 2>/dev/null
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

CPATH=$(client_cpath client.socket "$dir")
run() { # lua code; prints what it prints, fails on any error
	LUA_CPATH="$CPATH" timeout 10 lua5.4 -e "$1"
}

out=$(run 'local socket = require "client.socket"
print(pcall(socket.connect, "127.0.0.1", 1))' 2>&1)
echo "$out"
[ "$out" = "false	Connect 127.0.0.1 1 failed" ]
check connect_failure_raises $?

out=$(printf 'one\n\ntwo\nlast' | run 'local socket = require "client.socket"
local got = {}
for _ = 1, 200 do
	local line, why = socket.readstdin()
	if line then
		got[#got + 1] = "[" .. line .. "]"
	elseif why then
		got[#got + 1] = why
		break
	else
		socket.usleep(10000)
	end
end
print(table.concat(got, " "))' 2>&1)
echo "$out"
[ "$out" = "[one] [] [two] [last] eof" ]
check readstdin_lines_then_eof $?

out=$( (sleep 1; echo late) | run 'local socket = require "client.socket"
print(select("#", socket.readstdin()))' 2>&1)
echo "readstdin before a line came: $out results"
[ "$out" = "0" ]
check readstdin_never_blocks $?

start=$(date +%s%N)
run 'require "client.socket".usleep(300000)'
ms=$((($(date +%s%N) - start) / 1000000))
echo "usleep(300000) took $ms ms"
[ "$ms" -ge 290 ]
check usleep_sleeps $?

. test/node/flow_lib.sh
flow_node ""
[ -n "$port" ]
check node_listens $?
[ -n "$port" ] || finish

client() {
	LUA_CPATH="$CPATH" timeout 15 lua5.4 test/node/socket_client.lua "$port" "$@" </dev/null
}
out=$(client ping 2>&1)
echo "$out"
[ "$out" = "pongs=3 idle=0" ]
check raw_sends_answered_and_recv_nil_when_idle $?

client wait_close >"$dir/client.out" 2>&1 &
client=$!
i=0
while ! grep -q waiting "$dir/client.out" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill "$node" && wait "$node" 2>/dev/null
node=
wait "$client"
check client_exits_cleanly $?
client=
cat "$dir/client.out"
grep -q "^closed bytes=0$" "$dir/client.out"
check recv_empty_string_once_the_peer_closed $?

summary
