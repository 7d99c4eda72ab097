#!/bin/sh
# A node boots from a config file naming a C service, and the process exits
# 0 when the last service exits; bad configs exit 1 with a one-line error.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
passed=0
failed=0
check() { # name, condition result
	if [ "$2" -eq 0 ]; then
		echo "ok   $1"
		passed=$((passed + 1))
	else
		echo "FAIL $1"
		failed=$((failed + 1))
	fi
}

cat >"$dir/config" <<CFG
thread = 2
harbor = 0
cpath = "$B/cservice/?.so"
bootstrap = "echo 20"
logger = "$dir/node.log"
CFG
"$B/skynet" "$dir/config"
check boot_and_exit_when_last_service_exits $?
grep -q 'LAUNCH echo 20' "$dir/node.log" && grep -q 'KILL self' "$dir/node.log"
check logger_writes_file $?

"$B/skynet" >/dev/null 2>&1
[ $? -eq 1 ]
check no_argument_exits_1 $?

out=$("$B/skynet" "$dir/missing.conf" 2>&1)
[ $? -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q missing.conf
check missing_config_one_line_exit_1 $?

printf 'thread = \n' >"$dir/bad.conf"
out=$("$B/skynet" "$dir/bad.conf" 2>&1)
[ $? -eq 1 ] && printf '%s' "$out" | grep -q 'bad.conf:'
check syntax_error_names_file_exit_1 $?

printf 'thread = 0\nbootstrap = "echo"\n' >"$dir/zero.conf"
"$B/skynet" "$dir/zero.conf" 2>/dev/null
[ $? -eq 1 ]
check thread_out_of_range_exit_1 $?

cat >"$dir/nomod.conf" <<CFG
harbor = 0
cpath = "$B/cservice/?.so"
bootstrap = "no_such_module"
CFG
out=$("$B/skynet" "$dir/nomod.conf" 2>&1)
[ $? -eq 1 ] && printf '%s' "$out" | grep -q 'Bootstrap error : no_such_module'
check missing_bootstrap_module_exit_1 $?

# SIGHUP makes the logger reopen its file (log rotation): lines written
# after the signal land in a new file at the configured path.
cat >"$dir/hup.conf" <<CFG
thread = 2
harbor = 0
cpath = "$B/cservice/?.so"
bootstrap = "echo 60"
logger = "$dir/hup.log"
CFG
"$B/skynet" "$dir/hup.conf" &
node=$!
i=0
while ! grep -q 'LAUNCH echo' "$dir/hup.log" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.02
	i=$((i + 1))
done
mv "$dir/hup.log" "$dir/hup.log.1"
kill -HUP "$node"
wait "$node"
grep -q 'LAUNCH echo 60' "$dir/hup.log.1" && grep -q 'KILL self' "$dir/hup.log" 2>/dev/null
check sighup_reopens_log_file $?

# harbor != 0 asks for multi-node mode, which this build lacks: a clear line, no hang.
cat >"$dir/harbor.conf" <<CFG
harbor = 1
thread = 2
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
CFG
out=$(timeout 20 "$B/skynet" "$dir/harbor.conf" 2>&1)
printf '%s' "$out" | grep -q 'set harbor = 0'
check multinode_config_explains_itself $?

# daemon: the launching process returns at once; the daemon owns the pid
# file while it runs and removes it when its last service exits.
cat >"$dir/daemon.conf" <<CFG
harbor = 0
cpath = "$B/cservice/?.so"
bootstrap = "echo 30"
logger = "$dir/daemon.log"
daemon = "$dir/node.pid"
CFG
"$B/skynet" "$dir/daemon.conf"
started=$?
pid=$(cat "$dir/node.pid" 2>/dev/null)
[ "$started" -eq 0 ] && [ -n "$pid" ] && [ "$pid" != "$$" ]
check daemon_writes_pid_file $?
i=0
while [ -f "$dir/node.pid" ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
[ ! -f "$dir/node.pid" ] && grep -q 'KILL self' "$dir/daemon.log"
check daemon_removes_pid_file_on_exit $?

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
