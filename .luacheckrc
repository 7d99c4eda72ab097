-- luacheck configuration (`make lint`): the Lua of lualib/, service/,
-- examples/, test/ and bench/ is Lua 5.4 with no globals of its own, except
-- the few the framework defines, declared here once.
std = "lua54"

-- Every service reads these two; lualib/loader.lua (and service/snaxd.lua
-- for a snax service) sets them before the service's main chunk runs.
read_globals = { "SERVICE_NAME", "SERVICE_PATH" }

-- The service loader: snlua hands it the config's search paths and preload
-- file as globals, which it reads, clears, and replaces by SERVICE_NAME and
-- SERVICE_PATH.
files["lualib/loader.lua"] = {
	globals = { "SERVICE_NAME", "SERVICE_PATH", "LUA_SERVICE", "LUA_PATH", "LUA_CPATH", "LUA_PRELOAD" },
}

-- snaxd runs a snax service file in its own environment and names it.
files["service/snaxd.lua"] = { globals = { "SERVICE_NAME", "SERVICE_PATH" } }

-- Snax service files (found along the config key `snax`): their environment
-- holds the method tables accept and response, whose fields the file
-- defines, and records the system hooks init, exit and hotfix it assigns.
local snax = {
	read_globals = {
		accept = { other_fields = true, read_only = false },
		response = { other_fields = true, read_only = false },
	},
	globals = { "init", "exit", "hotfix" },
}
files["test/lua/snax_*.lua"] = snax
files["test/lua/snax_counter/*.lua"] = snax

-- Data files: every global they assign is data, read back by the caller
-- (the cluster node table, a sharedata "@file" source).
local data = { allow_defined_top = true, ignore = { "131" } }
files["examples/cluster/clustername.lua"] = data
files["examples/login/clustername.lua"] = data
files["test/lua/sharedata_conf.lua"] = data

-- Editor annotations (LuaLS ---@meta files): declarations with empty bodies,
-- whose parameters only name the arguments, and class tables that only carry
-- method declarations.
files["docs/types"] = { ignore = { "212", "241" } }

exclude_files = {
	-- Does not compile on purpose: test_launch checks newservice fails on it.
	"test/lua/svc_syntax_error.lua",
}
