-- skynet.snax: the client side of snax services (each one runs in a snaxd).
--
-- A snax object is { handle =, type = <service name>, post =, req = } with
-- a __tostring of "[<name>:<handle hex>]". obj.post.X / obj.req.X are made
-- on first use from the service's interface and kept in those tables;
-- an unknown X raises at once. post sends (id, ...) over the `snax`
-- protocol (PTYPE 11, skynet.pack), req calls and returns the reply.
--
-- Method ids come from running the service file here (snax.interface),
-- once per name: by default in a fresh table holding only a no-op
-- `require` (so the file's main chunk may only define things), or in the
-- table of the module named by the config key `snax_interface_g`. When the
-- config key `snax_loader` names a loader file, it is used here as in snaxd,
-- so both sides always read the same text. Both keys are read when a name
-- is first parsed.
--
-- Objects are cached per handle in a weak table: bind returns the same
-- object while anyone holds it.
local skynet = require "skynet"
local snax_interface = require "snax.interface"

local snax = {}

if skynet._proto.snax == nil then
	skynet.register_protocol {
		name = "snax",
		id = skynet.PTYPE_SNAX,
		pack = skynet.pack,
		unpack = skynet.unpack,
	}
end

local typeclass = {} -- name -> interface table
local object_cache = setmetatable({}, { __mode = "v" }) -- handle -> object
local loaders = {} -- snax_loader path -> loader function

local SYSTEM_ID <const> = { init = 1, exit = 2, hotfix = 3, profile = 4 }

local function noop_require() end

-- The loader named by the config key snax_loader, or nil.
function snax.loader()
	local path = skynet.getenv "snax_loader"
	if path == nil then
		return nil
	end
	local loader = loaders[path]
	if loader == nil then
		loader = dofile(path)
		if type(loader) ~= "function" then
			error(string.format("snax_loader %s must return a function, got %s", path, type(loader)), 0)
		end
		loaders[path] = loader
	end
	return loader
end

local function parse_env()
	local gname = skynet.getenv "snax_interface_g"
	if gname then
		local G = require(gname)
		if type(G) ~= "table" then
			error(string.format("snax_interface_g module %s must return a table, got %s", gname, type(G)), 0)
		end
		return G
	end
	return { require = noop_require }
end

function snax.interface(name)
	local t = typeclass[name]
	if t then
		return t
	end
	if type(name) ~= "string" then
		error(string.format("snax.interface: bad service name (%s)", tostring(name)), 2)
	end
	local funcs = snax_interface(name, parse_env(), snax.loader())
	t = { name = name, accept = {}, response = {}, system = {} }
	for _, method in ipairs(funcs) do
		t[method[2]][method[3]] = method[1]
	end
	typeclass[name] = t
	return t
end

local object_mt = {
	__tostring = function(obj)
		local h = obj.handle
		if math.type(h) == "integer" then
			return string.format("[%s:%x]", obj.type, h)
		end
		return string.format("[%s:%s]", obj.type, tostring(h))
	end,
}

local function method_table(t, handle, group, kind, make)
	local ids = t[group]
	return setmetatable({}, {
		__index = function(self, method)
			local id = ids[method]
			if id == nil then
				error(string.format("%s %s:%s no exist", kind, t.name, tostring(method)), 2)
			end
			local f = make(handle, id)
			rawset(self, method, f)
			return f
		end,
	})
end

local function make_post(handle, id)
	return function(...)
		skynet.send(handle, "snax", id, ...)
	end
end

local function make_req(handle, id)
	return function(...)
		return skynet.call(handle, "snax", id, ...)
	end
end

function snax.bind(handle, name)
	local obj = object_cache[handle]
	if obj then
		assert(obj.type == name)
		return obj
	end
	if type(handle) ~= "number" and type(handle) ~= "string" then
		error(string.format("snax.bind: bad handle (%s)", tostring(handle)), 2)
	end
	local t = snax.interface(name)
	obj = setmetatable({
		handle = handle,
		type = name,
		post = method_table(t, handle, "accept", "post", make_post),
		req = method_table(t, handle, "response", "request", make_req),
	}, object_mt)
	object_cache[handle] = obj
	return obj
end

function snax.rawnewservice(name, ...)
	local t = snax.interface(name) -- a file that does not parse fails before any launch
	local handle = skynet.newservice("snaxd", name)
	if handle == nil then
		error(string.format("snax: snaxd %s exited during start", name), 0)
	end
	local ok, err = pcall(skynet.call, handle, "snax", t.system.init, ...)
	if not ok then
		-- Never leave a service behind that can only answer "Init first".
		skynet.kill(handle)
		error(err, 0)
	end
	return handle
end

function snax.newservice(name, ...)
	return snax.bind(snax.rawnewservice(name, ...), name)
end

local function service_mgr(command, name, ...)
	if type(name) ~= "string" then
		error(string.format("snax: bad service name (%s)", tostring(name)), 3)
	end
	local handle, err = skynet.call(".service", "lua", command, "snaxd", name, ...)
	if handle == nil then
		error(err, 0)
	end
	return snax.bind(handle, name)
end

function snax.uniqueservice(name, ...)
	return service_mgr("LAUNCH", name, ...)
end

function snax.globalservice(name, ...)
	return service_mgr("GLAUNCH", name, ...)
end

function snax.queryservice(name)
	return service_mgr("QUERY", name)
end

function snax.queryglobal(name)
	return service_mgr("GQUERY", name)
end

function snax.self()
	return snax.bind(skynet.self(), SERVICE_NAME)
end

function snax.kill(obj, ...)
	skynet.call(obj.handle, "snax", SYSTEM_ID.exit, ...)
end

function snax.exit(...)
	snax.kill(snax.self(), ...)
end

local function hotfix_result(ok, ...)
	if ok then
		return ...
	end
	error((...), 0)
end

function snax.hotfix(obj, source, ...)
	if type(source) ~= "string" then
		error(string.format("snax.hotfix: bad patch source (%s)", tostring(source)), 2)
	end
	return hotfix_result(skynet.call(obj.handle, "snax", SYSTEM_ID.hotfix, source, ...))
end

function snax.profile_info(obj)
	return skynet.call(obj.handle, "snax", SYSTEM_ID.profile)
end

function snax.printf(fmt, ...)
	skynet.error(string.format(fmt, ...))
end

return snax
