-- Helper service for test_codecache_slim: its file is named in
-- codecache_strip, so the code cache stores it slimmed. "check" returns
-- what its code computes (constants of every kind, closures, upvalues),
-- the name of a local function's first parameter, that function's first
-- line and a traceback through it.
local skynet = require "skynet"

local GREETING <const> = "hello"
local LONG = "a long string constant, longer than the forty bytes of a short one"

local function outer(a, b)
	local sum = a + b
	return function(c)
		local flags = { t = true, f = false, n = nil }
		return sum * c + 0.5, flags.t, flags.f, flags.n
	end
end

local function fails(depth)
	if depth == 0 then
		error("deep")
	end
	return fails(depth - 1)
end

local function check()
	local x, t, f, n = outer(1, 2)(3)
	local sum = string.format("%s %d %.1f %s %s %s %d", GREETING, #LONG, x, t, f, n, 1 << 40)
	local _, tb = xpcall(fails, debug.traceback, 2)
	return sum, debug.getlocal(outer, 1), debug.getinfo(outer, "S").linedefined, tb
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		assert(cmd == "check", "svc_slim: unknown command")
		skynet.retpack(check())
	end)
end)
