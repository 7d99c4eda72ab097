#!/bin/sh
# Runs every unit test binary, then the Lua integration tests, and prints
# one final line "N passed, N failed" summed over all of them.
# Usage: test/run.sh BUILD OBJ   (the Makefile passes both)
BUILD=${1:-.}
OBJ=${2:-build/default}
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

tally() { # $1: name, $2: exit status; reads the summary line from $log
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		p=${line%% passed*}
		f=${line#*passed, }
		f=${f%% failed*}
	else
		p=0
		f=0
	fi
	if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $1 (exit status $2, no failed case reported)"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

for t in "$OBJ"/test/test_*; do
	case "$t" in *.d) continue ;; esac
	[ -x "$t" ] || continue
	echo "== $(basename "$t")"
	timeout 300 "$t" >"$log" 2>&1
	status=$?
	cat "$log"
	tally "$(basename "$t")" "$status"
done

# Node-level checks written as shell scripts (boot, exit codes, config errors).
for t in test/node/test_*.sh; do
	[ -f "$t" ] || continue
	echo "== $(basename "$t")"
	SKYNET_BUILD=$BUILD timeout 120 sh "$t" >"$log" 2>&1
	status=$?
	cat "$log"
	tally "$(basename "$t")" "$status"
done

# Each Lua test service runs on a fresh node (test/config.test starts the runner).
if [ -f test/lua/runner.lua ]; then
	for t in test/lua/test_*.lua; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .lua)
		name=${name#test_}
		config=test/config.test
		head -n 3 "$t" | grep -q -- '-- test: real time' && config=test/config.realtime
		SKYNET_BUILD=$BUILD SKYNET_TEST=$name timeout 60 "$BUILD/skynet" "$config" \
			>"$log" 2>&1
		status=$?
		if [ "$status" -ne 0 ] || ! grep -q '^1 passed, 0 failed$' "$log"; then
			echo "== lua $name"
			cat "$log"
		else
			grep -E '^(ok|FAIL) ' "$log"
		fi
		tally "lua $name" "$status"
	done
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
