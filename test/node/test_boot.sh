#!/bin/sh
# A node boots from a config file naming a C service, and the process exits
# 0 when the last service exits; bad configs and failed starts exit 1 with
# the reason. Every node's exit status is checked and its output is printed,
# so test/run.sh sees any sanitizer report in it.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$dir"
}
trap cleanup EXIT
. test/node/lib.sh

# node ARGS...: runs skynet (bounded), keeps its output in $dir/out and prints
# it; returns the node's exit status.
node() {
	timeout 30 "$B/skynet" "$@" >"$dir/out" 2>&1
	st=$?
	sed 's/^/    | /' "$dir/out"
	return $st
}

cat >"$dir/config" <<CFG
thread = 2
harbor = 0
cpath = "$B/cservice/?.so"
bootstrap = "echo 20"
logger = "$dir/node.log"
CFG
node "$dir/config"
check boot_and_exit_when_last_service_exits $?
grep -q 'LAUNCH echo 20' "$dir/node.log" && grep -q 'KILL self' "$dir/node.log"
check logger_writes_file $?

node
[ $? -eq 1 ]
check no_argument_exits_1 $?

node "$dir/missing.conf"
[ $? -eq 1 ] && [ "$(wc -l <"$dir/out")" -eq 1 ] && grep -q missing.conf "$dir/out"
check missing_config_one_line_exit_1 $?

# --help and --version answer on standard output with exit 0; any other option is refused
# with exit 2 instead of being read as a config file name.
node --help
[ $? -eq 0 ] && grep -q '^Usage: skynet CONFIG' "$dir/out" && grep -q 'docs/config.md' "$dir/out" &&
	grep -q 'make run' "$dir/out"
check help_prints_usage_exit_0 $?

node -h
[ $? -eq 0 ] && grep -q '^Usage: skynet CONFIG' "$dir/out"
check short_help_exit_0 $?

node --version
[ $? -eq 0 ] && grep -qE '^skywheel [0-9]+\.[0-9]+' "$dir/out" && [ "$(wc -l <"$dir/out")" -eq 1 ]
check version_prints_one_line_exit_0 $?

node --bogus
[ $? -eq 2 ] && grep -q 'unknown option --bogus' "$dir/out"
check unknown_option_exit_2 $?

# A key the framework does not read is reported once, with the nearest known key when it looks
# like a typo (also when its value comes from $NAME); the node still boots. Keys listed in
# config_keys are the config's own and are not reported.
cat >"$dir/typo.conf" <<CFG
thred = \$TYPO_THREADS
strat = "main"
luaservices = "./service/?.lua"
config_keys = "world_size, reward_cs"
world_size = 64
reward_cs = 6000
undeclared_thing = 1
cpath = "$B/cservice/?.so"
bootstrap = "echo 5"
CFG
export TYPO_THREADS=2
node "$dir/typo.conf"
st=$?
[ $st -eq 0 ] && grep -q 'LAUNCH echo 5' "$dir/out" &&
	grep -q 'skynet: config: unknown key "thred" (did you mean "thread"?)' "$dir/out" &&
	grep -q 'unknown key "strat" (did you mean "start"?)' "$dir/out" &&
	grep -q 'unknown key "luaservices" (did you mean "luaservice"?)' "$dir/out" &&
	[ "$(grep -c 'unknown key "thred"' "$dir/out")" -eq 1 ]
check typo_key_warns_with_suggestion_and_boots $?
grep -q 'unknown key "undeclared_thing"' "$dir/out" && ! grep -q 'unknown key "undeclared_thing" (did you mean' "$dir/out" &&
	! grep -q 'unknown key "\(world_size\|reward_cs\|config_keys\)"' "$dir/out"
check declared_keys_do_not_warn $?

# Keys every skynet config carries (root, and the harbor keys master and
# address) are accepted without a warning and without config_keys.
cat >"$dir/skynet.conf" <<CFG
root = "./"
thread = 2
harbor = 0
address = "127.0.0.1:2526"
master = "127.0.0.1:2013"
cpath = "$B/cservice/?.so"
bootstrap = "echo 5"
CFG
node "$dir/skynet.conf"
[ $? -eq 0 ] && grep -q 'LAUNCH echo 5' "$dir/out" && ! grep -q 'unknown key' "$dir/out"
check skynet_config_keys_do_not_warn $?

printf 'thread = \n' >"$dir/bad.conf"
node "$dir/bad.conf"
[ $? -eq 1 ] && grep -q 'bad.conf:' "$dir/out"
check syntax_error_names_file_exit_1 $?

printf 'thread = 0\nbootstrap = "echo"\n' >"$dir/zero.conf"
node "$dir/zero.conf"
[ $? -eq 1 ]
check thread_out_of_range_exit_1 $?

long=$(printf 'x%.0s' $(seq 1 64))
printf 'priority_lane = "agent %s"\nbootstrap = "echo"\n' "$long" >"$dir/prio.conf"
node "$dir/prio.conf"
[ $? -eq 1 ] && grep -q 'priority_lane: each pattern must be at most 63 bytes' "$dir/out"
check priority_lane_pattern_too_long_exit_1 $?

