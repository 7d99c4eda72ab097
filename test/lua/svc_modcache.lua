-- Helper service for test_modcache: "require" sets package.path and
-- package.cpath (and the code cache mode, when given) and requires a module;
-- returns true and what the module returned ("table" for a table), or
-- false and the error.
local skynet = require "skynet"
local codecache = require "skynet.codecache"

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, name, path, cpath, mode)
		assert(cmd == "require", cmd)
		package.path = path
		package.cpath = cpath
		if mode then
			codecache.mode(mode)
		end
		local ok, value = pcall(require, name)
		if ok and type(value) == "table" then
			value = "table"
		end
		skynet.retpack(ok, value)
	end)
end)
