#!/bin/sh
# Runs every benchmark binary and the Lua benchmarks; each prints
# "BENCH name=... value=... unit=..." lines.
BUILD=${1:-.}
OBJ=${2:-build/default}
for b in "$OBJ"/bench/bench_*; do
	case "$b" in *.d) continue ;; esac
	[ -x "$b" ] || continue
	"$b" || echo "bench: $(basename "$b") failed" >&2
done
for b in bench/bench_*.sh; do
	[ -f "$b" ] || continue
	SKYNET_BUILD=$BUILD bash "$b" || echo "bench: $(basename "$b") failed" >&2
done
# Lua benchmarks: each bench/config.* is a node that prints its BENCH lines
# (and a few human-readable summaries); its log is shown only on failure.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for c in bench/config.*; do
	[ -f "$c" ] || continue
	SKYNET_BUILD=$BUILD SKYNET_OBJ=$OBJ timeout 300 "$BUILD/skynet" "$c" >"$log" 2>&1
	status=$?
	grep -E '^(BENCH|bots:|bench:) ' "$log"
	if [ "$status" -ne 0 ] || ! grep -q '^BENCH ' "$log"; then
		echo "bench: $c failed (exit status $status)" >&2
		tail -n 20 "$log" >&2
	fi
done
