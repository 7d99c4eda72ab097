#!/bin/sh
# Durable reminders on the Redis store, in real time, against one private
# redis-server (test/db/servers.sh; it runs with an append-only file synced
# at each write, so that its data survives the kill in part 3; stopped on
# every exit path). Three parts, on databases of their own:
#   1. basics (test/lua/svc_reminder_redis.lua, rr_mode = basic): set, get,
#      list, cancel, replace (also a key set several times in one batch),
#      cron with tz, every, retries, dead letters, retry; runs fire
#      never early, nine in ten within 20 ms of their due, all within 100 ms.
#      Then a node with a wrong password in reminder_store stops at boot.
#   2. two nodes (test/lua/svc_reminder_redis_node.lua, reminder_lease = 2):
#      node a sets 200 reminders due 1-4 s ahead and holds them; node b
#      replaces or cancels 10 others that a holds (a must not fire the old
#      ones); a is killed with SIGKILL 2.2 s after its sets; b fires each of
#      a's runs that a had not fired within lease + 1 s (+ 0.3 s) of
#      max(due, kill) and none of them before the kill; a is started again
#      and fires nothing twice. Only a run a delivered in the last lease
#      before the kill may be delivered twice. The counts are printed.
#   3. outage (svc_reminder_redis.lua, rr_mode = outage): Redis killed and
#      restarted, then stopped and continued (SIGSTOP/SIGCONT): a set raises
#      while it is down, runs due meanwhile fire once it is back.
B=${SKYNET_BUILD:-.}
LEASE=2
dir=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	[ -f "$dir/redis/redis.pid" ] && kill -CONT "$(cat "$dir/redis/redis.pid")" 2>/dev/null
	sh test/db/servers.sh kill-redis "$dir/redis"
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
. test/node/lib.sh

mkdir -p "$dir/redis"
export REDIS_PERSIST=1 # also for the restart by svc_reminder_redis.lua
if ! sh test/db/servers.sh start-redis "$dir/redis"; then
	check "start redis-server" 1
	summary
	exit 1
fi
port=$(cat "$dir/redis/redis.port")

# config NAME START DB [KEY=VALUE lines]: a real-time node's config.
config() {
	name=$1
	start=$2
	db=$3
	shift 3
	cat >"$dir/config.$name" <<CFG
config_keys = "root, rr_dir, rr_redis_dir, rr_mode, rr_node"
root = "$PWD/"
thread = 2
harbor = 0
timer = "real"
start = "$start"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua;" .. root .. "test/lua/?.lua"
luaservice = root .. "service/?.lua;" .. root .. "test/lua/?.lua"
lualoader = root .. "lualib/loader.lua"
reminder_store = "redis://:skypw@127.0.0.1:$port/$db"
reminder_lease = $LEASE
rr_dir = "$dir"
rr_redis_dir = "$dir/redis"
CFG
	for kv in "$@"; do
		echo "$kv" >>"$dir/config.$name"
	done
}

# run_cases NAME: runs the node of config.NAME to its end and adds its
# "ok"/"FAIL" lines to the tally.
run_cases() {
	timeout 120 "$B/skynet" "$dir/config.$1" >"$dir/out.$1" 2>&1
	status=$?
	grep -E '^(ok |FAIL |on time:|set while|run due|the timed-out)' "$dir/out.$1"
	n_ok=$(grep -c '^ok ' "$dir/out.$1")
	n_fail=$(grep -c '^FAIL ' "$dir/out.$1")
	passed=$((passed + n_ok))
	failed=$((failed + n_fail))
	if [ "$status" -ne 0 ] && [ "$n_fail" -eq 0 ] || [ "$n_ok" -eq 0 ]; then
		check "node $1 ran its cases (exit status $status)" 1
		tail -n 20 "$dir/out.$1"
	fi
}

# wait_for FILE TEXT TENTHS
wait_for() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null || [ "$i" -ge "$3" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "$2" "$1" 2>/dev/null
}

# 1. basics
config basic svc_reminder_redis 0 'rr_mode = "basic"' 'reminder_attempts = 3'
run_cases basic

# A wrong password stops the boot with one line that says why (and does not
# show the password).
config badpw svc_reminder_redis_node 0 'rr_node = "a2"' \
	"reminder_store = \"redis://:wrongpw@127.0.0.1:$port/0\""
timeout 20 "$B/skynet" "$dir/config.badpw" >"$dir/out.badpw" 2>&1
status=$?
grep "cannot connect" "$dir/out.badpw"
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] && grep -q "cannot connect" "$dir/out.badpw" &&
	grep -q "auth failed .*WRONGPASS" "$dir/out.badpw" &&
	! grep -q wrongpw "$dir/out.badpw"
check reminder_redis_bad_password_stops_the_boot $?

