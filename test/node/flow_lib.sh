# The node and client plumbing shared by test/node/test_flow.sh and
# bench/bench_flow.sh (sourced from the repository root; POSIX sh). The
# caller sets B (the build folder) and dir (a private temporary folder) and
# kills $node on exit.
#
#   flow_clients        sets CPATH to a clientsocket.so the system lua5.4
#                       loads (a sanitizer build's copy does not, so a plain
#                       one is built from the same source then) and opens
#                       fd 3 on /dev/null: the clients' stdin, at end of
#                       file (their polls pass false: stdin is not watched)
#   flow_node LINES     writes $dir/config (test/lua/svc_flow_node.lua on a
#                       real-time node, logging to $dir/node.log, LINES
#                       appended), starts it (sets node) and waits up to 30 s
#                       for its port (sets port; empty if it never listened)
#   rss_kb              the node's resident set in KiB

flow_clients() {
	CPATH="$B/luaclib/?.so"
	if ! LUA_CPATH="$CPATH" timeout 10 lua5.4 -e 'require "clientsocket"' >/dev/null 2>&1; then
		# shellcheck disable=SC2046 # pkg-config prints several words
		cc -std=gnu11 -O1 -fPIC -shared $(pkg-config --cflags lua5.4) \
			-o "$dir/clientsocket.so" examples/lua-clientsocket.c
		CPATH="$dir/?.so"
	fi
	exec 3</dev/null
}

flow_node() {
	cat >"$dir/config" <<CFG
config_keys = "root"
root = "$PWD/"
thread = 2
harbor = 0
timer = "real"
start = "svc_flow_node"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua"
luaservice = root .. "service/?.lua;" .. root .. "test/lua/?.lua"
lualoader = root .. "lualib/loader.lua"
logger = "$dir/node.log"
$1
CFG
	"$B/skynet" "$dir/config" &
	node=$!
	port=
	_i=0
	while [ -z "$port" ] && [ $_i -lt 300 ] && kill -0 "$node" 2>/dev/null; do
		sleep 0.1
		port=$(sed -n 's/.*flow: listen port=\([0-9]*\).*/\1/p' "$dir/node.log" 2>/dev/null)
		_i=$((_i + 1))
	done
}

PAGE_KB=$(($(getconf PAGESIZE) / 1024))
rss_kb() {
	echo $(($(cut -d' ' -f2 "/proc/$node/statm") * PAGE_KB))
}
