-- snax.interface: runs the main chunk of a snax service file and numbers the
-- methods it defines.
--
--   interface(name, G [, loader [, prepare]]) -> funcs, template
--
-- funcs is an array of method records { id, group, name, f }:
--   ids 1-4 are always the system hooks init, exit, hotfix, profile (group
--   "system", f nil when the file does not define the hook); then every
--   accept.X (group "accept") and response.X (group "response") in the order
--   the file defines them, one numbering shared by both groups.
-- template is the search template the file was found through.
--
-- loader(path, name, G) -> mainfunc, template loads the file with G as its
-- environment; path is the config key `snax` (templates separated by ";",
-- "?" standing for the name). Without a loader every template is tried in
-- order and the messages of all failures are joined by newlines. A loader
-- may also return nil, message. prepare(template), when given, runs after
-- loading and before the main chunk (snaxd sets its paths there).
--
-- While the main chunk runs, G gets a temporary metatable: reading `accept`
-- or `response` gives the recording tables, assigning a system hook records
-- it (it is not stored in G), any other global assignment is stored in G
-- with rawset (so a strict-globals metatable does not reject it), and other
-- reads fall back to G's own metatable. That metatable is restored
-- afterwards, even when the chunk fails. The chunk must not yield.
local skynet = require "skynet"
local loadfile = require("skynet.codecache").loadfile

local SYSTEM <const> = { "init", "exit", "hotfix", "profile" }

local function default_loader(path, name, G)
	if path == nil then
		error("please set snax in config file", 0)
	end
	local errors = {}
	for template in string.gmatch(path, "[^;]+") do
		local filename = string.gsub(template, "%?", function()
			return name
		end)
		-- Through the process-wide code cache: every service that parses
		-- this file sees the same text, so clients and snaxd agree on ids.
		local f, err = loadfile(filename, "bt", G)
		if f then
			return f, template
		end
		errors[#errors + 1] = err
	end
	error(table.concat(errors, "\n"), 0)
end

-- The recording table of one group ("accept" or "response").
local function method_group(funcs, group)
	local defined = {}
	return setmetatable({}, {
		__newindex = function(_, name, f)
			if type(name) ~= "string" then
				error(group .. " method only support string", 2)
			end
			if type(f) ~= "function" then
				error(group .. "." .. name .. " must be function", 2)
			end
			if defined[name] then
				error(group .. "." .. name .. " duplicate definition", 2)
			end
			local id = #funcs + 1
			local method = { id, group, name, f }
			funcs[id] = method
			defined[name] = method
		end,
		__index = function(_, name)
			local method = defined[name]
			return method and method[4]
		end,
	})
end

-- Reads key k of t through the metatable mt (nil: plain table).
local function index_with(mt, t, k)
	local index = mt and mt.__index
	if index == nil then
		return nil
	elseif type(index) == "function" then
		return index(t, k)
	end
	return index[k]
end

return function(name, G, loader, prepare)
	if type(name) ~= "string" then
		error(string.format("snax.interface: bad service name (%s)", tostring(name)), 2)
	end
	if type(G) ~= "table" then
		error(string.format("snax.interface: bad environment (%s)", tostring(G)), 2)
	end
	local funcs = {}
	local system = {}
	for id, hook in ipairs(SYSTEM) do
		local method = { id, "system", hook }
		funcs[id] = method
		system[hook] = method
	end
	local accept = method_group(funcs, "accept")
	local response = method_group(funcs, "response")

	local mainfunc, template = (loader or default_loader)(skynet.getenv "snax", name, G)
	if type(mainfunc) ~= "function" then
		error(string.format("snax: can't load %s: %s", name, tostring(template or "no main function")), 0)
	end
	if prepare then
		prepare(template)
	end

	local old_mt = getmetatable(G)
	setmetatable(G, {
		__index = function(t, k)
			if k == "accept" then
				return accept
			elseif k == "response" then
				return response
			end
			return index_with(old_mt, t, k)
		end,
		__newindex = function(t, k, v)
			local method = system[k]
			if method then
				if type(v) ~= "function" then
					error(k .. " must be a function", 2)
				end
				method[4] = v
			else
				rawset(t, k, v)
			end
		end,
	})
	local ok, err = pcall(mainfunc)
	setmetatable(G, old_mt)
	if not ok then
		error(err, 0)
	end
	return funcs, template
end