# 2. two nodes
config a svc_reminder_redis_node 1 'rr_node = "a"'
config b svc_reminder_redis_node 1 'rr_node = "b"'
config a2 svc_reminder_redis_node 1 'rr_node = "a2"'
"$B/skynet" "$dir/config.b" >"$dir/out.b" 2>&1 &
pid_b=$!
pids="$pid_b"
"$B/skynet" "$dir/config.a" >"$dir/out.a" 2>&1 &
pid_a=$!
pids="$pids $pid_a"
wait_for "$dir/out.a" "rr: a set" 300
check reminder_redis_a_set $?
wait_for "$dir/out.b" "rr: b crossed" 50
check reminder_redis_b_crossed $?
sleep 2.2
kill_time=$(date +%s.%N)
kill -KILL $pid_a
wait $pid_a 2>/dev/null
# a's last runs are due 4 s after its sets: b has them by lease + 1 s later
sleep $((LEASE + 3))
"$B/skynet" "$dir/config.a2" >"$dir/out.a2" 2>&1 &
pid_a2=$!
pids="$pids $pid_a2"
sleep $((LEASE + 2))
kill -KILL $pid_a2 $pid_b
wait $pid_a2 $pid_b 2>/dev/null
pids=""
touch "$dir/fired.a.log" "$dir/fired.b.log" "$dir/fired.a2.log"

lua5.4 - "$dir" "$kill_time" "$LEASE" >"$dir/verdict" <<'LUA'
local dir, kill_time, lease = arg[1], tonumber(arg[2]), tonumber(arg[3])
local SLACK <const> = 0.3 -- processing, on top of lease + 1 s (the loader's poll)
local due_of, sets = {}, 0
for line in io.lines(dir .. "/set.log") do
	local k, due = line:match "^(%S+) (%S+)$"
	due_of[k] = tonumber(due)
	sets = sets + 1
end
local fired = {} -- key -> { { node, at, due, payload } ... } in node order a, b, a2
local early, bad = 0, 0
local function bad_line(fmt, ...)
	bad = bad + 1
	print(string.format(fmt, ...))
end
for _, node in ipairs { "a", "b", "a2" } do
	for line in io.lines(dir .. "/fired." .. node .. ".log") do
		local k, due, at, payload = line:match "^(%S+) (%S+) (%S+) (%S+)$"
		due, at = tonumber(due), tonumber(at)
		if at < due then
			early = early + 1
			print("early: " .. node .. " " .. line)
		end
		local list = fired[k] or {}
		list[#list + 1] = { node = node, at = at, due = due, payload = payload }
		fired[k] = list
	end
end
local by_a, taken, dups, lost, worst = 0, 0, 0, 0, -math.huge
for k, due in pairs(due_of) do
	local list = fired[k]
	if list == nil then
		lost = lost + 1
		print("lost: " .. k)
	elseif list[1].node == "a" then
		by_a = by_a + 1
		if #list > 1 then
			dups = dups + 1
			if list[1].at <= kill_time - lease then
				bad_line("%s acknowledged by a at %.3f (kill %.3f) fired again on %s", k, list[1].at,
					kill_time, list[2].node)
			end
		end
	else
		taken = taken + 1
		local first = list[1]
		if first.node ~= "b" then
			bad_line("%s was first fired on %s", k, first.node)
		end
		if first.at < kill_time then
			bad_line("%s (held by a) fired on b before the kill: %.3f < %.3f", k, first.at, kill_time)
		end
		local late = first.at - (math.max(due, kill_time) + lease + 1)
		worst = math.max(worst, late)
		if late > SLACK then
			bad_line("%s taken over %.3f s after max(due, kill) + lease + 1", k, late)
		end
		if #list > 1 then
			bad_line("%s fired %d times, none in flight at the kill", k, #list)
		end
	end
end
local cross = 0
for i = 1, 10 do
	local list = fired["x" .. i] or {}
	for _, f in ipairs(list) do
		if f.payload ~= "new" then
			bad_line("x%d fired on %s with payload %s (replaced or cancelled on b)", i, f.node, f.payload)
		end
	end
	if i <= 5 and #list ~= 1 then
		bad_line("x%d (set again on b) fired %d times", i, #list)
	end
	cross = cross + #list
end
print(string.format("sets=%d fired_by_a=%d taken_over_by_b=%d lost=%d early=%d duplicates=%d"
	.. " (in flight at the kill) crossed=%d/5 takeover_latest=%+.3f s vs max(due,kill)+lease+1",
	sets, by_a, taken, lost, early, dups, cross, worst))
print((sets == 200 and lost == 0 and early == 0 and bad == 0 and taken > 0 and by_a > 0)
	and "verdict ok" or "verdict bad")
LUA
tail -n 12 "$dir/verdict"
grep -q "^verdict ok" "$dir/verdict"
check reminder_redis_two_nodes_failover $?

# 3. outage
config outage svc_reminder_redis 2 'rr_mode = "outage"'
run_cases outage
summary
