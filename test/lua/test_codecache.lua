-- The code cache: framework libraries (paths containing "lualib/", config
-- codecache_strip) are cached without local and upvalue names but keep
-- their line numbers; other code keeps full debug information.
local skynet = require "skynet"
local t = require "testlib"

t.case("framework functions keep file and lines but not local names", function()
	-- skynet.send, rawsend, redirect and the rest of the message path are C
	-- (skynet.kernel); the lazy parts are framework Lua code
	local info = debug.getinfo(skynet.rawcall, "S")
	t.ok(info.short_src:find("lualib/skynet/ext/message.lua", 1, true), "source " .. info.short_src)
	t.ok(info.linedefined > 0, "linedefined")
	t.eq(debug.getlocal(skynet.rawcall, 1), nil, "first parameter name of skynet.rawcall")
end)

t.case("tracebacks through framework code name file:line", function()
	local ok, tb = xpcall(skynet.rawcall, debug.traceback, skynet.self(), "no_such_protocol")
	t.eq(ok, false, "xpcall")
	t.ok(tb:find("lualib/skynet/ext/message.lua:%d+"), "framework frame with a line: " .. tb)
	t.ok(tb:find("test_codecache.lua:%d+"), "own frame with a line")
end)

t.case("service code keeps local names", function()
	local function probe(alpha, beta)
		return alpha, beta
	end
	t.eq(debug.getlocal(probe, 1), "alpha", "parameter name")
end)

t.case("a second service loads the same cached framework code", function()
	local a = skynet.newservice("svc_echo")
	local b = skynet.newservice("svc_echo")
	t.eq(skynet.call(a, "lua", "echo", 1), 1, "first")
	t.eq(skynet.call(b, "lua", "echo", 2), 2, "second")
	skynet.kill(a)
	skynet.kill(b)
end)

t.start()
