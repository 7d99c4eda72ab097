#!/bin/sh
# README.md's demo session, replayed: the terminal client (examples/client.lua,
# stdin a pipe) plays alice against a real-time demo node while a second
# client plays bob, and alice's output must be the README's transcript line
# for line (the port aside). The node is examples/config with the one
# monster m1 standing still at 6,4 and doing no damage (the README says so);
# where players start is the demo's own rule. Every wait is bounded; the
# node is killed on every path.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
node=
alice=
bob=
cleanup() {
	exec 3>&- 4>&-
	[ -n "$alice" ] && kill "$alice" 2>/dev/null
	[ -n "$bob" ] && kill "$bob" 2>/dev/null
	[ -n "$node" ] && kill "$node" 2>/dev/null && wait "$node" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
. test/node/lib.sh
finish() {
	summary
	exit
}

# The transcript: README.md's indented block that starts with the client's
# first line. Lines starting with "> " are what alice types.
awk '/^    connected to 127\.0\.0\.1:8888\./ { on = 1 }
	on && !/^    / { exit }
	on { print substr($0, 5) }' README.md >"$dir/transcript"
[ "$(wc -l <"$dir/transcript")" -ge 10 ]
check readme_has_transcript $?
[ "$failed" -eq 0 ] || finish

CPATH=$(client_cpath clientsocket "$dir")
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
config_keys = config_keys .. ", monster_count, monster_spots, monster_move_cs, monster_damage, "
	.. "monster_respawn_cs"
monster_count = 1
monster_spots = "6,4"
monster_move_cs = 0
monster_damage = 0
monster_respawn_cs = 300
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
[ -n "$port" ]
check node_listens $?
[ -n "$port" ] || finish

# Each client reads a fifo held open here (alice on fd 3, bob on fd 4).
mkfifo "$dir/alice.in" "$dir/bob.in"
LUA_CPATH="$CPATH" timeout 60 lua5.4 examples/client.lua 127.0.0.1 "$port" \
	<"$dir/alice.in" >"$dir/alice" 2>&1 &
alice=$!
exec 3>"$dir/alice.in"
LUA_CPATH="$CPATH" timeout 60 lua5.4 examples/client.lua 127.0.0.1 "$port" \
	<"$dir/bob.in" >"$dir/bob" 2>&1 3>&- &
bob=$!
exec 4>"$dir/bob.in"

# What bob does (in his terminal) just before alice sees its effect.
bob_before() {
	case $1 in
	"* bob entered the arena at"*) echo "login bob" ;;
	"[chat] bob: "*) echo "say ${1#\[chat\] bob: }" ;;
	*"(cast by bob)") echo "cast shield alice" ;;
	esac
}

# Alice types her lines; before each line she sees, bob acts if it is his
# doing, and the replay waits (at most 10 s) until alice's output has that
# many lines, so every line comes in the transcript's order.
want=0
while IFS= read -r line; do
	case $line in
	"> "*)
		printf '%s\n' "${line#> }" >&3
		continue
		;;
	esac
	act=$(bob_before "$line")
	[ -n "$act" ] && printf '%s\n' "$act" >&4
	want=$((want + 1))
	i=0
	while [ "$(wc -l <"$dir/alice")" -lt "$want" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
done <"$dir/transcript"
sleep 0.5 # a line too many would show now
exec 3>&- # alice's input ends: her client exits once its answers are in
wait "$alice"
alice=
exec 4>&-

grep -v '^> ' "$dir/transcript" | sed "s/127\.0\.0\.1:8888/127.0.0.1:$port/" >"$dir/expected"
if diff "$dir/expected" "$dir/alice" >"$dir/diff"; then
	check alice_sees_the_readme_transcript 0
else
	sed 's/^/    | /' "$dir/diff"
	check alice_sees_the_readme_transcript 1
fi
finish
