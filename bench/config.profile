-- The sampling profiler's overhead (make bench): real time, two workers.
-- bench/run.sh starts `SKYNET_BUILD=<dir> <dir>/skynet bench/config.profile`
-- from the repository root; bench_profile prints its BENCH line.
config_keys = "root, build"
root = "./"
build = "$SKYNET_BUILD/"
thread = 2
harbor = 0
start = "bench_profile"
bootstrap = "snlua bootstrap"
cpath = build .. "cservice/?.so"
lua_cpath = build .. "luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua;" .. root .. "bench/?.lua"
luaservice = root .. "service/?.lua;" .. root .. "bench/?.lua"
lualoader = root .. "lualib/loader.lua"
