-- skynet.sharetable: named tables loaded once by the `sharetable` cell and
-- read by every service of the node without copying.
--
-- Design (stock Lua 5.4). skynet's patched Lua lets every reader hold the
-- very same Lua table; stock Lua cannot share a table between lua_States.
-- Here the cell runs the file, source or table in a fresh state, converts
-- the result into an immutable version of the shared C store
-- (skynet.sharetable.core) and closes that state; a reader gets proxies:
--   * A proxy is an empty table with this service's metatable META
--     (__index, __len, __pairs, __newindex, __metatable = false). Its state
--     { vs = version state, n = node, parent = proxy, key = k } is found in
--     the weak-keyed side table PX, never in the proxy, so no data key is
--     shadowed.
--   * A version state VS = { v = reference userdata (this service's
--     reference to the version), name, proxies = node -> proxy (weak
--     values), all = set of its proxies (weak keys), funcs = function id ->
--     loaded function, fids = the reverse } exists once per
--     version per service (VERSIONS, keyed by handle, weak values). The
--     identity cache VS.proxies gives one proxy per table, so t.a == t.a,
--     repeated queries give the same object, and tables work as keys. Lua
--     functions are loaded from their bytecode once per service.
--   * The reference is dropped when the VS is collected (all its proxies
--     gone), when this service exits, or at once by update.
-- update(name) fetches the current version and re-points every proxy of an
-- older version of name in place: the root to the new root, every other
-- proxy to the table at the key it was reached through (parents first),
-- re-keying the identity cache. A proxy whose path no longer leads to a table
-- is detached: any use raises "sharetable: table removed by update". The
-- cost is proportional to the proxies this service holds, not to its heap.
--
-- Differences from skynet's sharetable (which shares the Lua tables
-- themselves):
--   * next(t), rawget, rawlen and C code that reads tables raw (lua_next,
--     lua_rawget) see an empty table; pairs, ipairs, #, table.concat,
--     table.unpack, skynet.pack and bson (through __pairs) work.
--   * getmetatable(t) is false; setmetatable(t, mt) raises stock Lua's
--     "cannot change a protected metatable" (not "can't setmetatable to
--     shared table"); t.k = v raises "attempt to change a shared table".
--   * rawset(t, k, v) stores in this service's proxy only (shadowing k
--     here); it never changes what other services see.
--   * update: a reference to a removed subtable is detached (raises on use)
--     instead of becoming nil; locals, upvalues and fields holding proxies
--     need no heap walk since the objects themselves are re-pointed; each
--     proxy follows the key path it was first reached by.
--   * Old versions are freed when the last reader updates, drops them or
--     exits, not only when every reader has exited; no `close` message.
--   * A field read costs a metamethod call and a C hash lookup (several
--     times a plain table read): copy hot values into locals.
-- The cell's code: shipped to a service_cell by skynet.service, so it
-- reaches nothing but its globals (hence defined before any local here).
local function sharetable_service()
	local skynet = require "skynet"
	local core = require "skynet.sharetable.core"

	local files = {} -- name -> { v = reference, h = handle }
	local CMD = {}

	local function set(name, v)
		local old = files[name]
		files[name] = { v = v, h = core.handle(v) }
		if old then
			core.close(old.v) -- readers keep their own references
		end
	end

	function CMD.loadfile(filename, ...)
		set(filename, core.matrix({ "file", filename }, ...))
	end

	function CMD.loadstring(name, source, ...)
		set(name, core.matrix({ "string", source, name }, ...))
	end

	function CMD.loadtable(name, t)
		set(name, core.build(t))
	end

	function CMD.query(name)
		local f = files[name]
		if f then
			return f.h
		end
	end

	function CMD.queryall(list)
		local r = {}
		if list == nil then
			for name, f in pairs(files) do
				r[name] = f.h
			end
		else
			for _, name in ipairs(list) do
				local f = files[name]
				if f then
					r[name] = f.h
				end
			end
		end
		return r
	end

	skynet.info_func(function()
		local r = {}
		for name, f in pairs(files) do
			r[name] = { current = f.h, size = core.size(f.v) }
		end
		return r
	end)

	skynet.start(function()
		skynet.dispatch("lua", function(_, _, cmd, ...)
			local f = CMD[cmd]
			if f == nil then
				error("sharetable: unknown command " .. tostring(cmd))
			end
			skynet.retpack(f(...))
		end)
	end)
