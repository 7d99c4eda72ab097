-- sharedatad: the node's keeper of skynet.sharedata's named trees (one per
-- node, started by skynet.uniqueservice).
--
-- pool[name] = { v = reference userdata of the current version (this
-- service's reference), h = its handle, watch = held monitor responses,
-- limit = prune threshold }. Messages (lua protocol):
--   new(name, value, ...)     builds the first version (name must be new)
--   update(name, value, ...) -> handle: builds a new version, marks the old
--                             one dirty, answers every held monitor with the
--                             new handle, drops its reference to the old one
--   delete(name)              marks dirty, answers the monitors with nothing
--   query(name) -> handle
--   monitor(name, handle) -> newer handle | nothing: at once when the
--                             handle is not the current one (or the name is
--                             gone), else held until update or delete
-- A handle lends no reference: a reader opens it (the C registry refuses a
-- version that died meanwhile and the reader asks again), so a reader that
-- exits at any point leaves nothing behind here. Old versions die when their
-- last reader switches away, not on a timer.
local skynet = require "skynet"
local core = require "skynet.sharedata.core"

local pool = {}
local CMD = {}

local PRUNE_START <const> = 16

-- Reads of a source chunk's globals fall back to this service's globals.
local env_meta = {
	__index = function(_, k)
		return rawget(_G, k)
	end,
}

local function build(name, value, ...)
	local tv = type(value)
	local t
	if tv == "table" then
		t = value
	elseif tv == "string" then
		local env = setmetatable({}, env_meta)
		local f
		if value:sub(1, 1) == "@" then
			f = assert(loadfile(value:sub(2), "bt", env))
		else
			f = assert(load(value, "=" .. name, "t", env))
		end
		local r = f(...)
		t = type(r) == "table" and r or env
	elseif tv == "nil" then
		t = {}
	else
		error("Unknown data type " .. tv)
	end
	return core.build(t)
end

local function answer_all(watch, ...)
	for i = 1, #watch do
		watch[i](true, ...)
	end
end

function CMD.new(name, value, ...)
	assert(pool[name] == nil)
	local v = build(name, value, ...)
	pool[name] = { v = v, h = core.handle(v), watch = {}, limit = PRUNE_START }
end

function CMD.update(name, value, ...)
	local v = build(name, value, ...)
	local obj = pool[name]
	if obj == nil then
		pool[name] = { v = v, h = core.handle(v), watch = {}, limit = PRUNE_START }
		return core.handle(v)
	end
	local old = obj.v
	obj.v, obj.h = v, core.handle(v)
	core.markdirty(core.handle(old))
	local watch = obj.watch
	obj.watch = {}
	answer_all(watch, obj.h)
	core.close(old)
	return obj.h
end

function CMD.delete(name)
	local obj = assert(pool[name], name)
	pool[name] = nil
	core.markdirty(obj.h)
	answer_all(obj.watch)
	obj.watch = nil
	core.close(obj.v)
end

function CMD.query(name)
	local obj = assert(pool[name], name)
	return obj.h
end

-- Held responses whose requester died are dropped once their number
-- passes a threshold that doubles.
local function prune(obj)
	local watch = obj.watch
	if #watch < obj.limit then
		return
	end
	local live = {}
	for i = 1, #watch do
		if watch[i]("TEST") then
			live[#live + 1] = watch[i]
		end
	end
	obj.watch = live
	obj.limit = math.max(PRUNE_START, #live * 2)
end

local function monitor(name, h)
	local obj = pool[name]
	if obj == nil then
		skynet.retpack()
	elseif obj.h ~= h then
		skynet.retpack(obj.h)
	else
		local watch = obj.watch
		watch[#watch + 1] = skynet.response()
		prune(obj)
	end
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		if cmd == "monitor" then
			monitor(...)
			return
		end
		local f = CMD[cmd]
		if f == nil then
			error(string.format("sharedatad: unknown command (%s)", tostring(cmd)))
		end
		skynet.retpack(f(...))
	end)
end)
