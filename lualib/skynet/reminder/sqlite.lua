-- skynet.reminder.sqlite: the reminder store in a SQLite file (the embedded
-- default: reminder_store = "sqlite:./data/reminders.db"), used by
-- service/reminderd.lua only. Every call blocks the calling coroutine; the
-- I/O runs on the database's own thread (skynet.db.sqlite), which commits
-- the requests that queue up meanwhile in one transaction (group commit):
-- a call returns once its change is committed, durable by reminder_sync
-- ("full", the default: survives a power loss; "normal": survives a crash
-- of the process, WAL mode).
--
-- Each write is one request; the requests of concurrent writers queue at
-- the database thread meanwhile and commit together (a write through one
-- db:batch of this module's own was measured no faster: 22-29k sets/s
-- against 26-30k, so the thread's group commit is all the batching).
--
-- One table, reminders, keyed by key; the index (state, at, key) serves
-- the window loads, the next far instant and the dead letters. state is
-- 'p' (pending) or 'd' (dead). One node owns the file (SQLite locks it
-- against other writers for each transaction; two nodes on one file would
-- both fire its runs), so begin() has nothing to check and the loader may
-- sleep until the next stored instant (poll = nil).
local sqlite = require "skynet.db.sqlite"

local M = {}
local store = {}
store.__index = store

local SCHEMA <const> = {
	[[CREATE TABLE IF NOT EXISTS reminders (
		key TEXT PRIMARY KEY, due REAL NOT NULL, at REAL NOT NULL, target TEXT NOT NULL,
		payload BLOB NOT NULL, every REAL, cron TEXT, tz TEXT, misfire TEXT NOT NULL,
		attempt INTEGER NOT NULL, run INTEGER NOT NULL, missed INTEGER NOT NULL,
		gen TEXT NOT NULL, state TEXT NOT NULL, error TEXT) WITHOUT ROWID]],
	"CREATE INDEX IF NOT EXISTS reminders_at ON reminders (state, at, key)",
}

local COLUMNS <const> = "key, due, at, target, payload, every, cron, tz, misfire, attempt, run, missed, gen, "
	.. "state, error"
local SELECT <const> = "SELECT " .. COLUMNS .. " FROM reminders "
local PUT <const> = "INSERT OR REPLACE INTO reminders (" .. COLUMNS .. ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
local DELETE <const> = "DELETE FROM reminders WHERE key = ?"
local GET <const> = SELECT .. "WHERE key = ?"
local LIST <const> = SELECT .. "WHERE key >= ? AND key < ? ORDER BY key LIMIT ?"
local LIST_ALL <const> = SELECT .. "WHERE key >= ? ORDER BY key LIMIT ?"
local LOAD <const> = SELECT .. "WHERE state = 'p' AND (at > ?1 OR (at = ?1 AND key > ?2)) AND at < ?3 "
	.. "ORDER BY at, key LIMIT ?4"
local NEXT_AT <const> = "SELECT min(at) AS at FROM reminders WHERE state = 'p' AND at >= ?"
local ACK_DONE <const> = "DELETE FROM reminders WHERE key = ? AND gen = ?"
local ACK_NEXT <const> = "UPDATE reminders SET due = ?, at = ?, run = ?, attempt = 0, missed = 0, error = NULL"
	.. " WHERE key = ? AND gen = ?"
local UPDATE <const> = "UPDATE reminders SET due = ?, at = ?, attempt = ?, run = ?, missed = ?, state = ?,"
	.. " error = ? WHERE key = ? AND gen = ?"
local STATS <const> = "SELECT state, count(*) AS n, min(at) AS at FROM reminders GROUP BY state"
local DEAD <const> = SELECT .. "WHERE state = 'd' ORDER BY at, key LIMIT ?"

local STATE_OUT <const> = { p = "pending", d = "dead" }
local STATE_IN <const> = { pending = "p", dead = "d" }

local function record(row)
	row.state = STATE_OUT[row.state]
	return row
end

local function records(rows)
	for i = 1, #rows do
		record(rows[i])
	end
	return rows
end

-- "sqlite:PATH" -> store; raises naming the file when it cannot be used.
function M.open(spec, opts)
	local path = spec:match "^sqlite:(.+)$"
	if path == nil then
		error(string.format("reminder store %q: expected sqlite:PATH", spec), 0)
	end
	local dir = path:match "^(.*)/[^/]*$"
	if dir and dir ~= "" then
		os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "'")
	end
	local ok, db = pcall(sqlite.open, path, { sync = opts.sync or "full", wal = true })
	if not ok then
		error(string.format("reminder store %s: %s", path, tostring(db)), 0)
	end
	local done, err = pcall(db.batch, db, { { SCHEMA[1] }, { SCHEMA[2] } })
	if not done then
		db:close()
		error(string.format("reminder store %s: %s", path, tostring(err)), 0)
	end
	return setmetatable({ db = db, name = "sqlite:" .. path }, store)
