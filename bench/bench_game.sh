#!/usr/bin/env bash
# The demo game under 1000 bot players (bench/config.game); prints the
# game.* BENCH lines. Run from the repository root by bench/run.sh.
B=${SKYNET_BUILD:-.}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
SKYNET_BUILD=$B timeout 120 "$B/skynet" bench/config.game >"$log" 2>&1
status=$?
grep -E '^(BENCH|bots:) ' "$log"
if ! grep -q '^BENCH name=game.bots_' "$log"; then
	tail -n 20 "$log" >&2
	exit 1
fi
exit $status
