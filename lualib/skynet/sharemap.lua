-- skynet.sharemap: a record shared through an stm box, encoded with sproto.
-- The schema lives in sproto slot 0 (process-wide): call register once per
-- process before making writers and readers.
--
--   sharemap.register(schemafile)   sprotoloader.register(schemafile, 0)
--   w = sharemap.writer(typename [, t])
--       Fields of w read and write the table t (default {}); w:commit()
--       encodes t as typename and publishes it; w:copy() is an stm copy
--       pointer for one reader (pass it in a message; every pointer must
--       become exactly one reader, or the box leaks).
--   r = sharemap.reader(typename, ptr)
--       Decoded from the current version. Fields read the data last
--       decoded; r:update() returns false when nothing new was committed,
--       else true, the data table (the same table, refilled) and the bytes
--       decoded. Assigning a field of r raises an error.
--
-- Only the method names (commit and copy on a writer, update on a reader)
-- shadow record fields of the same name; pairs(w) and pairs(r) walk the
-- record. When the writer is collected (its service exits), r:update()
-- returns false from then on and r keeps the last data.
local stm = require "skynet.stm"
local sprotoloader = require "sprotoloader"

local type = type
local next = next
local error = error
local tostring = tostring
local setmetatable = setmetatable

local sharemap = {}

local sp -- the sproto object over slot 0, loaded on first use
local state = setmetatable({}, { __mode = "k" }) -- proxy -> { typename, box, data }

local function schema()
	if sp == nil then
		sp = sprotoloader.load(0)
	end
	return sp
end

function sharemap.register(schemafile)
	sprotoloader.register(schemafile, 0)
end

local function check_typename(fname, typename)
	if type(typename) ~= "string" then
		error(string.format("sharemap.%s: typename must be a string (%s)", fname,
			tostring(typename)), 3)
	end
	if not schema():exist_type(typename) then
		error(string.format("sharemap.%s: no type %s in sproto slot 0", fname, typename), 3)
	end
end

local writer_methods = {}

function writer_methods.commit(self)
	local s = state[self]
	s.box(sp:encode(s.typename, s.data))
end

function writer_methods.copy(self)
	return stm.copy(state[self].box)
end

local writer_mt = {
	__index = function(self, k)
		local m = writer_methods[k]
		if m ~= nil then
			return m
		end
		return state[self].data[k]
	end,
	__newindex = function(self, k, v)
		state[self].data[k] = v
	end,
	__pairs = function(self)
		return next, state[self].data, nil
	end,
}

function sharemap.writer(typename, t)
	check_typename("writer", typename)
	if t == nil then
		t = {}
	elseif type(t) ~= "table" then
		error(string.format("sharemap.writer: data must be a table (%s)", type(t)), 2)
	end
	local box = stm.new(sp:encode(typename, t))
	local self = setmetatable({}, writer_mt)
	state[self] = { typename = typename, box = box, data = t }
	return self
end

local reader_methods = {}

local function refill(msg, sz, s)
	local data = s.data
	for k in next, data do
		data[k] = nil
	end
	return sp:decode(s.typename, msg, sz, data)
end

function reader_methods.update(self)
	local s = state[self]
	return s.box(refill, s)
end

local reader_mt = {
	__index = function(self, k)
		local m = reader_methods[k]
		if m ~= nil then
			return m
		end
		return state[self].data[k]
	end,
	__newindex = function(_, k)
		error(string.format("sharemap: a reader is read-only (field %s)", tostring(k)), 2)
	end,
	__pairs = function(self)
		return next, state[self].data, nil
	end,
}

function sharemap.reader(typename, ptr)
	-- The pointer first: once it is a reader, an error below leaks nothing.
	local box = stm.newcopy(ptr)
	check_typename("reader", typename)
	local s = { typename = typename, box = box, data = {} }
	if not box(refill, s) then
		error("sharemap.reader: no data (the writer is gone)", 2)
	end
	local self = setmetatable({}, reader_mt)
	state[self] = s
	return self
end

return sharemap