cat >"$dir/nomod.conf" <<CFG
harbor = 0
cpath = "$B/cservice/?.so"
bootstrap = "no_such_module"
CFG
node "$dir/nomod.conf"
[ $? -eq 1 ] && grep -q 'Bootstrap error : no_such_module' "$dir/out"
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
timeout 30 "$B/skynet" "$dir/hup.conf" >"$dir/hup.out" 2>&1 &
hup_node=$!
pids="$pids $hup_node"
i=0
while ! grep -q 'LAUNCH echo' "$dir/hup.log" 2>/dev/null && [ $i -lt 250 ]; do
	sleep 0.02
	i=$((i + 1))
done
mv "$dir/hup.log" "$dir/hup.log.1"
kill -HUP "$hup_node"
wait "$hup_node"
hup_status=$?
sed 's/^/    | /' "$dir/hup.out"
[ "$hup_status" -eq 0 ] && grep -q 'LAUNCH echo 60' "$dir/hup.log.1" &&
	grep -q 'KILL self' "$dir/hup.log" 2>/dev/null
check sighup_reopens_log_file $?

# Lua nodes: the Lua paths of a checkout, and a folder for the test's scripts.
# harbor is left out: it defaults to 0.
lua_conf() { # file, extra lines
	cat >"$1" <<CFG
thread = 2
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = "./lualib/?.lua;./lualib/?/init.lua"
luaservice = "./service/?.lua;$dir/?.lua"
lualoader = "./lualib/loader.lua"
$2
CFG
}

# Without harbor the node runs as one node (harbor = 0) and a Lua start service runs.
printf 'local skynet = require "skynet"\nrequire "skynet.manager"\n%s\n' \
	'skynet.start(function() skynet.error("start ran") skynet.abort(0) end)' >"$dir/hello.lua"
lua_conf "$dir/noharbor.conf" 'start = "hello"'
node "$dir/noharbor.conf"
[ $? -eq 0 ] && grep -q 'start ran' "$dir/out" && ! grep -q 'unknown key' "$dir/out"
check harbor_absent_boots_single_node $?

# harbor != 0 asks for multi-node mode, which this build lacks: a clear line, exit 1.
lua_conf "$dir/harbor.conf" 'harbor = 1'
node "$dir/harbor.conf"
[ $? -eq 1 ] && grep -q 'set harbor = 0' "$dir/out"
check multinode_config_explains_itself_exit_1 $?

# A start service that cannot start stops the node with the reason and exit 1.
lua_conf "$dir/nostart.conf" 'start = "no_such_start"'
node "$dir/nostart.conf"
[ $? -eq 1 ] && grep -q 'no_such_start.lua: No such file' "$dir/out" &&
	tail -n 1 "$dir/out" | grep -q 'newservice no_such_start failed: cannot open .*no_such_start.lua'
check missing_start_script_exit_1 $?

# A failed load logs no traceback made only of the loader's and nameless C
# frames ("[C]: in ?"): the error names the file already.
! grep -q 'stack traceback' "$dir/out" && ! grep -q '^	\[C\]: in ?$' "$dir/out"
check missing_start_script_no_empty_traceback $?

# A service file that does not compile: its compile error is the first line
# naming the file (no "cannot open" of the templates tried before it), and the
# caller's error names the service and gives that error.
printf 'local skynet = require "skynet"\nskynet.start(function()\n' >"$dir/broken.lua"
lua_conf "$dir/broken.conf" 'start = "broken"'
node "$dir/broken.conf"
[ $? -eq 1 ] && grep -m 1 'broken\.lua' "$dir/out" | grep -q "broken.lua:.*expected" &&
	! grep -q 'cannot open.*broken\.lua' "$dir/out" &&
	tail -n 1 "$dir/out" | grep -q "newservice broken failed: .*broken.lua:.*expected"
check start_script_syntax_error_exit_1 $?
! grep -q 'stack traceback' "$dir/out" && ! grep -q '^	\[C\]: in ?$' "$dir/out"
check start_script_syntax_error_no_empty_traceback $?

# A script that fails while it loads keeps its own frames, and only those.
printf 'local function f()\n\tlocal x = nil\n\treturn x.y\nend\nf()\n' >"$dir/loadfail.lua"
lua_conf "$dir/loadfail.conf" 'start = "loadfail"'
node "$dir/loadfail.conf"
[ $? -eq 1 ] && grep -q 'loadfail.lua:3: in local .f.$' "$dir/out" &&
	grep -q 'loadfail.lua:5: in main chunk$' "$dir/out" && ! grep -q 'loader\.lua:[0-9]*: in' "$dir/out" &&
	! grep -q '^	\[C\]: in ?$' "$dir/out" &&
	tail -n 1 "$dir/out" | grep -q "newservice loadfail failed: .*loadfail.lua:3: attempt to index a nil value"
