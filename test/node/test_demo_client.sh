#!/bin/sh
# The demo's terminal client (examples/client.lua) against a real-time demo
# node (examples/config, the gate on a free port, a 1 s idle kick): a kick
# or the server's close ends the client at once with status 0 and the
# reason printed, without a prompt left behind (checked on a pseudo-terminal
# made by script(1)); `say` gets an answer; `chest` starts a chest that
# `st` shows (the reminder store is a file in the test's temporary folder,
# not examples/config's ./data/); the escape sequences of arrow keys are
# taken out of a line. A second node with a 7 s idle kick: a client whose
# player only reads the screen for 9 s is kept in by its own pings. Every
# wait is bounded; the nodes are killed on every path.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
node=
cleanup() {
	exec 3>&-
	[ -n "$node" ] && kill "$node" 2>/dev/null && wait "$node" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
trap '' PIPE # a client that is gone already fails a write to its input, not this script
. test/node/lib.sh
finish() {
	summary
	exit
}

# The client's socket module; a sanitizer build's copy does not load into the
# system interpreter, so a plain one is built from the same source then.
CPATH=$(client_cpath clientsocket "$dir")
LUA_CPATH="$CPATH" timeout 10 lua5.4 -e 'require "clientsocket"'
check clientsocket_loads $?
command -v script >/dev/null 2>&1
check script_available $?
[ "$failed" -eq 0 ] || finish

# start_node IDLE_CS: a demo node on a free port; sets node and port.
start_node() {
	rm -f "$dir/node.log"
	cat >"$dir/config" <<CFG
include "$PWD/examples/config"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
logger = "$dir/node.log"
reminder_store = "sqlite:$dir/reminders.db"
gate_port = 0
debug_console_port = 0
web_port = 0
metrics_port = 0
idle_kick_cs = $1
config_keys = config_keys .. ", monster_count"
monster_count = 0
CFG
	"$B/skynet" "$dir/config" &
	node=$!
	port=
	i=0
	while [ -z "$port" ] && [ $i -lt 300 ] && kill -0 "$node" 2>/dev/null; do
		sleep 0.1
		port=$(sed -n 's/.*Watchdog listen on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/node.log" \
			2>/dev/null)
		i=$((i + 1))
	done
	CLIENT="lua5.4 examples/client.lua 127.0.0.1 $port"
}

start_node 100
[ -n "$port" ]
check node_listens $?
[ -n "$port" ] || finish

# start NAME tty|pipe: runs the client in the background, its stdin a fifo
# held open on fd 3 (so it never ends by itself), its output in $dir/NAME.
start() {
	rm -f "$dir/in"
	mkfifo "$dir/in"
	if [ "$2" = tty ]; then
		LUA_CPATH="$CPATH" timeout 15 script -qefc "$CLIENT" /dev/null <"$dir/in" \
			>"$dir/$1" 2>&1 &
	else
		LUA_CPATH="$CPATH" timeout 15 $CLIENT <"$dir/in" >"$dir/$1" 2>&1 &
	fi
	client=$!
	exec 3>"$dir/in"
}

# stop: waits for the client (at most its timeout); sets rc and secs.
stop() {
	t0=$1
	wait "$client"
	rc=$?
	secs=$(($(date +%s) - t0))
	exec 3>&-
}

has() { # file, text
	grep -qF -- "$2" "$dir/$1" 2>/dev/null
}

ends_with_newline() { # file: its last byte is \n (no prompt left after it)
	[ "$(tail -c 1 "$dir/$1" | od -An -c | tr -d ' ')" = '\n' ]
}

# 1. On a terminal: login, say, then silence: the idle kick ends the client.
t0=$(date +%s)
start tty_idle tty
printf 'login ann\nsay hello\n' >&3
stop "$t0"
[ "$rc" -eq 0 ] && [ "$secs" -le 10 ]
check tty_idle_kick_exits_0_promptly $?
has tty_idle "you say: hello (nobody heard you)"
check tty_say_is_answered $?
has tty_idle "* the server disconnects you: idle (1.0s without a message)"
check tty_kick_reason_printed $?
ends_with_newline tty_idle
check tty_no_prompt_left_after_kick $?

# 2. stdin a pipe that stays open: the kick ends the client all the same.
# On the way, a chest (a durable reminder) starts and status shows it.
t0=$(date +%s)
start pipe_idle pipe
printf 'login bob\nsay hi bob here\nchest\nst\n' >&3
stop "$t0"
[ "$rc" -eq 0 ] && [ "$secs" -le 10 ]
check pipe_idle_kick_exits_0_promptly $?
has pipe_idle "you say: hi bob here (nobody heard you)" &&
	has pipe_idle "* the server disconnects you: idle (1.0s without a message)"
check pipe_say_answered_and_kick_reason $?
has pipe_idle "you start opening a chest: 100 gold in 120.0s" &&
	grep -q "chest opens in 1[12][0-9]\.[0-9]s" "$dir/pipe_idle"
check pipe_chest_started_and_shown $?
[ "$(tail -n 1 "$dir/pipe_idle")" = "* the server disconnects you: idle (1.0s without a message)" ]
check pipe_kick_is_the_last_line $?

# 2b. Arrow keys put escape sequences in a line (ESC [ A): taken out, so a
# line of arrows alone gets a hint and no request, and a line with one in
# it is the line without it; a typo still gets the server's error.
t0=$(date +%s)
start pipe_keys pipe
printf 'login dan\n\033[A\033[B\nlo\033[Dok\nfly\n' >&3
stop "$t0"
has pipe_keys "(arrow and other special keys do nothing here: type n, s, e, w" &&
	has pipe_keys "you are at 5,5; players: none" &&
	has pipe_keys "error (fly): unknown command (try help)" &&
	[ "$(grep -c '^error' "$dir/pipe_keys")" -eq 1 ] && ! grep -q "$(printf '\033')" "$dir/pipe_keys"
check arrow_keys_stripped_typo_answered $?

# 3. quit on a terminal: "kick bye", then the end, no prompt.
t0=$(date +%s)
start tty_quit tty
printf 'login cat\nquit\n' >&3
stop "$t0"
[ "$rc" -eq 0 ] && [ "$secs" -le 10 ] && has tty_quit "* the server disconnects you: bye"
check tty_quit_exits_0 $?
ends_with_newline tty_quit
check tty_no_prompt_left_after_quit $?

# 4. The server goes away (no kick): the client says so and ends. Pings keep
# the idle kick away until the node is killed.
t0=$(date +%s)
start pipe_closed pipe
i=0
while ! has pipe_closed pong && [ $i -lt 50 ]; do
	printf 'ping\n' >&3
	sleep 0.2
	i=$((i + 1))
done
kill "$node"
wait "$node" 2>/dev/null
node=
stop "$t0"
[ "$rc" -eq 0 ] && [ "$secs" -le 20 ]
check closed_by_server_exits_0 $?
[ "$(tail -n 1 "$dir/pipe_closed")" = "* connection closed by the server" ]
check closed_by_server_says_so $?

# 5. A player reading the screen: no input for 9 s against a 7 s idle kick.
# The client's own pings (every 5 s of silence) keep it in, and their
# answers are not shown.
start_node 700
[ -n "$port" ]
check second_node_listens $?
[ -n "$port" ] || finish
t0=$(date +%s)
start tty_reader tty
printf 'login eve\n' >&3
sleep 9
printf 'st\n' >&3
i=0
while ! has tty_reader "eve at 5,5" && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill "$node"
wait "$node" 2>/dev/null
node=
stop "$t0"
has tty_reader "eve at 5,5" && ! has tty_reader "disconnects you" && ! has tty_reader pong
check idle_reader_kept_in_by_pings $?

finish
