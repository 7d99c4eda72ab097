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
CPATH="$B/luaclib/?.so"
if ! LUA_CPATH="$CPATH" timeout 10 lua5.4 -e 'require "clientsocket"' >/dev/null 2>&1; then
	echo "bench_flow: clientsocket.so does not load into lua5.4" >&2
	exit 1
fi
mkfifo "$dir/idle" # the clients' stdin: clientsocket's poll also watches it
exec 3<>"$dir/idle"
cat >"$dir/config" <<CFG
root = "$PWD/"
thread = 2
harbor = 0
timer = "real"
start = "svc_flow_node"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua"
luaservice = root .. "service/?.lua;" .. root .. "test/lua/?.lua"
lualoader = root .. "lualib/loader.lua"
logger = "$dir/node.log"
${FLOW_BENCH_CONFIG:-}
CFG
"$B/skynet" "$dir/config" &
node=$!
port=
for _ in $(seq 300); do
	sleep 0.1
	port=$(sed -n 's/.*flow: listen port=\([0-9]*\).*/\1/p' "$dir/node.log" 2>/dev/null)
	[ -n "$port" ] && break
done
if [ -z "$port" ]; then
	echo "bench_flow: the node did not listen" >&2
	exit 1
fi
page_kb=$(($(getconf PAGESIZE) / 1024))
rss_kb() {
	echo $(($(cut -d' ' -f2 "/proc/$node/statm") * page_kb))
}
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
