-- skynet.db.sqlite: an SQLite database whose disk work runs on a thread of
-- its own, never on a worker thread (docs/ref/skynet.db.sqlite.md).
--
-- Each open db has one thread (lualib-src/sqlite/dbthread.c) and a request
-- queue. A call queues a request (sqlite.core, which copies the SQL and
-- parameters) and suspends the calling coroutine with skynet.wait; the
-- thread answers with PTYPE_SQLITE messages, one per group of requests it
-- ran in one transaction (group commit). This file registers that protocol
-- on the first open; its dispatch decodes a message (sqlite.core.decode,
-- which never blocks) and wakes each waiting coroutine.
--
-- State owned here: `waiting` (request id -> the waiter record of the
-- coroutine suspended on it, or the function db:exec_then gave) and
-- `last_id`. A waiter whose coroutine was killed stays until its answer
-- arrives; the answer then wakes nobody.
local skynet = require "skynet"
local core = require "sqlite.core"

local type = type
local error = error
local setmetatable = setmetatable

local M = {}

local ID_MAX <const> = 0xffffffff
local SYNC <const> = {
	off = core.SYNC_OFF,
	normal = core.SYNC_NORMAL,
	full = core.SYNC_FULL,
}
local DEFAULT_BUSY_MS <const> = 1000

local waiting = {}
local last_id = 0
local registered = false

local function dispatch(_, _, t, n)
	for i = 0, n - 1 do
		local base = 4 * i
		local id = t[base + 1]
		local w = waiting[id]
		if w then
			waiting[id] = nil
			if type(w) == "function" then
				local ok, err = pcall(w, t[base + 2], t[base + 3], t[base + 4])
				if not ok then
					skynet.error("sqlite: the function given to exec_then raised: " .. tostring(err))
				end
			else
				w.ok, w.a, w.b = t[base + 2], t[base + 3], t[base + 4]
				w.done = true
				skynet.wakeup(w.co)
			end
		end
	end
end

local function register()
	if registered then
		return
	end
	skynet.register_protocol {
		name = "sqlite",
		id = core.PTYPE,
		unpack = core.decode,
		dispatch = dispatch,
	}
	registered = true
end

local function new_id()
	last_id = last_id % ID_MAX + 1
	return last_id
end

-- Wait for the answer to request id (already queued); returns ok, a, b.
local function wait(id)
	local w = { co = coroutine.running() }
	waiting[id] = w
	repeat
		skynet.wait(w.co)
	until w.done
	return w.ok, w.a, w.b
end

-- Queue a request with handle[method](handle, id, ...); returns its id. A
-- closed database raises at `level` (of submit's caller's caller).
local function submit(self, level, method, ...)
	local handle = self.handle
	local id = new_id()
	if not handle[method](handle, id, ...) then
		error("sqlite: database is closed", level + 1)
	end
	return id
end

-- Queue a request and wait for it.
local function call(self, method, ...)
	return wait(submit(self, 3, method, ...))
end

local db = {}
db.__index = db

local function check_open(self)
	if self.closed then
		error("sqlite: database is closed", 3)
	end
end

function db:exec(sql, ...)
	check_open(self)
	if type(sql) ~= "string" then
		error("sqlite.exec: sql must be a string (" .. type(sql) .. ")", 2)
	end
	local ok, changes, rowid = call(self, "exec", core.EXEC, sql, ...)
	if not ok then
		error(changes, 0)
	end
	return changes, rowid
end

-- Queues what exec would run and returns at once; f(ok, changes or the
-- error, last_insert_rowid) runs in this service's dispatch of the answer
-- (it must not yield). Saves the suspension of a coroutine per write.
function db:exec_then(f, sql, ...)
	check_open(self)
	if type(f) ~= "function" then
		error("sqlite.exec_then: f must be a function (" .. type(f) .. ")", 2)
	end
	if type(sql) ~= "string" then
		error("sqlite.exec_then: sql must be a string (" .. type(sql) .. ")", 2)
	end
	waiting[submit(self, 2, "exec", core.EXEC, sql, ...)] = f
end

function db:query(sql, ...)
	check_open(self)
	if type(sql) ~= "string" then
		error("sqlite.query: sql must be a string (" .. type(sql) .. ")", 2)
	end
	local ok, rows = call(self, "exec", core.QUERY, sql, ...)
	if not ok then
		error(rows, 0)
	end
	return rows
end

function db:batch(list)
	check_open(self)
	if type(list) ~= "table" then
		error("sqlite.batch: list must be a table (" .. type(list) .. ")", 2)
	end
	if #list == 0 then
		return {}
	end
	local ok, results = call(self, "batch", list)
	if not ok then
		error(results, 0)
	end
	return results
end

function db:stats()
	local commits, requests = self.handle:stats()
	return { commits = commits, requests = requests }
end

function db:close()
	if self.closed then
		return
	end
	self.closed = true
	local handle = self.handle
	local id = new_id()
	if handle:close(id) then
		wait(id)
	end
	handle:join()
end

local function opt(opts, name, kind, default)
	local v = opts[name]
	if v == nil then
		return default
	end
	if type(v) ~= kind then
		error(string.format("sqlite.open: option %s must be a %s (%s)", name, kind, type(v)), 3)
	end
	return v
end

function M.open(path, opts)
	if type(path) ~= "string" then
		error("sqlite.open: path must be a string (" .. type(path) .. ")", 2)
	end
	opts = opts or {}
	local sync = SYNC[opt(opts, "sync", "string", "full")]
	if not sync then
		error("sqlite.open: sync must be \"normal\", \"full\" or \"off\" (" .. opts.sync .. ")", 2)
	end
	local busy_ms = opt(opts, "busy_ms", "number", DEFAULT_BUSY_MS)
	if math.type(busy_ms) ~= "integer" or busy_ms < 0 then
		error("sqlite.open: busy_ms must be an integer >= 0 (" .. busy_ms .. ")", 2)
	end
	register()
	local id = new_id()
	local handle = core.open(
		skynet.self(),
		id,
		path,
		sync,
		opt(opts, "wal", "boolean", true),
		opt(opts, "readonly", "boolean", false),
		opt(opts, "create", "boolean", true),
		opt(opts, "exclusive", "boolean", false),
		busy_ms
	)
	local ok, err = wait(id)
	if not ok then
		handle:join()
		error(err, 0)
	end
	return setmetatable({ handle = handle, path = path, closed = false }, db)
end

M.blob = core.blob

return M