check start_script_load_error_keeps_its_frames $?

printf 'local skynet = require "skynet"\nskynet.start(function()\n\tskynet.uniqueservice("broken")\nend)\n' \
	>"$dir/usebroken.lua"
lua_conf "$dir/usebroken.conf" 'start = "usebroken"'
node "$dir/usebroken.conf"
[ $? -eq 1 ] && grep -q 'usebroken.lua:3: newservice broken failed: .*broken.lua:.*expected' "$dir/out" &&
	! grep -q 'ext/service\.lua:[0-9]*: \(call failed\|newservice\)' "$dir/out"
check uniqueservice_syntax_error_names_service $?

# The bootstrap service itself failing (missing script, or its start function
# raising) also stops the node with exit status 1.
lua_conf "$dir/noboot.conf" 'bootstrap = "snlua no_such_boot"'
node "$dir/noboot.conf"
[ $? -eq 1 ] && grep -q 'no_such_boot.lua: No such file' "$dir/out" &&
	grep -q 'cannot start without this service' "$dir/out"
check missing_bootstrap_script_exit_1 $?

printf 'local skynet = require "skynet"\nskynet.start(function()\n\terror("boot broke")\nend)\n' \
	>"$dir/badboot.lua"
lua_conf "$dir/badboot.conf" 'bootstrap = "snlua badboot"'
node "$dir/badboot.conf"
[ $? -eq 1 ] && grep -q 'boot broke' "$dir/out" && grep -q 'cannot start without this service' "$dir/out"
check bootstrap_start_error_exit_1 $?

# A start service whose listen fails (the port is taken) stops the node with exit 1.
# The port is held by a first node listening on port 0, which logs the port it got.
cat >"$dir/hold.lua" <<'LUA'
local skynet = require "skynet"
local socket = require "skynet.socket"
skynet.start(function()
	local _, _, port = socket.listen("127.0.0.1", 0)
	skynet.error("holding port " .. port)
end)
LUA
# The start service asks a second one to listen, as a game's main asks its
# gate through the watchdog: the reason travels back through both calls.
cat >"$dir/listen.lua" <<'LUA'
local skynet = require "skynet"
skynet.start(function()
	local listener = skynet.newservice("listener")
	skynet.call(listener, "lua", tonumber(skynet.getenv "port"))
end)
LUA
cat >"$dir/listener.lua" <<'LUA'
local skynet = require "skynet"
local socket = require "skynet.socket"
skynet.start(function()
	skynet.dispatch("lua", function(_, _, port)
		socket.listen("127.0.0.1", port)
		skynet.ret()
	end)
end)
LUA
lua_conf "$dir/hold.conf" "start = \"hold\"
logger = \"$dir/hold.log\""
timeout 60 "$B/skynet" "$dir/hold.conf" >"$dir/hold.out" 2>&1 &
holder=$!
pids="$pids $holder"
i=0
while ! grep -q 'holding port' "$dir/hold.log" 2>/dev/null && [ $i -lt 500 ]; do
	sleep 0.02
	i=$((i + 1))
done
port=$(sed -n 's/.*holding port \([0-9]*\).*/\1/p' "$dir/hold.log")
lua_conf "$dir/listen.conf" "start = \"listen\"
config_keys = \"port\"
port = ${port:-1}"
node "$dir/listen.conf"
st=$?
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
# The last line says why: the failed service's own "KILL self" line comes
# before it (the launcher answers the bootstrap once that service is gone).
[ -n "$port" ] && [ "$st" -eq 1 ] &&
	tail -n 1 "$dir/out" |
	grep -q "newservice listen failed: cannot listen on 127.0.0.1:$port: address already in use (is another node running?)\$"
check start_listen_port_taken_exit_1 $?
# Once: one traceback (the listener's), no frame-less "[C]: in ?" tails, no
# raw socket log line, no framework file:line as the caller's error.
[ "$(grep -c 'stack traceback:' "$dir/out")" -eq 1 ] && ! grep -q '^	\[C\]: in ?$' "$dir/out" &&
	! grep -q 'Address already in use' "$dir/out" && ! grep -q 'ext/service\.lua:[0-9]*: call failed' "$dir/out"
check start_listen_port_taken_no_noise $?

# daemon: the launching process returns at once; the daemon owns the pid
# file while it runs and removes it when its last service exits.
cat >"$dir/daemon.conf" <<CFG
harbor = 0
cpath = "$B/cservice/?.so"
bootstrap = "echo 30"
logger = "$dir/daemon.log"
daemon = "$dir/node.pid"
CFG
node "$dir/daemon.conf"
started=$?
pid=$(cat "$dir/node.pid" 2>/dev/null)
[ "$started" -eq 0 ] && [ -n "$pid" ] && [ "$pid" != "$$" ]
check daemon_writes_pid_file $?
i=0
while [ -f "$dir/node.pid" ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
[ ! -f "$dir/node.pid" ] && grep -q 'KILL self' "$dir/daemon.log"
check daemon_removes_pid_file_on_exit $?

summary
