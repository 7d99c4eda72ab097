#!/bin/sh
# Crash tombstones (docs/tombstones.md). A node whose service calls the
# test-only C module tombtest (test/luaclib/lua-tombtest.c, through
# test/lua/svc_tombstone_victim.lua) dies of the signal it raised, and
# leaves one file in tombstone_dir: the test reads it and checks the
# signal, the service's address and name, its Lua frames (the two Lua
# functions that called the faulting C function, with their lines) and
# the message it was running (source, type, session), and that the log
# and stderr name the file. The same for SIGABRT (abort()), SIGFPE and
# SIGILL; a second fault inside the handler, which ends the process at
# once; then SIGSEGV sent from outside to an idle node; last, a node that
# stops cleanly writes nothing.
#
# Sanitizer builds (SKYNET_SAN=address or thread) skip the fault cases:
# the node leaves the fatal signals to the sanitizer there (AddressSanitizer
# and ThreadSanitizer install their own SIGSEGV handlers and report a fault
# themselves, which test/run.sh would count as a failure), so no tombstone
# is written. The clean-exit case runs in every build.
B=${SKYNET_BUILD:-.}
OBJ=${SKYNET_OBJ:-build/default}
dir=$(mktemp -d)
pid=""
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
. test/node/lib.sh
ulimit -c 0 # the nodes die of their signal: no core file in the repository

victim=test/lua/svc_tombstone_victim.lua

# config MODE: a node whose start service (test/lua/svc_tombstone.lua) does MODE.
config() {
	mkdir -p "$dir/$1"
	cat >"$dir/config.$1" <<CFG
config_keys = "root, tomb_mode"
root = "$PWD/"
thread = 2
harbor = 0
start = "svc_tombstone"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so;$OBJ/test/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua;" .. root .. "test/lua/?.lua"
luaservice = root .. "service/?.lua;" .. root .. "test/lua/?.lua"
lualoader = root .. "lualib/loader.lua"
logger = "$dir/$1.log"
tombstone_dir = "$dir/$1"
tomb_mode = "$1"
CFG
}

# run MODE: runs the node to its end; output in $dir/out.MODE; returns its exit status.
run() {
	config "$1"
	timeout 60 "$B/skynet" "$dir/config.$1" >"$dir/out.$1" 2>&1
	st=$?
	sed 's/^/    | /' "$dir/out.$1"
	return $st
}

