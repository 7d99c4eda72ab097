-- skynet.require: the two-phase require every service gets (skynet.init).
--
-- In the main chunk `require` is the standard one, except that skynet.init(f)
-- calls made while it runs are deferred: init_all runs them inside
-- skynet.start, just before the start function. From a coroutine, require
-- loads the module and then runs the init functions it registered at once.
-- A second coroutine asking for a module that is still loading waits for
-- the first; a module that requires itself (directly or not) from the same
-- coroutine raises "circular dependency"; a failed load raises
-- "require <name> failed" in the coroutines that were waiting.
--
-- This module must not require "skynet" at load time: skynet.lua requires it.
local M = {}

local loaded = package.loaded
local coroutine_running = coroutine.running
local tinsert = table.insert

local main_inits = {} -- deferred by the main chunk, run by init_all
local collecting = {} -- co -> init list of the module it is loading
local loading = {} -- name -> { co = loader, [i] = waiting tokens }

local function skynet()
	return loaded.skynet
end

-- Like the standard require, but the module's chunk runs as a Lua call, so it
-- may block (yield) when loaded from a coroutine.
local function std_require(name)
	local m = loaded[name]
	if m ~= nil then
		return m
	end
	local msg = {}
	for _, searcher in ipairs(package.searchers) do
		local loader, extra = searcher(name)
		if type(loader) == "function" then
			local r = loader(name, extra)
			if r ~= nil then
				loaded[name] = r
			elseif loaded[name] == nil then
				loaded[name] = true
			end
			return loaded[name], extra
		elseif type(loader) == "string" then
			msg[#msg + 1] = loader
		end
	end
	error(string.format("module '%s' not found:%s", name, table.concat(msg)), 0)
end

function M.init(f)
	assert(type(f) == "function", "skynet.init: function expected")
	local co, main = coroutine_running()
	if main then
		tinsert(main_inits, f)
		return
	end
	local list = collecting[co]
	if list then
		tinsert(list, f)
	else
		f()
	end
end

function M.init_all()
	while #main_inits > 0 do
		local list = main_inits
		main_inits = {}
		for _, f in ipairs(list) do
			f()
		end
	end
end

local function load_in_main(name)
	if loading[name] then
		error("circular dependency", 3)
	end
	loading[name] = { main = true }
	local ok, m = pcall(std_require, name)
	loading[name] = nil
	if not ok then
		error(m, 0)
	end
	return m
end

function M.require(name)
	local m = loaded[name]
	if m ~= nil then
		return m
	end
	local co, main = coroutine_running()
	if main then
		return load_in_main(name)
	end
	local l = loading[name]
	if l then
		if l.co == co or l.main then
			error("circular dependency", 2)
		end
		local token = {}
		tinsert(l, token)
		skynet().wait(token)
		m = loaded[name]
		if m == nil then
			error("require " .. name .. " failed", 2)
		end
		return m
	end
	l = { co = co }
	loading[name] = l
	local saved = collecting[co]
	local inits = {}
	collecting[co] = inits
	local ok, result = pcall(std_require, name)
	collecting[co] = saved
	if ok then
		ok, result = pcall(function()
			for _, f in ipairs(inits) do
				f()
			end
			return result
		end)
		if not ok then
			loaded[name] = nil
		end
	end
	loading[name] = nil
	for _, token in ipairs(l) do
		skynet().wakeup(token)
	end
	if not ok then
		error(result, 0)
	end
	return result
end

setmetatable(M, {
	__call = function(_, name)
		return M.require(name)
	end,
})

return M
