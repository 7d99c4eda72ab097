#!/usr/bin/env bash
# node.idle_cpu_pct: CPU used by a node that has nothing to do (one C
# service that only waits for its own 10 s timer), as a percentage of one
# core over the wall time.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/config" <<CFG
thread = 8
harbor = 0
cpath = "$B/cservice/?.so"
bootstrap = "echo 1000"
logger = "$dir/log"
CFG
TIMEFORMAT='%3R %3U %3S'
t=$({ time "$B/skynet" "$dir/config" >/dev/null 2>&1; } 2>&1)
read -r real user sys <<<"$t"
awk -v r="$real" -v u="$user" -v s="$sys" \
	'BEGIN { printf "BENCH name=node.idle_cpu_pct value=%.3f unit=%%\n", (u + s) * 100 / r }'
