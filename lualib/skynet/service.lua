-- skynet.service: node-unique services made from a Lua function.
--
--   service.new(name, mainfunc, ...) -> handle    launch once, then share
--   service.query(name)              -> handle    waits until launched
--   service.close(name)              -> boolean   forget and kill
--
-- mainfunc is shipped to a new `service_cell` as string.dump bytecode, so it
-- may not capture locals: it has either no upvalue or exactly one, _ENV
-- (the cell's globals). Inside it, skynet.start(f) works as in a service
-- file. The registry is the uniqueservice `service_provider`; a failed
-- launch is remembered there and every later new/query of the name fails
-- (until close(name) forgets it). Handles are cached per calling service.
local skynet = require "skynet"

local service = {}
local cache = {}
local provider

local function get_provider()
	if provider == nil then
		provider = skynet.uniqueservice "service_provider"
	end
	return provider
end

local function check(mainfunc)
	assert(type(mainfunc) == "function")
	local info = debug.getinfo(mainfunc, "u")
	assert(info.nups <= 1)
	if info.nups == 1 then
		assert(debug.getupvalue(mainfunc, 1) == "_ENV")
	end
end

function service.new(name, mainfunc, ...)
	local handle = cache[name]
	if handle then
		return handle
	end
	local p = get_provider()
	local booting
	handle, booting = skynet.call(p, "lua", "test", name)
	if handle == nil then
		if booting then
			handle = skynet.call(p, "lua", "query", name)
		else
			check(mainfunc)
			handle = skynet.call(p, "lua", "launch", name, string.dump(mainfunc), ...)
		end
	end
	cache[name] = handle
	return handle
end

function service.query(name)
	local handle = cache[name]
	if handle == nil then
		handle = skynet.call(get_provider(), "lua", "query", name)
		cache[name] = handle
	end
	return handle
end

function service.close(name)
	cache[name] = nil
	return skynet.call(get_provider(), "lua", "close", name) ~= nil
end

return service
