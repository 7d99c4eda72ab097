#!/bin/sh
# The config key `budget` (docs/config.md): rules by service pattern give each
# service its budget at launch, first match wins, a service no rule matches
# gets the default; a warn line names the service and the measure once; a
# bad rule stops the node at boot with the reason and exit status 1.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. test/node/lib.sh

# run RULES: a node that starts $dir/main.lua with budget = RULES; output in $dir/out.
run() {
	cat >"$dir/config" <<CFG
config_keys = "root"
root = "$PWD/"
thread = 2
harbor = 0
timer = "virtual"
start = "main"
bootstrap = "snlua bootstrap"
cpath = "$B/cservice/?.so"
lua_cpath = "$B/luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua"
luaservice = root .. "service/?.lua;" .. root .. "test/lua/?.lua;$dir/?.lua"
lualoader = root .. "lualib/loader.lua"
budget = "$1"
CFG
	timeout 60 "$B/skynet" "$dir/config" >"$dir/out" 2>&1
	st=$?
	sed 's/^/    | /' "$dir/out"
	return $st
}

# main: prints the budgets of a hog (matched by the first rule), of itself
# (the second), then makes the hog loop past its CPU limit under warn.
cat >"$dir/main.lua" <<'LUA'
local skynet = require "skynet"
skynet.start(function()
	local hog = skynet.newservice("svc_budget_hog")
	local b = skynet.call(hog, "lua", "budget")
	print(string.format("hog: cpu=%d memory=%d queue=%d policy=%s", b.cpu_ms_per_s, b.memory_mb,
		b.queue, b.policy))
	b = skynet.budget()
	print(string.format("main: cpu=%d memory=%d queue=%d policy=%s", b.cpu_ms_per_s, b.memory_mb,
		b.queue, b.policy))
	skynet.call(hog, "lua", "loop", 2, 20)
	while skynet.call(hog, "lua", "spins") < 20 do
		skynet.sleep(1)
	end
	skynet.abort()
end)
LUA

run "snlua svc_budget_*: cpu_ms_per_s=10 policy=warn; snlua m?in: memory_mb=64 policy=kill"
st=$?
[ $st -eq 0 ] && grep -q '^hog: cpu=10 memory=0 queue=0 policy=warn$' "$dir/out" &&
	grep -q '^main: cpu=0 memory=64 queue=0 policy=kill$' "$dir/out"
check rules_give_budgets_first_match_wins $?

[ "$(grep -c 'warn: budget: over budget measure=cpu' "$dir/out")" -eq 1 ] &&
	grep 'warn: budget: over budget measure=cpu' "$dir/out" | grep -q 'limit_ms_per_s=10.0 policy=warn'
check warn_logs_one_line $?

run "snlua launcher: off"
[ $? -eq 0 ] && grep -q '^hog: cpu=1000 memory=1024 queue=0 policy=warn$' "$dir/out"
check no_match_gets_the_default $?

run "snlua svc_budget_hog cpu_ms_per_s=10"
[ $? -eq 1 ] && grep -q "^config budget: rule without ':'" "$dir/out"
check bad_rule_stops_the_boot $?

run "snlua *: policy=stop"
[ $? -eq 1 ] && grep -q '^config budget: bad policy (stop): warn, throttle or kill$' "$dir/out"
check bad_value_stops_the_boot $?

summary
