#!/bin/sh
# examples/login runs as examples/README.md says: the login node and the
# gate node (their configs, with the players' and the cluster's ports moved
# to free ones), then the terminal client from a pipe: it logs in, talks to
# the gate, reconnects and gets the answer it missed from the gate's cache;
# a second client with the same name kicks the first login (the login node
# logs the logout). Every wait is bounded; the nodes are killed on every path.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
login_node=
gate_node=
cleanup() {
	[ -n "$gate_node" ] && kill "$gate_node" 2>/dev/null && wait "$gate_node" 2>/dev/null
	[ -n "$login_node" ] && kill "$login_node" 2>/dev/null && wait "$login_node" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
. test/node/lib.sh
finish() {
	summary
	exit
}

# free_port: a port in 20000-59999 no socket of this machine listens on
# (/proc/net/tcp and tcp6 list them in hex).
free_port() {
	while :; do
		p=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))
		hexp=$(printf ':%04X ' "$p")
		if ! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q "$hexp"; then
			echo "$p"
			return
		fi
	done
}

CPATH=$(client_cpath client.socket "$dir")
cat >"$dir/clustername.lua" <<CFG
login = "127.0.0.1:$(free_port)"
gate = "127.0.0.1:$(free_port)"
CFG
for node in login gate; do
	cat >"$dir/config.$node" <<CFG
include "$PWD/examples/login/config.$node"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
cluster = "$dir/clustername.lua"
logger = "$dir/$node.log"
${node}_port = 0
CFG
done

# wait_log FILE PATTERN: up to 30 s for a line
wait_log() {
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $_i -lt 300 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	grep -q "$2" "$1" 2>/dev/null
}

"$B/skynet" "$dir/config.login" &
login_node=$!
wait_log "$dir/login.log" "login node ready"
check login_node_starts $?
"$B/skynet" "$dir/config.gate" &
gate_node=$!
wait_log "$dir/gate.log" "gate node ready"
check gate_node_starts $?
lport=$(sed -n 's/.*login server listen at : 0\.0\.0\.0 \([0-9]*\)$/\1/p' "$dir/login.log")
gport=$(sed -n 's/.*msgserver listen at : 0\.0\.0\.0 \([0-9]*\) (sample)$/\1/p' "$dir/gate.log")
[ -n "$lport" ] && [ -n "$gport" ]
check ports_logged $?
[ "$failed" -eq 0 ] || { cat "$dir/login.log" "$dir/gate.log"; finish; }

client() {
	LUA_CPATH="$CPATH" timeout 30 lua5.4 examples/login/client.lua "$1" password "$lport" "$gport"
}
out=$(printf 'hello\ntime\nreconnect\nbye\n' | client alice 2>&1)
echo "$out"
echo "$out" | grep -q "^login ok, subid 1$" &&
	echo "$out" | grep -q "^gate handshake (index 1): 200 OK$" &&
	echo "$out" | grep -q "^\[1\] alice said: hello$" &&
	echo "$out" | grep -q "^gate handshake (index 2): 200 OK$" &&
	echo "$out" | grep -q "^\[2\] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]$" &&
	echo "$out" | grep -q "^\[3\] alice said: bye$"
check client_logs_in_talks_and_reconnects $?

out=$(printf 'again\n' | client alice 2>&1)
echo "$out"
echo "$out" | grep -q "^login ok, subid 2$" && echo "$out" | grep -q "^\[1\] alice said: again$"
check second_login_of_same_user $?
grep -q "alice logged out" "$dir/login.log"
check first_login_kicked $?

out=$(printf 'x\n' | LUA_CPATH="$CPATH" timeout 30 lua5.4 examples/login/client.lua bob wrong \
	"$lport" "$gport" 2>&1)
echo "$out"
echo "$out" | grep -q "login failed: 401 Unauthorized"
check wrong_password_401 $?

kill -0 "$login_node" 2>/dev/null && kill -0 "$gate_node" 2>/dev/null
check nodes_still_running $?
if [ "$failed" -ne 0 ]; then
	echo "== login node"
	cat "$dir/login.log"
	echo "== gate node"
	cat "$dir/gate.log"
fi
summary
