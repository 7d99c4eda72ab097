-- Strict globals for the tests (preloaded before every service's main
-- chunk): assigning or reading an undeclared global from Lua code raises.
-- Globals that exist when it runs (the standard library, SERVICE_NAME,
-- SERVICE_PATH...) stay usable; C code is not checked.
local mt = getmetatable(_G)
if mt == nil then
	mt = {}
	setmetatable(_G, mt)
end

local function from_lua()
	local info = debug.getinfo(3, "S")
	return info and info.what ~= "C"
end

mt.__newindex = function(t, name, value)
	if from_lua() then
		error(string.format("strict: assign to undeclared global (%s)", tostring(name)), 2)
	end
	rawset(t, name, value)
end

mt.__index = function(_, name)
	if from_lua() then
		error(string.format("strict: read of undeclared global (%s)", tostring(name)), 2)
	end
	return nil
end
