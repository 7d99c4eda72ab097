#!/bin/sh
# Runs each fuzz target that `make fuzz` built for SECONDS seconds and prints
# one line per target:
#   FUZZ target=NAME execs=N crashes=N
# A target starts from its committed seeds (test/fuzz/corpus/NAME, never
# written) plus what earlier runs found (BUILD/corpus/NAME, where libFuzzer
# adds new inputs). A crash, leak, timeout or out-of-memory stops that target:
# its input lands in BUILD/crash/, and the input's path and the report follow
# the FUZZ line. The exit status is 1 when any target failed. Targets run
# FUZZ_JOBS at a time (default 2, this machine's cores; each is one process),
# and their lines come out in the order of the names.
# Usage: test/fuzz/run.sh BUILD SECONDS [NAME...]   (the Makefile passes BUILD, SECONDS)
BUILD=${1:-build/fuzz}
SECONDS_EACH=${2:-30}
shift 2 2>/dev/null || shift $#

case "$SECONDS_EACH" in
'' | *[!0-9]*)
	echo "test/fuzz/run.sh: FUZZ_SECONDS must be a whole number of seconds, got '$SECONDS_EACH'" >&2
	exit 2
	;;
esac

if [ $# -eq 0 ]; then
	for bin in "$BUILD"/obj/fuzz/fuzz_*; do
		case "$bin" in *.d) continue ;; esac
		[ -x "$bin" ] && set -- "$@" "${bin##*/fuzz_}"
	done
fi
if [ $# -eq 0 ]; then
	echo "test/fuzz/run.sh: no fuzz targets under $BUILD/obj/fuzz (run make fuzz)" >&2
	exit 2
fi

JOBS=${FUZZ_JOBS:-2}
case "$JOBS" in
'' | *[!0-9]* | 0)
	echo "test/fuzz/run.sh: FUZZ_JOBS must be a whole number > 0, got '$JOBS'" >&2
	exit 2
	;;
esac

mkdir -p "$BUILD/log" "$BUILD/crash" "$BUILD/tmp"

# run_one NAME: fuzzes one target; its report goes to $BUILD/log/NAME.result
# (the FUZZ line, then what a failure shows), its exit status to NAME.status.
run_one() {
	name=$1
	bin=$BUILD/obj/fuzz/fuzz_$name
	seeds=test/fuzz/corpus/$name
	work=$BUILD/corpus/$name
	log=$BUILD/log/$name.log
	out=$BUILD/log/$name.result
	mkdir -p "$work"
	[ -d "$seeds" ] || seeds=
	# Timeout: no single input may take 10 s. stdin is /dev/null so that
	# nothing an input does can wait on the terminal.
	TMPDIR=$BUILD/tmp "$bin" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
		-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$BUILD/crash/$name-" \
		"$work" $seeds </dev/null >"$log" 2>&1
	status=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
	artifacts=$(sed -n 's/.*Test unit written to \(.*\(crash\|leak\|timeout\|oom\)-[0-9a-f]*\)$/\1/p' "$log")
	crashes=$(printf '%s' "$artifacts" | grep -c .)
	if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then
		crashes=1
	fi
	echo "FUZZ target=$name execs=${execs:-0} crashes=$crashes" >"$out"
	if [ "$crashes" -ne 0 ]; then
		{
			echo "  exit status $status; libFuzzer log: $log"
			for a in $artifacts; do
				echo "  input: $a  (rerun: $bin $a)"
			done
			# The report: from the first sanitizer or property line, at most 80 lines.
			sed -n '/==[0-9]*==\|runtime error\|fuzz property broken\|ALARM\|deadly signal\|out-of-memory/,$p' \
				"$log" | head -n 80 | sed 's/^/  | /'
		} >>"$out"
	fi
	echo "$crashes" >"$BUILD/log/$name.status"
}

# In batches of JOBS; then the reports, in order.
running=0
for name in "$@"; do
	run_one "$name" &
	running=$((running + 1))
	if [ "$running" -ge "$JOBS" ]; then
		wait
		running=0
	fi
done
wait
failed=0
for name in "$@"; do
	cat "$BUILD/log/$name.result"
	[ "$(cat "$BUILD/log/$name.status")" = 0 ] || failed=1
done
exit $failed
