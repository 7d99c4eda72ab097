#!/usr/bin/env bash
# abuse.never_read_rss_mb: peak RSS growth of a node (the standard gate
# forwarding each connection to its own deliberately slow agent,
# test/lua/svc_flow_node.lua) while one client pipelines small requests
# (16-byte frames) for 10 s without ever reading, over the RSS before it
# connected. Socket flow control keeps it small; without it the agent's
# mailbox grows with every frame the gate reads. Also prints a "bench:"
# line with the frames sent and the reader's flow pauses. Target: <= 64 MB.
# FLOW_BENCH_SECS changes the 10 s; FLOW_BENCH_CONFIG adds config lines,
# e.g. "socket_flow_high_msgs = 0 socket_flow_high_bytes = 0" (no flow
# control) for a comparison.
B=${SKYNET_BUILD:-.}
SECS=${FLOW_BENCH_SECS:-10}
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
. test/node/flow_lib.sh
flow_clients
flow_node "${FLOW_BENCH_CONFIG:-}"
if [ -z "$port" ]; then
	echo "bench_flow: the node did not listen" >&2
	exit 1
fi
base=$(rss_kb)
peak=$base
LUA_CPATH="$CPATH" timeout $((SECS + 30)) lua5.4 test/node/flow_client.lua "$port" pipeline \
	100000000 16 <&3 >"$dir/reader" 2>&1 &
reader=$!
for _ in $(seq $((SECS * 10))); do
	sleep 0.1
	r=$(rss_kb)
	((r > peak)) && peak=$r
done
stat=$(LUA_CPATH="$CPATH" timeout 10 lua5.4 test/node/flow_client.lua "$port" ask stat 3000 <&3)
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
reader=
sent=$(sed -n 's/^pipeline sent=\([0-9]*\).*/\1/p' "$dir/reader" | tail -n 1)
echo "bench: never-reading client ${SECS}s: rss base=$((base / 1024)) MB" \
	"peak=$((peak / 1024)) MB, frames sent=${sent:-0}, $stat"
awk -v d=$((peak - base)) 'BEGIN { printf "BENCH name=abuse.never_read_rss_mb value=%.1f unit=MB\n", d / 1024 }'
