-- Login example, the login node: ./skynet examples/login/config.login
-- (from the repository root). Players log in on port 8001.
-- Keys the framework does not read (this node's own): no warning at boot.
config_keys = "root, login_port"
root = "./"
thread = 2
harbor = 0
start = "login_main"
bootstrap = "snlua bootstrap"
cpath = root .. "cservice/?.so"
lua_cpath = root .. "luaclib/?.so"
lua_path = root .. "lualib/?.lua;" .. root .. "lualib/?/init.lua"
luaservice = root .. "service/?.lua;" .. root .. "examples/login/?.lua"
lualoader = root .. "lualib/loader.lua"
cluster = root .. "examples/login/clustername.lua"
login_port = 8001
