#!/bin/sh
# Log amplification: outsiders flood a real-time node whose log goes to a
# file (test/lua/svc_log_flood.lua): 1 MiB of malformed 3-byte frames to
# the cluster port, and 4 clients kicked from a snax.gateserver gate while
# each floods 256 KiB of 3-byte frames (the gate drops what it had queued
# for them: test/lua/svc_kick_gate.lua). Each flood may write fewer than
# LIMIT log lines (between the service's marker lines), the node must stay
# healthy, and for the cluster flood the lines written plus the suppressed
# counts they report add up to one per frame.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. test/node/lib.sh

LIMIT=100

cat >"$dir/config" <<CFG
config_keys = "root"
root = "$PWD/"
thread = 2
harbor = 0
timer = "real"
start = "svc_log_flood"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua;" .. root .. "test/lua/?.lua"
luaservice = root .. "service/?.lua;" .. root .. "test/lua/?.lua"
lualoader = root .. "lualib/loader.lua"
logger = "$dir/node.log"
CFG
timeout 120 "$B/skynet" "$dir/config" >"$dir/out" 2>&1
status=$?
cat "$dir/out"
[ "$status" -eq 0 ]
check node_exits_cleanly $?

# segment NAME: the log lines between "log_flood: NAME begin" and "... end".
segment() {
	sed -n "/log_flood: $1 begin/,/log_flood: $1 end/p" "$dir/node.log" | sed '1d;$d'
}

for name in cluster gate; do
	segment "$name" >"$dir/$name.log"
	lines=$(wc -l <"$dir/$name.log")
	echo "$name flood: $lines log lines, $(wc -c <"$dir/$name.log") bytes (limit $LIMIT lines); first:"
	head -n 3 "$dir/$name.log"
	grep -q "log_flood: $name end" "$dir/node.log" && [ "$lines" -lt "$LIMIT" ]
	check "${name}_flood_log_bounded" $?
	grep -q "^log_flood: $name healthy=true$" "$dir/out"
	check "${name}_flood_node_healthy" $?
done

# Every malformed frame is accounted for: a line of its own or a count.
frames=$(sed -n 's/.*log_flood: cluster end frames=\([0-9]*\).*/\1/p' "$dir/node.log")
accounted=$(grep 'cluster agent .*Invalid req package type' "$dir/cluster.log" | awk '
	/\(first of [0-9]+ lines suppressed in [0-9.]+ s\)$/ {
		n = $0; sub(/.*\(first of /, "", n); sub(/ lines.*/, "", n); sum += n; next
	}
	{ sum += 1 }
	END { print sum + 0 }')
echo "cluster flood: frames=$frames accounted=$accounted"
[ -n "$frames" ] && [ "$accounted" -eq "$frames" ]
check cluster_flood_counts_every_frame $?

# The gate flood really dropped queued frames (else it checked nothing).
grep -q 'Drop message from fd' "$dir/gate.log"
check gate_flood_dropped_frames $?

summary