end

-- Runs one writing statement; returns the rows it changed.
local function write(self, sql, ...)
	return (self.db:exec(sql, ...))
end

-- The statement and parameters that write r whole.
local function put_args(r)
	return PUT, r.key, r.due, r.at, r.target, sqlite.blob(r.payload), r.every, r.cron, r.tz, r.misfire, r.attempt,
		r.run, r.missed, r.gen, STATE_IN[r.state], r.error
end

function store:put(r)
	write(self, put_args(r))
end

-- put without waiting: f(ok, err) runs when the write committed or failed
-- (in the service's dispatch; it must not yield). hold is unused, as in put.
function store:put_then(r, _, f)
	self.db:exec_then(f, put_args(r))
end

function store:delete(key)
	return write(self, DELETE, key) > 0
end

function store:get(key)
	local rows = self.db:query(GET, key)
	return rows[1] and record(rows[1])
end

-- The first key after every key starting with prefix ("" : none).
local function prefix_end(prefix)
	while #prefix > 0 do
		local last = prefix:byte(-1)
		if last < 255 then
			return prefix:sub(1, -2) .. string.char(last + 1)
		end
		prefix = prefix:sub(1, -2)
	end
	return nil
end

function store:list(prefix, limit)
	local stop = prefix_end(prefix)
	if stop then
		return records(self.db:query(LIST, prefix, stop, limit))
	end
	return records(self.db:query(LIST_ALL, prefix, limit))
end

-- Pending records after (after_at, after_key) with at < hi, in (at, key) order.
function store:load(after_at, after_key, hi, limit)
	return records(self.db:query(LOAD, after_at, after_key, hi, limit))
end

-- The earliest at >= t of a pending record, or nil.
function store:next_at(t)
	local rows = self.db:query(NEXT_AT, t)
	return rows[1] and rows[1].at
end

function store.begin()
	return true
end

-- The run of r was answered: delete r, or move it to upd's run; false when
-- the stored record is no longer r's (set again meanwhile).
function store:ack(r, upd)
	if upd == nil then
		return write(self, ACK_DONE, r.key, r.gen) > 0
	end
	return write(self, ACK_NEXT, upd.due, upd.at, upd.run, r.key, r.gen) > 0
end

-- Writes r's schedule fields (a retry, a dead letter, a skip, a revival).
function store:update(r)
	return write(self, UPDATE, r.due, r.at, r.attempt, r.run, r.missed, STATE_IN[r.state], r.error, r.key,
		r.gen) > 0
end

function store:stats()
	local s = { pending = 0, dead = 0 }
	for _, row in ipairs(self.db:query(STATS)) do
		if row.state == "p" then
			s.pending, s.next_due = row.n, row.at
		else
			s.dead = row.n
		end
	end
	return s
end

function store:dead(limit)
	return records(self.db:query(DEAD, limit))
end

function store:close()
	self.db:close()
end

return M
