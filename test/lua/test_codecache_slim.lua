-- The code cache's bytecode rewriter at service level. After the cache is
-- cleared, a new service loads the framework libraries (lualib/) from their
-- files and runs what it compiled, while the cache stores the dumps slimmed
-- (header check, walk, a trial load); the next service undumps the slim
-- dumps. A service file named in codecache_strip goes the same way. Both
-- services must load and run, with file:line kept; the second has no local
-- names.
local skynet = require "skynet"
local codecache = require "skynet.codecache"
local t = require "testlib"

local WANT <const> = "hello 66 9.5 true false nil 1099511627776"

t.case("slimmed framework and service code loads and runs, from files and from the cache", function()
	skynet.setenv("codecache_strip", "lualib/;svc_slim.lua")
	codecache.clear()
	for round = 1, 2 do -- 1: compiled (and a slim dump cached); 2: the slim dump
		local s = skynet.newservice("svc_slim")
		local sum, name, line, tb = skynet.call(s, "lua", "check")
		t.eq(sum, WANT, "results, round " .. round)
		t.eq(name, round == 1 and "a" or nil, "parameter name, round " .. round)
		t.ok(line > 0, "first line of outer, round " .. round)
		t.ok(tb:find("svc_slim.lua:%d+: deep"), "error position: " .. tb)
		t.ok(tb:find("svc_slim.lua:%d+: in "), "traceback lines: " .. tb)
		skynet.kill(s)
	end
end)

t.case("code outside codecache_strip keeps its local names", function()
	local function probe(alpha)
		return alpha
	end
	t.eq(debug.getlocal(probe, 1), "alpha", "parameter name")
	t.eq(debug.getlocal(t.eq, 1), "got", "test/lua/testlib.lua is not stripped")
end)

t.start()
