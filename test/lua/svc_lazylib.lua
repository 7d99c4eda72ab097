-- Helper: how the standard libraries snlua opens on first use look from a
-- fresh service (this service touches none of them before "probe").
local skynet = require "skynet"

local NAMES <const> = { "io", "os", "utf8", "math", "debug" }

local stubs_at_main = {}
for _, name in ipairs(NAMES) do
	stubs_at_main[#stubs_at_main + 1] = getmetatable(_G[name]) ~= nil
end

-- Names every Lua 5.4 build has.
local MUST <const> = {
	io = { "close", "flush", "input", "lines", "open", "output", "popen", "read", "tmpfile", "type",
		"write", "stdin", "stdout", "stderr" },
	os = { "clock", "date", "difftime", "execute", "exit", "getenv", "remove", "rename",
		"setlocale", "time", "tmpname" },
	utf8 = { "char", "charpattern", "codepoint", "codes", "len", "offset" },
	math = { "abs", "ceil", "floor", "fmod", "huge", "log", "max", "maxinteger", "min",
		"mininteger", "modf", "pi", "random", "randomseed", "sqrt", "tointeger", "type", "ult" },
	debug = { "debug", "gethook", "getinfo", "getlocal", "getmetatable", "getregistry",
		"getupvalue", "sethook", "setlocal", "setmetatable", "setupvalue", "traceback" },
}

local CMD = {}

function CMD.stubs_at_main()
	return table.unpack(stubs_at_main)
end

-- pairs() on an untouched stub lists the whole library.
function CMD.pairs_first(name)
	local seen = {}
	for k in pairs(_G[name]) do
		seen[k] = true
	end
	for _, k in ipairs(MUST[name]) do
		if not seen[k] then
			return false, k
		end
	end
	return getmetatable(_G[name]) == nil, name
end

-- A write before any read lands in the library table, next to its functions.
function CMD.write_first()
	utf8.extra = 42 -- luacheck: ignore 142 (on purpose: a field the library lacks)
	return utf8.extra, type(utf8.char), rawget(utf8, "extra"), getmetatable(utf8) == nil -- luacheck: ignore 143
end

-- The global, package.loaded and require all name the same table, before
-- and after it fills.
function CMD.same_table()
	local before = package.loaded.os == os and require("os") == os
	local t = os.time()
	local after = package.loaded.os == os and require("os") == os
	return before, after, math.type(t), rawget(os, "time") == os.time
end

function CMD.missing_field()
	return io.no_such_field, type(rawget(io, "write")) -- luacheck: ignore 143 (on purpose)
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
end)
