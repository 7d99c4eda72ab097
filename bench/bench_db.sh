#!/usr/bin/env bash
# Database driver benchmarks against private servers (test/db/servers.sh:
# free 127.0.0.1 ports, a temporary directory, stopped on every exit path):
# bench/bench_db.lua on a real-time node, then redis-benchmark against the
# same redis-server for the server's own ceiling (db.redis.server_get_per_s,
# 50 clients, no pipelining).
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
cleanup() {
	sh test/db/servers.sh stop "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT
sh test/db/servers.sh start "$dir" || exit 1
. "$dir/env"
cat >"$dir/config" <<CFG
config_keys = "root"
root = "./"
thread = 2
harbor = 0
timer = "real"
start = "bench_db"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua;" .. root .. "bench/?.lua"
luaservice = root .. "service/?.lua;" .. root .. "bench/?.lua"
lualoader = root .. "lualib/loader.lua"
CFG
timeout 60 "$B/skynet" "$dir/config" 2>&1 | grep -E '^BENCH ' || echo "bench: bench_db.lua failed" >&2
redis-benchmark -h 127.0.0.1 -p "$DB_REDIS_PORT" -a "$DB_REDIS_PASSWORD" -t get -n 100000 -q \
	2>/dev/null | tr "\r" "\n" | awk '/^GET: .*requests per second/ { printf "BENCH name=db.redis.server_get_per_s value=%.0f unit=ops/s\n", $2 }'