# tomb MODE: prints the one tombstone of MODE's node (fails if not exactly one).
tomb() {
	set -- "$dir/$1"/tombstone-*.txt
	[ $# -eq 1 ] && [ -f "$1" ] && cat "$1"
}

# fault_case MODE SIGNUM SIGNAME: the victim raises the signal two Lua functions deep.
fault_case() {
	mode=$1
	run "$mode"
	st=$?
	[ $st -eq $((128 + $2)) ]
	check "tombstone_${mode}_dies_of_$3" $?
	tomb "$mode" >"$dir/t.$mode"
	check "tombstone_${mode}_one_file" $?
	sed 's/^/    > /' "$dir/t.$mode" | head -n 40
	t="$dir/t.$mode"
	grep -q "^signal: $2 ($3)" "$t" && grep -q '^end of tombstone$' "$t"
	check "tombstone_${mode}_signal_and_complete" $?
	# The faulting message: the victim wrote its source and session before the fault.
	src=$(sed -n 's/^tombstone: fault source=\(:[0-9a-f]*\) session=.*/\1/p' "$dir/out.$mode")
	ses=$(sed -n 's/^tombstone: fault source=:[0-9a-f]* session=\([0-9]*\)$/\1/p' "$dir/out.$mode")
	line=$(grep '(crashed here): running :' "$t")
	addr=$(echo "$line" | sed -n 's/.*running \(:[0-9a-f]*\) .*/\1/p')
	echo "$line" | grep -q '"snlua svc_tombstone_victim"$' && [ -n "$src" ] && [ -n "$addr" ]
	check "tombstone_${mode}_names_service" $?
	grep -q "^    #0 source=$src dest=$addr type=lua session=$ses size=[0-9]* (running)$" "$t"
	check "tombstone_${mode}_faulting_message" $?
	deep=$(grep -n 'tombtest\[mode\]()' "$victim" | cut -d: -f1)
	[ "$mode" = segv ] && deep=$(grep -n 'tombtest.segv()' "$victim" | cut -d: -f1)
	outer=$(grep -n '^	crash_deep(mode)' "$victim" | cut -d: -f1)
	sed -n '/^lua stack of the crashing thread:$/,/^c backtrace/p' "$t" >"$dir/lua.$mode"
	grep -q "svc_tombstone_victim.lua:$deep in upvalue 'crash_deep'$" "$dir/lua.$mode" &&
		grep -q "svc_tombstone_victim.lua:$outer in upvalue 'handle_fault'$" "$dir/lua.$mode"
	check "tombstone_${mode}_lua_frames" $?
	file=$(ls "$dir/$mode"/tombstone-*.txt)
	grep -q "error: tombstone: signal=$3 file=$file$" "$dir/out.$mode" &&
		grep -q "error: tombstone: signal=$3 file=$file$" "$dir/$mode.log"
	check "tombstone_${mode}_log_names_file" $?
}

if [ -n "$SKYNET_SAN" ]; then
	echo "skip tombstone fault cases (SKYNET_SAN=$SKYNET_SAN: the sanitizer keeps the fatal signals)"
else
	fault_case segv 11 SIGSEGV
	grep -q '^    \[C\] in field .segv.$' "$dir/lua.segv"
	check tombstone_segv_names_c_function $?
	grep -q '^sender: kernel' "$dir/t.segv" && grep -q 'code=1 addr=0x0$' "$dir/t.segv"
	check tombstone_segv_fault_address $?
	fault_case abort 6 SIGABRT
	grep -q '^sender: pid [0-9]* uid [0-9]* (this process: abort or raise)$' "$dir/t.abort"
	check tombstone_abort_sender_is_self $?
	case $(uname -m) in
	x86_64 | i?86)
		fault_case fpe 8 SIGFPE
		fault_case ill 4 SIGILL
		;;
	*) echo "skip tombstone fpe/ill (the trap instructions differ off x86)" ;;
	esac

	# A second fault, inside the handler (tombtest.double installs a stack
	# writer that faults): the process ends at once, of SIGSEGV, leaving
	# what was written before the Lua stack and no end line.
	run double
	[ $? -eq 139 ]
	check tombstone_double_fault_dies_of_SIGSEGV $?
	tomb double >"$dir/t.double"
	t="$dir/t.double"
	sed 's/^/    > /' "$t" | grep -v '^    >     #'
	grep -q '(crashed here): running :.* "snlua svc_tombstone_victim"$' "$t" &&
		grep -q '^lua stack of the crashing thread:$' "$t" && ! grep -q '^c backtrace' "$t" &&
		! grep -q '^end of tombstone$' "$t" && ! grep -q 'error: tombstone:' "$dir/out.double"
	check tombstone_double_fault_ends_at_once $?

	# From outside: an idle node, SIGSEGV sent with kill.
	config idle
	"$B/skynet" "$dir/config.idle" >"$dir/out.idle" 2>&1 &
	pid=$!
	i=0
	until grep -q '^tombstone: idle$' "$dir/out.idle" 2>/dev/null || [ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -SEGV "$pid"
	wait "$pid"
	st=$?
	pid=""
	sed 's/^/    | /' "$dir/out.idle"
	[ $st -eq 139 ]
	check tombstone_kill_dies_of_SIGSEGV $?
	tomb idle >"$dir/t.idle"
	check tombstone_kill_one_file $?
	sed 's/^/    > /' "$dir/t.idle" | head -n 12
	t="$dir/t.idle"
	grep -q "^signal: 11 (SIGSEGV) code=0$" "$t" && grep -q "^sender: pid $$ uid " "$t" &&
		grep -q '^end of tombstone$' "$t" && ! grep -q 'crashed here' "$t" &&
		! grep -q ': running :' "$t" && grep -q '^counters: services=[1-9][0-9]* ' "$t"
	check tombstone_kill_sender_idle_workers $?
fi

run exit
st=$?
[ $st -eq 0 ] && [ -z "$(ls "$dir/exit")" ] && ! grep -q 'unknown key' "$dir/out.exit"
check tombstone_none_on_clean_exit $?

summary
