#!/bin/sh
# Runs every unit test binary, the node-level shell tests and the Lua
# integration tests, and prints one final line "N passed, N failed" summed
# over all of them.
#
# Strict by design: a test binary, script or node counts as failed when it
# exits non-zero, when its output has no "N passed, N failed" summary line,
# when that line reports a failure, or when a sanitizer report (ASan, LSan,
# UBSan, TSan) appears anywhere in its output. The sanitizers are told to
# stop at the first report with an exit status of their own, so a report
# can never end in a zero exit or pass for an expected failure status.
#
# Usage: test/run.sh BUILD OBJ   (the Makefile passes both; SKYNET_SAN names
# the sanitizer of the build, if any, for tests that must know it)
BUILD=${1:-.}
OBJ=${2:-build/default}
export SKYNET_SAN="${SKYNET_SAN:-}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:exitcode=23:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=24}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$(pwd)/test/tsan.supp}"
SAN_REPORT='(ERROR|WARNING): [A-Za-z]*Sanitizer|^SUMMARY: [A-Za-z]*Sanitizer|: runtime error: '
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# $1: name, $2: exit status; reads the output from $log.
tally() {
	line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	line=${line#*: }
	p=0
	f=0
	if [ -n "$line" ]; then
		p=${line%% passed*}
		f=${line#*passed, }
		f=${f%% failed*}
	fi
	why=""
	if grep -qE "$SAN_REPORT" "$log"; then
		why="a sanitizer report"
	elif [ -z "$line" ]; then
		why="no 'N passed, N failed' line, exit status $2"
	elif [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
		why="exit status $2, no failed case reported"
	fi
	if [ -n "$why" ]; then
		echo "FAIL $1 ($why)"
		[ "$f" -eq 0 ] && f=1
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
	SKYNET_BUILD=$BUILD SKYNET_OBJ=$OBJ timeout 300 sh "$t" >"$log" 2>&1
	status=$?
	cat "$log"
	tally "$(basename "$t")" "$status"
done

# Each Lua test service runs on a fresh node (test/config.test starts the runner),
# which must print exactly "1 passed, 0 failed" and exit 0.
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
		if [ "$status" -ne 0 ] || ! grep -q '^1 passed, 0 failed$' "$log" ||
			grep -qE "$SAN_REPORT" "$log"; then
			echo "== lua $name"
			cat "$log"
		else
			grep -E '^(ok|FAIL|skip) ' "$log"
		fi
		tally "lua $name" "$status"
	done
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
