#!/bin/sh
# skynet.cluster between processes: test/node/cluster/cluster_a.lua drives
# node "a", which starts, stops (SIGSTOP), kills and restarts peer nodes
# through test/node/cluster/peer.sh; ports are chosen at run time on
# 127.0.0.1. Every peer still running at the end is killed, and the peers'
# logs are printed so that test/run.sh sees any sanitizer report in them.
B=${SKYNET_BUILD:-.}
CLUSTER_TMP=$(mktemp -d)
export CLUSTER_TMP SKYNET_BUILD=$B
cleanup() {
	for f in "$CLUSTER_TMP"/*.pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$CLUSTER_TMP"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

: >"$CLUSTER_TMP/clustername.lua"
CLUSTER_START=cluster_a timeout 240 "$B/skynet" test/node/cluster/config >"$CLUSTER_TMP/a.out" 2>&1
status=$?
# the driver's own lines first, then every log
grep -E '^(ok|FAIL|    ) ' "$CLUSTER_TMP/a.out"
sed 's/^/  a | /' "$CLUSTER_TMP/a.out" | grep -vE '^  a \| (ok|FAIL) ' | grep -vE 'LAUNCH|accept from'
for log in "$CLUSTER_TMP"/*.log; do
	[ -f "$log" ] || continue
	id=$(basename "$log" .log)
	sed "s/^/  $id | /" "$log" | grep -vE 'LAUNCH|accept from'
done
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$CLUSTER_TMP/a.out" | tail -n 1)
if [ -z "$summary" ]; then
	echo "0 passed, 1 failed (the driver node exited with status $status and no summary)"
	exit 1
fi
echo "$summary"
[ "$status" -eq 0 ]
