-- snlua's module search cache: require remembers, per process, where each
-- search succeeded (the module name with package.path and package.cpath),
-- so later services load the module without searching. Seen from a
-- service: a module keeps coming from where it was first found (a file
-- that appears earlier in the path does not shadow it, a C library whose
-- file is gone still loads) until codecache.clear(); a failed search is not
-- remembered; code cache mode "OFF" searches every time.
local skynet = require "skynet"
local codecache = require "skynet.codecache"
local t = require "testlib"

local function shell(cmd)
	t.ok(os.execute(cmd), cmd)
end

local function write(path, text)
	local f = assert(io.open(path, "w"))
	f:write(text)
	f:close()
end

-- Require name in a new service with these paths; returns ok and the value.
local function require_in_new(name, path, cpath, mode)
	local s = skynet.newservice "svc_modcache"
	local ok, value = skynet.call(s, "lua", "require", name, path, cpath, mode)
	skynet.kill(s)
	return ok, value
end

-- The directory of the first template of our own package.cpath (luaclib/).
local LUACLIB <const> = package.cpath:match "^([^;]*/)%?%.so"

local A, B = t.tmpdir(), t.tmpdir()
local PATH <const> = A .. "/?.lua;" .. B .. "/?.lua"
local NOC <const> = A .. "/?.so"

t.case("a Lua module comes from where it was first found until clear()", function()
	write(B .. "/modc_shadow.lua", 'return "B"')
	t.eq(select(2, require_in_new("modc_shadow", PATH, NOC)), "B", "first search")
	write(A .. "/modc_shadow.lua", 'return "A"')
	t.eq(select(2, require_in_new("modc_shadow", PATH, NOC)), "B", "remembered: A is not searched")
	t.eq(select(2, require_in_new("modc_shadow", PATH, NOC, "OFF")), "A", "mode OFF searches")
	t.eq(select(2, require_in_new("modc_shadow", B .. "/?.lua", NOC)), "B", "other paths, own entry")
	codecache.clear()
	t.eq(select(2, require_in_new("modc_shadow", PATH, NOC)), "A", "searched again after clear()")
end)

t.case("a failed search is not remembered", function()
	local ok, err = require_in_new("modc_late", PATH, NOC)
	t.eq(ok, false, "not there yet")
	t.ok(tostring(err):find("module 'modc_late' not found", 1, true), "error: " .. tostring(err))
	write(B .. "/modc_late.lua", 'return "late"')
	t.eq(select(2, require_in_new("modc_late", PATH, NOC)), "late", "found once it exists")
end)

-- Copy library (a file of luaclib/) into a new folder, require module from
-- there in one service, delete the copy, require it again in another. With
-- off_fails, a third service in mode OFF must fail to find it.
local function check_library_gone(library, module, off_fails)
	local dir = t.tmpdir()
	shell(string.format("cp %s%s %s/%s", LUACLIB, library, dir, library))
	local cpath = dir .. "/?.so"
	t.eq(select(2, require_in_new(module, PATH, cpath)), "table", "first search")
	shell(string.format("rm %s/%s", dir, library))
	local ok, value = require_in_new(module, PATH, cpath)
	t.eq(ok, true, "remembered: " .. tostring(value))
	t.eq(value, "table", "the module")
	if off_fails then
		local ok2, err = require_in_new(module, PATH, cpath, "OFF")
		t.eq(ok2, false, "mode OFF searches and fails")
		local want = string.format("module '%s' not found", module)
		t.ok(tostring(err):find(want, 1, true), "error: " .. tostring(err))
	end
	shell("rmdir " .. dir)
end

t.case("a C library found once loads after its file is gone", function()
	check_library_gone("bson.so", "bson", true)
end)

t.case("an all-in-one C library found once loads after its file is gone", function()
	check_library_gone("skynet.so", "skynet.crypt", false)
	shell(string.format("rm -rf %s %s", A, B)) -- the last case: the Lua module folders go too
end)

t.start()
