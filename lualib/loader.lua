-- The service loader (config key `lualoader`). snlua runs this chunk with one argument,
-- the launch parameter "name arg1 arg2 ...". It sets the documented globals
-- SERVICE_NAME and SERVICE_PATH, finds the service's main chunk along the
-- LUA_SERVICE templates, sets package.path/cpath from LUA_PATH/LUA_CPATH,
-- runs LUA_PRELOAD, installs skynet.require and calls the main chunk with
-- the arguments (all strings). Every file goes through skynet.codecache, so
-- a Lua file is compiled once per process.
local loadfile = require("skynet.codecache").loadfile

local args = {}
for word in string.gmatch(..., "%S+") do
	args[#args + 1] = word
end

local name = args[1]
if name == nil then
	error("loader: no service name in the launch parameter")
end
SERVICE_NAME = name

-- Substitute the service name for every "?" (the name may contain "%").
local function fill(template)
	return (string.gsub(template, "%?", function()
		return name
	end))
end

-- The first template whose file exists wins; a file that exists but does not
-- compile is the error, alone (the misses before it would hide it).
local main, template
local misses = {}
for pattern in string.gmatch(LUA_SERVICE, "[^;]+") do
	local f, err = loadfile(fill(pattern))
	if f then
		main, template = f, pattern
		break
	end
	if not string.find(err, "^cannot open .*: No such file or directory$") then
		error(err, 0)
	end
	misses[#misses + 1] = err
end
if main == nil then
	error(table.concat(misses, "; "), 0) -- one line: it becomes newservice's error
end

package.path = LUA_PATH
package.cpath = LUA_CPATH
LUA_SERVICE = nil
LUA_PATH = nil
LUA_CPATH = nil

local dir = string.match(template, "^(.*/)[^/]*$") or ""
if string.find(dir, "?", 1, true) then
	-- A per-service directory such as "test/?/init.lua": siblings are requirable.
	dir = fill(dir)
	package.path = dir .. "?.lua;" .. package.path
end
SERVICE_PATH = dir

local preload = LUA_PRELOAD
LUA_PRELOAD = nil
if preload then
	local f, err = loadfile(preload)
	if not f then
		error(err, 0)
	end
	f(table.unpack(args, 2))
end

-- skynet.require when the path has it (asked of require itself: snlua
-- remembers where each module was found, so this touches no file).
local found, m = pcall(require, "skynet.require")
if not found and not string.find(m, "module 'skynet.require' not found", 1, true) then
	error(m, 0)
end
if type(m) == "table" then
	m = m.require
end
if found and type(m) == "function" then
	_G.require = m
end

main(table.unpack(args, 2))