end

local skynet = require "skynet"
local core = require "skynet.sharetable.core"

local setmetatable = setmetatable
local type = type
local error = error
local load = load
local index = core.index
local cnext = core.next
local clen = core.len

local sharetable = {}

local PX = setmetatable({}, { __mode = "k" }) -- proxy -> state
local VERSIONS = setmetatable({}, { __mode = "v" }) -- handle -> VS
local BYNAME = {} -- name -> set of this service's VS of that name (weak keys)
local META = { __metatable = false }

local ROOT <const> = 1
local REMOVED <const> = "sharetable: table removed by update"

local address

local function cell()
	if address == nil then
		address = require("skynet.service").new("sharetable", sharetable_service)
	end
	return address
end

---------------------------------------------------------------- proxies

local function new_proxy(vs, n, parent, key)
	local p = setmetatable({}, META)
	PX[p] = { vs = vs, n = n, parent = parent, key = key }
	vs.proxies[n] = p
	vs.all[p] = true
	return p
end

-- The Lua value for a result pair (v, x) of the core, read in vs.
local function value(vs, v, x, parent, key)
	if x == nil then
		return v
	end
	if x > 0 then
		local p = vs.proxies[x]
		if p == nil then
			return new_proxy(vs, x, parent, key)
		end
		local st = PX[p]
		if st.parent == nil and x ~= ROOT and parent ~= nil then
			st.parent, st.key = parent, key -- first met as a key: now it has a path
		end
		return p
	end
	local f = vs.funcs[x]
	if f == nil then
		f = load(core.funcbytes(vs.v, x), "=sharetable", "b")
		vs.funcs[x] = f
		vs.fids[f] = x
	end
	return f
end

-- A table or function key as the core's companion x (nil: not in vs).
local function keyx(vs, k)
	local tk = type(k)
	if tk == "table" then
		local st = PX[k]
		if st and st.vs == vs then
			return st.n
		end
	elseif tk == "function" then
		return vs.fids[k]
	end
end

local function state(p)
	local st = PX[p]
	if st.vs == nil then
		error(REMOVED, 3)
	end
	return st
end

function META.__index(p, k)
	local st = PX[p]
	local vs = st.vs
	if vs == nil then
		error(REMOVED, 2)
	end
	local v, x = index(vs.v, st.n, k)
	if v == nil then
		local kx = keyx(vs, k)
		if kx == nil then
			return nil
		end
		v, x = index(vs.v, st.n, true, kx)
	end
	return value(vs, v, x, p, k)
end

function META.__newindex()
	error("attempt to change a shared table", 2)
end

function META.__len(p)
	local st = state(p)
	return clen(st.vs.v, st.n)
end

local function iter(p, k)
	local st = state(p)
	local vs = st.vs
	local kk, kx, v, x = cnext(vs.v, st.n, k, k ~= nil and keyx(vs, k) or nil)
	if kk == nil then
		return nil
	end
	kk = value(vs, kk, kx)
	return kk, value(vs, v, x, p, kk)
end

function META.__pairs(p)
	state(p)
	return iter, p, nil
end

---------------------------------------------------------------- versions

-- This service's VS of the version named by handle h, or nil if it is gone.
local function version(name, h)
	local vs = VERSIONS[h]
	if vs then
		return vs
	end
	local v = core.open(h)
	if v == nil then
		return nil
	end
	vs = {
		v = v,
		h = h,
		name = name,
		proxies = setmetatable({}, { __mode = "v" }),
		all = setmetatable({}, { __mode = "k" }),
		funcs = {},
		fids = setmetatable({}, { __mode = "k" }),
	}
	VERSIONS[h] = vs
	local set = BYNAME[name]
	if set == nil then
		set = setmetatable({}, { __mode = "k" })
		BYNAME[name] = set
	end
	set[vs] = true
	return vs
