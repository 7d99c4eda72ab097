---@meta skynet.db.mysql
-- Editor help: `require "skynet.db.mysql"`, a MySQL/MariaDB client. Every
-- request blocks the calling coroutine. SQL errors are returned as tables
-- { badresult = true, errno =, err =, sqlstate = }, never raised.

---@class skynet.db.mysql.opts
---@field host string
---@field port? integer default 3306
---@field user? string
---@field password? string
---@field database? string
---@field charset? string
---@field max_packet_size? integer
---@field compact_arrays? boolean rows as arrays instead of name -> value tables
---@field auth_plugin? string
---@field on_connect? async fun(db: skynet.db.mysql.client) runs after every (re)connect
---@field overload? fun(overload: boolean)
---@field timeout? integer centiseconds

---A prepared statement.
---@class skynet.db.mysql.stmt
---@field prepare_id integer
---@field field_count integer
---@field param_count integer
---@field warning_count integer
---@field params table[]
---@field fields table[]

---@class skynet.db.mysql.client
local client = {}

---Closes the connection.
function client:disconnect() end

---Rows as arrays (true) or name -> value tables (false).
---@param flag boolean
function client:set_compact_arrays(flag) end

---The server version string from the greeting.
---@return string
function client:server_ver() end

---Runs SQL (several statements allowed): the rows of a result set, an OK table
---{ affected_rows =, insert_id =, ... }, a list of those for several results, or an error
---table. Blocks.
---@async
---@param sql string
---@return table
function client:query(sql) end

---Pings the server: an OK table or an error table. Blocks.
---@async
---@return table
function client:ping() end

---Prepares a statement: the statement table, or an error table. Blocks.
---@async
---@param sql string
---@return skynet.db.mysql.stmt|table
function client:prepare(sql) end

---Executes a prepared statement with exactly param_count parameters (nil: NULL); results as
---query. Blocks.
---@async
---@param stmt skynet.db.mysql.stmt
---@param ... any
---@return table
function client:execute(stmt, ...) end

---Resets a prepared statement: an OK table or an error table. Blocks.
---@async
---@param stmt skynet.db.mysql.stmt
---@return table
function client:stmt_reset(stmt) end

---Frees a prepared statement on the server (no reply).
---@param stmt skynet.db.mysql.stmt
function client:stmt_close(stmt) end

local mysql = {}

---Connects and logs in; raises when it cannot. Blocks.
---@async
---@param opts skynet.db.mysql.opts
---@return skynet.db.mysql.client
function mysql.connect(opts) end

---s quoted and escaped as an SQL string literal.
---@param s string
---@return string
function mysql.quote_sql_str(s) end

return mysql
