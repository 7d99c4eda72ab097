#!/bin/sh
# The test runner itself (test/run.sh) must count every kind of failure:
# each fake test below fails in one way, and the runner must report it as
# failed and exit non-zero; a good test must pass. Runs the runner from an
# empty folder, so only the fake tests are found.
runner=$(pwd)/test/run.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. test/node/lib.sh

# fake NAME BODY: a test binary (a shell script) printing BODY's output.
fake() {
	rm -rf "$dir/obj"
	mkdir -p "$dir/obj/test"
	printf '#!/bin/sh\n%s\n' "$2" >"$dir/obj/test/test_$1"
	chmod +x "$dir/obj/test/test_$1"
	(cd "$dir" && sh "$runner" . obj >"$dir/out" 2>&1)
}

# expect_fail NAME BODY: the runner must exit non-zero and count one failure.
expect_fail() {
	fake "$1" "$2"
	st=$?
	[ "$st" -ne 0 ] && tail -n 1 "$dir/out" | grep -qE '^[0-9]+ passed, 1 failed$'
	check "runner_fails_$1" $?
}

fake good 'echo "ok   a"; echo "1 passed, 0 failed"'
[ $? -eq 0 ] && tail -n 1 "$dir/out" | grep -q '^1 passed, 0 failed$'
check runner_passes_good_test $?

expect_fail no_summary 'echo "ok   a"'
expect_fail no_output 'exit 0'
expect_fail nonzero_exit 'echo "1 passed, 0 failed"; exit 66'
expect_fail reported_failure 'echo "FAIL a"; echo "0 passed, 1 failed"; exit 0'
expect_fail tsan_report 'echo "WARNING: ThreadSanitizer: data race (pid=1)"; echo "1 passed, 0 failed"'
expect_fail asan_report 'echo "==7==ERROR: AddressSanitizer: heap-use-after-free"; echo "1 passed, 0 failed"'
expect_fail lsan_report 'echo "==7==ERROR: LeakSanitizer: detected memory leaks"; echo "1 passed, 0 failed"'
expect_fail ubsan_report 'echo "x.c:3:5: runtime error: signed integer overflow"; echo "1 passed, 0 failed"'

# The sanitizers are told to stop at the first report, with their own exit status.
fake env 'echo "$TSAN_OPTIONS $ASAN_OPTIONS $UBSAN_OPTIONS"; echo "1 passed, 0 failed"'
grep -q 'halt_on_error=1:exitcode=66' "$dir/out" && grep -q 'halt_on_error=1:exitcode=23' "$dir/out" &&
	grep -q 'halt_on_error=1:print_stacktrace=1:exitcode=24' "$dir/out"
check runner_sets_sanitizer_options $?

# The Lua runner (test/lua/runner.lua) names why a test failed: the reason
# its start failed, or the first line of its run's error (the failed cases),
# never its own file:line nor a bare "call failed".
B=${SKYNET_BUILD:-.}
mkdir -p "$dir/lua"
printf 'local skynet = require "skynet"\nskynet.start(function()\n\terror("boom at start")\nend)\n' \
	>"$dir/lua/test_hx_start.lua"
printf 'local t = require "testlib"\nt.case("a case", function() error("broke") end)\nt.start()\n' \
	>"$dir/lua/test_hx_run.lua"
cat >"$dir/lua.conf" <<CFG
include "$(pwd)/test/config.test"
luaservice = luaservice .. ";$dir/lua/?.lua"
CFG
SKYNET_BUILD=$B SKYNET_TEST=hx_start,hx_run timeout 60 "$B/skynet" "$dir/lua.conf" >"$dir/out" 2>&1
st=$?
[ "$st" -eq 1 ] &&
	grep -q '^FAIL hx_start: newservice test_hx_start failed: .*test_hx_start.lua:3: boom at start$' "$dir/out" &&
	grep -q '^FAIL hx_run: 1 of 1 cases failed (a case):$' "$dir/out" &&
	! grep -q '^FAIL .*\(runner\.lua\|call failed\)' "$dir/out"
check lua_runner_names_the_reason $?
[ "$st" -eq 1 ] || sed 's/^/    | /' "$dir/out"

summary
