---@meta skynet.db.sqlite
-- Editor help: `require "skynet.db.sqlite"`, an SQLite database whose disk work runs on a
-- thread of its own (group commit). Every db method but stats blocks the calling coroutine.

---@class skynet.db.sqlite.opts
---@field sync? "full"|"normal"|"off" PRAGMA synchronous, default "full"
---@field wal? boolean journal_mode=WAL, default true
---@field busy_ms? integer lock wait, default 1000
---@field readonly? boolean default false
---@field create? boolean create the file, default true
---@field exclusive? boolean hold the file's lock until close, default false

---A marker that binds a string as a BLOB.
---@class skynet.db.sqlite.blob

---An open database.
---@class skynet.db.sqlite.db
local db = {}

---Runs one statement (or, without parameters, a script); returns changes and
---last_insert_rowid. Raises "sqlite: <message> (<sql>)". Blocks.
---@async
---@param sql string
---@param ... nil|boolean|integer|number|string|skynet.db.sqlite.blob
---@return integer changes, integer last_insert_rowid
function db:exec(sql, ...) end

---Runs one statement; returns its rows, tables keyed by column name (NULL is absent). Blocks.
---@async
---@param sql string
---@param ... nil|boolean|integer|number|string|skynet.db.sqlite.blob
---@return table[]
function db:query(sql, ...) end

---Runs every { sql, params... [, n = count] } atomically; returns one result per item: rows,
---or { changes =, last_insert_rowid = }. Blocks.
---@async
---@param list table[]
---@return table[]
function db:batch(list) end

---Transactions committed and requests answered so far.
---@return { commits: integer, requests: integer }
function db:stats() end

---Completes what is queued, closes the database and joins its thread. Blocks.
---@async
function db:close() end

local sqlite = {}

---Opens (creates) the database at path on a thread of its own and checks it is usable.
---Raises "sqlite: cannot open <path>: <reason>". Blocks.
---@async
---@param path string
---@param opts? skynet.db.sqlite.opts
---@return skynet.db.sqlite.db
function sqlite.open(path, opts) end

---A parameter that binds s as a BLOB (a plain string binds as TEXT).
---@param s string
---@return skynet.db.sqlite.blob
function sqlite.blob(s) end

return sqlite
