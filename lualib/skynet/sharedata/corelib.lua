-- skynet.sharedata.corelib: read-only proxies onto versions of the shared
-- store (skynet.sharedata.core), the reader side of skynet.sharedata.
--
-- A proxy is an empty table with the shared metatable `meta`; everything it
-- needs lives in a state table found through the weak-keyed side table PX
-- (never in the proxy, so no data key is shadowed):
--   st.root   the root record R of the tree the proxy belongs to
--   st.v      the reference userdata of the version the proxy is bound to
--   st.n      its node number in that version (1 = root)
--   st.gen    the R.gen it was bound at
--   st.parent the parent proxy (nil for the root), st.key its key there
--   st.cache  key -> child proxy, so p.k == p.k
--   st.dead   set once its key path no longer leads to a table
-- A root record R = { v = reference, h = handle, gen = n } belongs to one
-- box(); update(root, newhandle) opens the new version, bumps R.gen and
-- drops the reference to the old version at once (nothing of it is read
-- again: every access first compares st.gen with R.gen and, when they
-- differ, re-resolves the proxy from its parent by key). A proxy whose key no
-- longer holds a table is dead; any access to it raises
-- "The key [<path>] doesn't exist after update".
--
-- Handles are light userdata naming a version (see the C core); host.* take
-- and drop raw references on them for code that manages versions by hand.
local core = require "skynet.sharedata.core"

local setmetatable = setmetatable
local tostring = tostring
local error = error
local tconcat = table.concat
local dindex = core.dindex
local cnext = core.next
local clen = core.len

local corelib = {}

corelib.host = {
	new = core.new,
	delete = core.decref,
	getref = core.getref,
	markdirty = core.markdirty,
	incref = core.incref,
	decref = core.decref,
}

local PX = setmetatable({}, { __mode = "k" })
local meta = {}

local ROOT <const> = 1

local function path_of(st)
	local parts = {}
	while st.parent ~= nil do
		parts[#parts + 1] = "." .. tostring(st.key)
		st = PX[st.parent]
	end
	local n = #parts
	for i = 1, n // 2 do
		parts[i], parts[n + 1 - i] = parts[n + 1 - i], parts[i]
	end
	return tconcat(parts)
end

-- Binds st to the current version of its root; false when its path is gone.
local function refresh(st)
	if st.dead then
		return false
	end
	local R = st.root
	local parent = st.parent
	if parent == nil then
		st.v, st.n, st.gen = R.v, ROOT, R.gen
		return true
	end
	local pst = PX[parent]
	if pst.gen ~= R.gen and not refresh(pst) then
		st.dead = true
		return false
	end
	local _, x = dindex(pst.v, pst.n, st.key)
	if x == nil then
		st.dead = true
		return false
	end
	st.v, st.n, st.gen = pst.v, x, R.gen
	return true
end

-- The state of proxy p, bound to the current version (raises if it is gone).
local function current(p, level)
	local st = PX[p]
	if st == nil then
		error("sharedata: not a proxy", level + 1)
	end
	if st.gen ~= st.root.gen and not refresh(st) then
		error(string.format("The key [%s] doesn't exist after update", path_of(st)), level + 1)
	end
	return st
end

local function new_proxy(st)
	local p = setmetatable({}, meta)
	PX[p] = st
	return p
end

-- The child proxy of p (state st) at key k, a table whose node is x.
local function child(p, st, k, x)
	local cache = st.cache
	if cache == nil then
		cache = {}
		st.cache = cache
	end
	local c = cache[k]
	if c ~= nil and not PX[c].dead then
		return c
	end
	c = new_proxy { root = st.root, v = st.v, n = x, gen = st.gen, parent = p, key = k }
	cache[k] = c
	return c
end

function meta.__index(p, k)
	local st = PX[p]
	if st.gen ~= st.root.gen then
		st = current(p, 2)
	end
	local v, x = dindex(st.v, st.n, k)
	if x == nil then
		return v
	end
	return child(p, st, k, x)
end

function meta.__newindex(p)
	error(string.format("Error newindex, the key [%s]", path_of(PX[p])), 2)
end

function meta.__len(p)
	local st = PX[p]
	if st.gen ~= st.root.gen then
		st = current(p, 2)
	end
	return clen(st.v, st.n)
end

-- The __pairs iterator: the array part 1..# in order, then the other keys.
-- A key that is gone after an update ends the walk.
function corelib.next(p, key)
	local st = current(p, 2)
	local k, _, v, x = cnext(st.v, st.n, key)
	if x ~= nil then
		v = child(p, st, k, x)
	end
	return k, v
end

local next_ = corelib.next
function meta.__pairs(p)
	return next_, p, nil
end

-- Root proxy of the version named by handle h, or nil once it is gone.
function corelib.trybox(h)
	local v = core.open(h)
	if v == nil then
		return nil
	end
	local R = { v = v, h = h, gen = 0 }
	return new_proxy { root = R, v = v, n = ROOT, gen = 0 }
end

-- Root proxy of the version named by handle h (raises once it is gone).
function corelib.box(h)
	return corelib.trybox(h) or error(string.format("sharedata: invalid object %s", tostring(h)), 2)
end

local function root_state(p)
	local st = PX[p]
	if st == nil or st.parent ~= nil then
		error("sharedata: not a root proxy", 3)
	end
	return st
end

-- Switches every proxy of root p to the version named by newh; the old
-- version is released now. Returns false (and changes nothing) when that
-- version is already gone, which only happens when a newer one exists.
function corelib.update(p, newh)
	local R = root_state(p).root
	if newh == R.h then
		error("You should update a new object", 2)
	end
	if not core.isdirty(R.v) then
		error("Only dirty object can be update", 2)
	end
	local v = core.open(newh)
	if v == nil then
		return false
	end
	local old = R.v
	R.v, R.h, R.gen = v, newh, R.gen + 1
	core.close(old)
	return true
end

-- Binds root p to its newest version now.
function corelib.flush(p)
	root_state(p)
	current(p, 2)
end

-- Plain copy of reference v, node n, at key path ... (nil if a key is missing).
local function copy_path(v, n, ...)
	for i = 1, select("#", ...) do
		local k = select(i, ...)
		local val, x = core.index(v, n, k)
		if x == nil then
			if i == select("#", ...) then
				return val
			end
			return nil
		end
		n = x
	end
	return core.copy(v, n)
end

-- Deep copy at key path ... of the version named by handle h; ok is false
-- (and nothing copied) when that version is gone.
function corelib.trycopy(h, ...)
	local v = core.open(h)
	if v == nil then
		return false
	end
	local r = copy_path(v, ROOT, ...)
	core.close(v)
	return true, r
end

-- Deep copy at key path ... of the version named by handle h.
function corelib.copy(h, ...)
	local ok, r = corelib.trycopy(h, ...)
	if not ok then
		error(string.format("sharedata: invalid object %s", tostring(h)), 2)
	end
	return r
end

-- Deep copy through root proxy p, after catching up with updates.
function corelib.copy_proxy(p, ...)
	root_state(p)
	local st = current(p, 2)
	return copy_path(st.v, st.n, ...)
end

-- Live versions in the process and their bytes (for tests and debugging).
corelib.stat = core.stat

return corelib
