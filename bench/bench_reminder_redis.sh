#!/usr/bin/env bash
# Reminders on the Redis store (bench/bench_reminder_redis.lua), against a
# private redis-server (test/db/servers.sh: a free 127.0.0.1 port, a
# temporary folder, stopped on every exit path; no persistence):
#   reminder.set_per_s_redis  one node, 4 services x 64 coroutines calling
#                             reminder.set, for 2.5 s or 50k sets
#   reminder.failover_s       two nodes with reminder_lease = LEASE: node a
#                             sets 100 runs due 1 s ahead and is killed with
#                             SIGKILL 0.05 s before they are due; from the
#                             kill to the first of them fired by node b
#   reminder.failover_lease_s the lease of that run (failover_s is at most
#                             lease + 1 s, the loader's poll, + the gap)
B=${SKYNET_BUILD:-.}
LEASE=2
dir=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	sh test/db/servers.sh kill-redis "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT
sh test/db/servers.sh start-redis "$dir" || exit 1
port=$(cat "$dir/redis.port")

# config NAME DB [lines]
config() {
	name=$1
	db=$2
	shift 2
	cat >"$dir/config.$name" <<CFG
config_keys = "root"
root = "./"
thread = 2
harbor = 0
timer = "real"
start = "bench_reminder_redis"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua;" .. root .. "bench/?.lua"
luaservice = root .. "service/?.lua;" .. root .. "bench/?.lua"
lualoader = root .. "lualib/loader.lua"
reminder_store = "redis://:skypw@127.0.0.1:$port/$db"
reminder_lease = $LEASE
CFG
	for kv in "$@"; do
		echo "$kv" >>"$dir/config.$name"
	done
}

config set 0 'rb_mode = "set"'
timeout 60 "$B/skynet" "$dir/config.set" >"$dir/out.set" 2>&1
grep -E '^(BENCH|bench:) ' "$dir/out.set" || {
	echo "bench: bench_reminder_redis set failed" >&2
	tail -n 20 "$dir/out.set" >&2
}

due=$(awk -v n="$(date +%s.%N)" 'BEGIN { printf "%.3f", n + 1 }')
config b 1 'rb_mode = "fire"' "rb_out = \"$dir/fired\""
config a 1 'rb_mode = "hold"' "rb_due = $due"
"$B/skynet" "$dir/config.b" >"$dir/out.b" 2>&1 &
pids="$!"
"$B/skynet" "$dir/config.a" >"$dir/out.a" 2>&1 &
pid_a=$!
pids="$pids $pid_a"
i=0
until grep -q "rb: set" "$dir/out.a" 2>/dev/null || [ $i -ge 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
now=$(date +%s.%N)
sleep "$(awk -v d="$due" -v n="$now" 'BEGIN { s = d - 0.05 - n; printf "%.3f", (s > 0 ? s : 0) }')"
kill_time=$(date +%s.%N)
kill -KILL $pid_a
i=0
until [ -s "$dir/fired" ] || [ $i -ge 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
if [ -s "$dir/fired" ]; then
	awk -v k="$kill_time" -v l="$LEASE" '{ printf "BENCH name=reminder.failover_s value=%.2f unit=s\n", $2 - k
		printf "BENCH name=reminder.failover_lease_s value=%d unit=s\n", l }' "$dir/fired"
else
	echo "bench: bench_reminder_redis failover: node b fired nothing in 10 s" >&2
	tail -n 20 "$dir/out.b" >&2
fi
