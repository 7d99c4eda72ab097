#!/usr/bin/env bash
# Cluster benchmarks between two local nodes (two processes on 127.0.0.1):
# bench/bench_cluster_a.lua starts the serving node (bench_cluster_b.lua)
# and prints
#   BENCH name=cluster.call_rtt_us  sequential cluster.call round trip
#   BENCH name=cluster.call_seq_per_s  the same as a rate
#   BENCH name=cluster.cpu_us_per_call CPU of both nodes per sequential call
#   BENCH name=cluster.call_c8_per_s   8 concurrent callers
#   BENCH name=cluster.call_per_s   100 concurrent callers
#   BENCH name=cluster.send_per_s   cluster.send, until all were handled
#   BENCH name=cluster.mb_per_s     sequential calls carrying 1 MB each
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
cleanup() {
	[ -f "$dir/b.pid" ] && kill -9 "$(cat "$dir/b.pid")" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
cat >"$dir/config" <<CFG
config_keys = "root"
root = "./"
thread = 2
harbor = 0
start = "\$BENCH_START"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua;" .. root .. "bench/?.lua"
luaservice = root .. "service/?.lua;" .. root .. "bench/?.lua"
lualoader = root .. "lualib/loader.lua"
cluster = "$dir/clustername.lua"
CFG
: >"$dir/clustername.lua"
BENCH_DIR=$dir BENCH_START=bench_cluster_a timeout 120 "$B/skynet" "$dir/config" >"$dir/a.log" 2>&1
status=$?
grep -E '^BENCH ' "$dir/a.log"
if [ "$status" -ne 0 ] || ! grep -q '^BENCH ' "$dir/a.log"; then
	echo "bench_cluster: failed (exit status $status)" >&2
	tail -n 20 "$dir/a.log" >&2
	[ -f "$dir/b.log" ] && tail -n 20 "$dir/b.log" >&2
	exit 1
fi
