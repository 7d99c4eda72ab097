#!/bin/sh
# Durable reminders across a SIGKILL (test/lua/svc_reminder_crash.lua): a
# real-time node sets reminders from 8 coroutines (due 0.05-2 s ahead)
# while they fire, and is killed with SIGKILL after 3 s; a second node on
# the same SQLite file fires what is left. Every set that returned fired
# (no reminder lost), none fired before its due, and a run fired twice
# only when its first delivery came just before the kill (in flight: its
# acknowledgement was not stored). The counts are printed. Last, a store
# file that is not a database stops the boot with the reason.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. test/node/lib.sh

config() {
	cat >"$dir/config.$1" <<CFG
config_keys = "root, crash_dir, crash_mode"
root = "$PWD/"
thread = 2
harbor = 0
timer = "real"
start = "svc_reminder_crash"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua;" .. root .. "test/lua/?.lua"
luaservice = root .. "service/?.lua;" .. root .. "test/lua/?.lua"
lualoader = root .. "lualib/loader.lua"
reminder_store = "sqlite:$dir/data/reminders.db"
crash_dir = "$dir"
crash_mode = "$1"
CFG
}
config load
config check

"$B/skynet" "$dir/config.load" >"$dir/out.load" 2>&1 &
pid=$!
i=0
until grep -q "crash: loading" "$dir/out.load" 2>/dev/null || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 3
kill_time=$(date +%s.%N)
kill -KILL $pid
wait $pid 2>/dev/null
sets=$(wc -l <"$dir/set.log")
echo "killed after $sets sets returned"
[ "$sets" -gt 100 ]
check reminder_crash_load_ran $?

timeout 60 "$B/skynet" "$dir/config.check" >"$dir/out.check" 2>&1
status=$?
tail -n 3 "$dir/out.check"
[ "$status" -eq 0 ] && grep -q "check done pending=0" "$dir/out.check"
check reminder_crash_restart_drained $?

lua5.4 - "$dir/set.log" "$dir/fired.log" "$kill_time" >"$dir/verdict" <<'LUA'
local set_log, fired_log, kill_time = arg[1], arg[2], tonumber(arg[3])
local due_of, fired = {}, {}
for line in io.lines(set_log) do
	local k, due = line:match "^(%S+) (%S+)$"
	if k then
		due_of[k] = tonumber(due)
	end
end
local early, deliveries = 0, 0
for line in io.lines(fired_log) do
	local k, due, at, phase = line:match "^(%S+) (%S+) (%S+) (%d)$"
	due, at = tonumber(due), tonumber(at)
	deliveries = deliveries + 1
	if at < due then
		early = early + 1
		print("early: " .. line)
	end
	local list = fired[k] or {}
	list[#list + 1] = { at = at, phase = tonumber(phase) }
	fired[k] = list
end
local lost, dups, bad_dups, sets = 0, 0, 0, 0
for k in pairs(due_of) do
	sets = sets + 1
	if fired[k] == nil then
		lost = lost + 1
		print("lost: " .. k)
	end
end
for k, list in pairs(fired) do
	if #list > 1 then
		dups = dups + 1
		-- in flight at the kill: first delivered in the last second before it
		if not (list[1].phase == 1 and list[1].at > kill_time - 1 and list[2].phase == 2) then
			bad_dups = bad_dups + 1
			print(string.format("duplicate not in flight at the kill: %s first at %.3f (kill %.3f)", k,
				list[1].at, kill_time))
		end
	end
end
print(string.format("sets=%d deliveries=%d lost=%d early=%d duplicates=%d (in flight at the kill: %d)",
	sets, deliveries, lost, early, dups, dups - bad_dups))
print(lost == 0 and early == 0 and bad_dups == 0 and "verdict ok" or "verdict bad")
LUA
cat "$dir/verdict" | tail -n 12
grep -q "^verdict ok" "$dir/verdict"
check reminder_crash_nothing_lost_early_or_twice $?
# A store file that is not a database stops the boot with one line naming
# it and the reason, and the file is left as it was.
printf 'these bytes are not a database %.0s' $(seq 1 200) >"$dir/data/corrupt.db"
sum_before=$(cksum <"$dir/data/corrupt.db")
sed "s|reminders.db|corrupt.db|" "$dir/config.check" >"$dir/config.corrupt"
timeout 60 "$B/skynet" "$dir/config.corrupt" >"$dir/out.corrupt" 2>&1
status=$?
grep "corrupt.db\|node cannot start" "$dir/out.corrupt"
[ "$status" -eq 1 ] && tail -n 1 "$dir/out.corrupt" |
	grep -q "newservice reminderd failed: reminder store .*corrupt.db: sqlite: cannot open .*file is not a database" &&
	[ "$(cksum <"$dir/data/corrupt.db")" = "$sum_before" ]
check reminder_corrupt_store_stops_boot $?
summary
