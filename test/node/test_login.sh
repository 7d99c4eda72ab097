#!/bin/sh
# The login pair (snax.loginserver, snax.msgserver) against a scripted
# client: test/lua/svc_login_node.lua runs two login servers and a message
# server on a real-time node; test/node/login_client.lua (skynet's
# client.socket and client.crypt in the system lua5.4) logs in, talks to the
# gate, checks the bytes of the worked example, every refusal, the kick,
# the limits and a flood of bad handshakes, and prints one line per check.
# A sanitizer build's modules do not load into the system interpreter: then
# a plain client.so is built from the same sources. Every wait is bounded;
# the node is killed on every path.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
node=
cleanup() {
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

CPATH=$(client_cpath client.socket "$dir")
cat >"$dir/config" <<CFG
config_keys = "root"
root = "$PWD/"
thread = 2
harbor = 0
timer = "real"
start = "svc_login_node"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua;" .. root .. "test/lua/?.lua"
luaservice = root .. "service/?.lua;" .. root .. "test/lua/?.lua"
lualoader = root .. "lualib/loader.lua"
logger = "$dir/node.log"
CFG
"$B/skynet" "$dir/config" &
node=$!
i=0
while ! grep -q "login test: ready" "$dir/node.log" 2>/dev/null && [ $i -lt 300 ] &&
	kill -0 "$node" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
ports=$(sed -n 's/.*login server listen at : 127\.0\.0\.1 \([0-9]*\)$/\1/p' "$dir/node.log" |
	tr '\n' ' ')
login_port=${ports%% *}
strict_port=$(echo "$ports" | cut -d' ' -f2)
gate_port=$(sed -n 's/.*msgserver listen at : 127\.0\.0\.1 \([0-9]*\) (sample)$/\1/p' \
	"$dir/node.log")
[ -n "$login_port" ] && [ -n "$strict_port" ] && [ -n "$gate_port" ]
check node_listens $?
[ "$failed" -eq 0 ] || { cat "$dir/node.log"; finish; }

LUA_CPATH="$CPATH" timeout 240 lua5.4 test/node/login_client.lua "$login_port" "$strict_port" \
	"$gate_port" "$dir/node.log" </dev/null >"$dir/client.out" 2>&1
status=$?
cat "$dir/client.out"
grep -q "^[0-9]* passed, 0 failed$" "$dir/client.out" && [ $status -eq 0 ]
check login_client $?
kill -0 "$node" 2>/dev/null
check node_still_running $?
if [ "$failed" -ne 0 ]; then
	echo "== node log (last 60 lines)"
	tail -n 60 "$dir/node.log"
fi
summary
