#!/bin/sh
# Socket flow control and the output limit on a real-time node
# (test/lua/svc_flow_node.lua: the standard gate forwarding each connection
# to its own deliberately slow agent, socket_output_limit = 4 MB), with
# clients in separate processes (test/node/flow_client.lua):
#   - a reader pipelines 4000-byte work frames for PIPE_SECS without reading
#     an answer; the node's RSS (/proc/<pid>/statm) must stay within
#     RSS_BOUND_MB of its value before, another client gets "pong" meanwhile,
#     and the reader's connection was flow-paused and resumed (its pause
#     counter reaches 2 or more, which needs a resume in between); the
#     reader could not send everything it wanted;
#   - a client asks its agent to write without end and reads nothing: past
#     4 MB unsent the node closes it, logs one "output limit" line naming
#     the address and the limit (after the usual warnings), and the gate's
#     watchdog hears of the close.
# Every wait is bounded; the node and the clients are killed on every path.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
node=
reader=
cleanup() {
	exec 3>&-
	[ -n "$reader" ] && kill "$reader" 2>/dev/null && wait "$reader" 2>/dev/null
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

PIPE_SECS=4
PIPE_FRAMES=25000 # 100 MB of work frames: far more than the agent can do meanwhile
RSS_BOUND_MB=${RSS_BOUND_MB:-48}
LIMIT=4194304
case "$SKYNET_SAN" in
address)
	# ASan's quarantine keeps freed memory resident: keep it small here.
	export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=16:thread_local_quarantine_size_kb=256"
	RSS_BOUND_MB=96
	;;
thread) RSS_BOUND_MB=96 ;; # TSan's shadow memory grows with every touched page
esac

. test/node/flow_lib.sh
flow_clients
client() {
	LUA_CPATH="$CPATH" lua5.4 test/node/flow_client.lua "$@" <&3
}

flow_node "socket_output_limit = $LIMIT"
[ -n "$port" ]
check node_listens $?
[ -n "$port" ] || finish

# ---- a reader that never reads, against a slow agent
base=$(rss_kb)
peak=$base
timeout 60 sh -c "LUA_CPATH='$CPATH' exec lua5.4 test/node/flow_client.lua $port pipeline \
	$PIPE_FRAMES 4000" <&3 >"$dir/reader" 2>&1 &
reader=$!
ticks=$((PIPE_SECS * 5))
pong=
mid_stat=
t=0
while [ $t -lt $ticks ]; do
	sleep 0.2
	t=$((t + 1))
	r=$(rss_kb)
	[ "$r" -gt "$peak" ] && peak=$r
	if [ $t -eq $((ticks / 2)) ]; then
		pong=$(client "$port" ask ping 3000)
		mid_stat=$(client "$port" ask stat 3000)
	fi
done
end_stat=$(client "$port" ask stat 3000)
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
reader=
growth_mb=$(((peak - base) / 1024))
sent=$(sed -n 's/^pipeline sent=\([0-9]*\).*/\1/p' "$dir/reader" | tail -n 1)
pauses=$(echo "$end_stat" | sed -n 's/.*pauses=\([0-9]*\).*/\1/p')
echo "reader: rss base=$((base / 1024)) MB peak=$((peak / 1024)) MB growth=$growth_mb MB" \
	"bound=$RSS_BOUND_MB MB; frames sent=${sent:-?} of $PIPE_FRAMES; mid: $mid_stat;" \
	"end: $end_stat"
[ "$growth_mb" -le "$RSS_BOUND_MB" ]
check never_reading_client_keeps_rss_bounded $?
[ "$pong" = pong ]
check other_client_served_meanwhile $?
[ -n "$pauses" ] && [ "$pauses" -ge 2 ]
check reader_flow_paused_and_resumed $?
[ -n "$sent" ] && [ "$sent" -lt "$PIPE_FRAMES" ]
check reader_held_back $?

# ---- a client that never reads while its agent keeps writing
out=$(timeout 30 sh -c "LUA_CPATH='$CPATH' exec lua5.4 test/node/flow_client.lua $port flood 1500" <&3)
echo "flood client: $out"
echo "$out" | grep -q 'closed=true'
check output_limit_closes_never_reading_client $?
i=0
while ! grep -q 'output limit reached' "$dir/node.log" && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
lines=$(grep -c 'output limit reached' "$dir/node.log")
grep 'output limit reached' "$dir/node.log"
[ "$lines" -eq 1 ] && grep 'output limit reached' "$dir/node.log" |
	grep -q "address=127\.0\.0\.1:[0-9]* limit=$LIMIT"
check output_limit_logged_once_with_address_and_limit $?
fd=$(sed -n 's/.*output limit reached.* id=\([0-9]*\) .*/\1/p' "$dir/node.log")
i=0
while ! grep -q "flow: close fd=$fd\$" "$dir/node.log" && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -n "$fd" ] && grep -q "flow: warning fd=$fd kb=[1-9]" "$dir/node.log" &&
	grep -q "flow: close fd=$fd\$" "$dir/node.log"
check output_limit_after_warnings_and_close_event $?
warn_line=$(grep -n "flow: warning fd=$fd kb=[1-9]" "$dir/node.log" | head -n 1 | cut -d: -f1)
limit_line=$(grep -n 'output limit reached' "$dir/node.log" | head -n 1 | cut -d: -f1)
[ -n "$warn_line" ] && [ -n "$limit_line" ] && [ "$warn_line" -lt "$limit_line" ]
check warning_logged_before_the_limit $?
kill -0 "$node" 2>/dev/null
check node_alive $?
finish
