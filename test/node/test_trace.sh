#!/bin/sh
# Trace ids across services and nodes: test/node/trace/trace_a.lua drives
# node a; node b (trace_b.lua) runs in a second process. Each node logs to
# a file and writes its spans as OpenTelemetry JSON lines into TRACE_TMP,
# which the driver reads. The logs are printed so that test/run.sh sees any
# sanitizer report in them.
B=${SKYNET_BUILD:-.}
TRACE_TMP=$(mktemp -d)
export TRACE_TMP SKYNET_BUILD=$B
cleanup() {
	[ -n "$bpid" ] && kill -9 "$bpid" 2>/dev/null
	rm -rf "$TRACE_TMP"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

: >"$TRACE_TMP/clustername.lua"
TRACE_START=trace_b timeout 150 "$B/skynet" test/node/trace/config >"$TRACE_TMP/b.out" 2>&1 </dev/null &
bpid=$!
TRACE_START=trace_a timeout 120 "$B/skynet" test/node/trace/config >"$TRACE_TMP/a.out" 2>&1
status=$?
wait "$bpid" 2>/dev/null
bpid=
grep -E '^(ok|FAIL) |^    ' "$TRACE_TMP/a.out"
SAN_LINES='(ERROR|WARNING): [A-Za-z]*Sanitizer|^SUMMARY: [A-Za-z]*Sanitizer|: runtime error: '
for log in "$TRACE_TMP"/*.out "$TRACE_TMP"/*.log; do
	[ -f "$log" ] || continue
	if [ "$status" -ne 0 ]; then
		sed "s|^|  $(basename "$log") \| |" "$log" | grep -vE '\| (ok|FAIL) '
	else
		grep -E "$SAN_LINES" "$log" | sed "s|^|  $(basename "$log") \| |"
	fi
done
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$TRACE_TMP/a.out" | tail -n 1)
if [ -z "$summary" ]; then
	echo "0 passed, 1 failed (the driver node exited with status $status and no summary)"
	exit 1
fi
echo "$summary"
[ "$status" -eq 0 ]