end

local function root(vs)
	return vs.proxies[ROOT] or new_proxy(vs, ROOT)
end

-- This service's VS of name's current version (nil if nothing is loaded).
local function current(name)
	while true do
		local h = skynet.call(cell(), "lua", "query", name)
		if h == nil then
			return nil
		end
		local vs = version(name, h)
		if vs then
			return vs
		end
		-- that version died before we opened it: a newer one is current
	end
end

---------------------------------------------------------------- API

function sharetable.loadfile(filename, ...)
	skynet.call(cell(), "lua", "loadfile", filename, ...)
end

function sharetable.loadstring(name, source, ...)
	skynet.call(cell(), "lua", "loadstring", name, source, ...)
end

function sharetable.loadtable(name, tbl)
	assert(type(tbl) == "table")
	skynet.call(cell(), "lua", "loadtable", name, tbl)
end

function sharetable.query(name)
	local vs = current(name)
	return vs and root(vs)
end

function sharetable.queryall(list)
	while true do
		local hs = skynet.call(cell(), "lua", "queryall", list)
		local r = {}
		local missing = false
		for name, h in pairs(hs) do
			local vs = version(name, h)
			if vs == nil then
				missing = true
				break
			end
			r[name] = root(vs)
		end
		if not missing then
			return r
		end
	end
end

-- The node in nvs at the key path of the proxy with state st, or nil.
local function new_node(st, nvs, done, repoint)
	local parent = st.parent
	if parent == nil then
		return st.n == ROOT and ROOT or nil -- a table key has no path
	end
	local pst = PX[parent]
	repoint(parent, pst, nvs, done)
	if pst.vs ~= nvs then
		return nil
	end
	local key = st.key
	local kst = type(key) == "table" and PX[key]
	if kst and kst.vs ~= nvs and kst.vs ~= nil then
		repoint(key, kst, nvs, done)
	end
	local v, x = index(nvs.v, pst.n, key)
	if v == nil then
		local kx = keyx(nvs, key)
		if kx == nil then
			return nil
		end
		x = select(2, index(nvs.v, pst.n, true, kx))
	end
	if x ~= nil and x > 0 then
		return x
	end
end

-- Re-points proxy p (state st) into nvs, parents first; done[p] marks
-- visited ones. If the new table has a proxy already (reached by another
-- path, or queried before this update), p shows the same table but keeps
-- its own identity.
local function repoint(p, st, nvs, done)
	if done[p] or st.vs == nvs or st.vs == nil then
		return
	end
	done[p] = true
	local n = new_node(st, nvs, done, repoint)
	if n == nil then
		st.vs = nil -- detached
		return
	end
	st.vs, st.n = nvs, n
	nvs.all[p] = true
	if nvs.proxies[n] == nil then
		nvs.proxies[n] = p
	end
end

-- Moves every proxy of the old version state ovs to nvs and drops ovs's reference.
local function migrate(ovs, nvs)
	local list = {}
	for p in pairs(ovs.all) do
		list[#list + 1] = p
	end
	local done = {}
	for _, p in ipairs(list) do
		local st = PX[p]
		if st.vs == ovs then
			repoint(p, st, nvs, done)
		end
	end
	for _, p in ipairs(list) do
		local st = PX[p]
		if st.vs == ovs then
			st.vs = nil -- a proxy whose key was a table of ovs that went away
		end
	end
	ovs.proxies = setmetatable({}, { __mode = "v" })
	ovs.all = setmetatable({}, { __mode = "k" })
	VERSIONS[ovs.h] = nil
	core.close(ovs.v)
end

function sharetable.update(...)
	for i = 1, select("#", ...) do
		local name = select(i, ...)
		local set = BYNAME[name]
		if set ~= nil and next(set) ~= nil then
			local nvs = current(name)
			if nvs ~= nil then
				for ovs in pairs(set) do
					if ovs ~= nvs then
						set[ovs] = nil
						migrate(ovs, nvs)
					end
				end
			end
		end
	end
end

return setmetatable(sharetable, {
	__index = function(_, k)
		if k == "address" then
			return cell()
		end
	end,
})
