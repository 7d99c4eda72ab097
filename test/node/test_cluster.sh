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
# the driver's own lines first; then every log in full when the driver
# failed, else only the lines of sanitizer reports (test/run.sh looks for them)
grep -E '^(ok|FAIL) |^    [0-9]' "$CLUSTER_TMP/a.out"
SAN_LINES='(ERROR|WARNING): [A-Za-z]*Sanitizer|^SUMMARY: [A-Za-z]*Sanitizer|: runtime error: '
for log in "$CLUSTER_TMP/a.out" "$CLUSTER_TMP"/*.log; do
	[ -f "$log" ] || continue
	id=$(basename "$log" .log)
	id=${id%.out}
	if [ "$status" -ne 0 ]; then
		sed "s/^/  $id | /" "$log" | grep -vE '^  a \| (ok|FAIL) '
	else
		grep -E "$SAN_LINES" "$log" | sed "s/^/  $id | /"
	fi
done
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$CLUSTER_TMP/a.out" | tail -n 1)
if [ -z "$summary" ]; then
	echo "0 passed, 1 failed (the driver node exited with status $status and no summary)"
	exit 1
fi
echo "$summary"
[ "$status" -eq 0 ]
