-- skynet.db.mysql against a private mariadbd (test/node/test_db.sh): login
-- outcomes, every common column type in the text and binary protocols
-- (NULL included), OK/ERR tables, multiple result sets, 10,000 rows, rows
-- and queries past 16 MiB, prepared statements, quoting, an auth switch,
-- a query while the server restarts, and the server killed mid-request.
local skynet = require "skynet"
local sc = require "skynet.socketchannel"
local mysql = require "skynet.db.mysql"
local t = require "testlib"
local util = require "dbutil"

local function opts(extra)
	local o = {
		host = "127.0.0.1",
		port = util.mysql_port,
		user = "sky",
		password = util.mysql_password,
		database = "skytest",
		charset = "utf8mb4",
	}
	for k, v in pairs(extra or {}) do
		o[k] = v
	end
	return o
end

local function raises_sc(f, ...)
	local ok, err = pcall(f, ...)
	t.eq(ok, false, "call failed")
	t.eq(err, sc.error, "error object")
end

local function ok_result(r, what)
	if type(r) ~= "table" or r.badresult then
		error(string.format("%s: %s", what, r and r.err or "no result"), 2)
	end
	return r
end

t.case("login: password, empty password, failures, on_connect", function()
	util.check_env()
	local connects = 0
	local db = mysql.connect(opts {
		on_connect = function(d)
			connects = connects + 1
			d:query "SET @skynet_mark = 7"
		end,
	})
	t.eq(connects, 1, "on_connect ran")
	t.eq(db:query("SELECT @skynet_mark AS m")[1].m, 7, "on_connect's query")
	t.ok(db:server_ver():find("MariaDB", 1, true), db:server_ver())
	t.same(db:ping(), { affected_rows = 0, insert_id = 0, server_status = 2, warning_count = 0 },
		"ping")
	db:disconnect()
	local ok, err = pcall(function()
		return db:query "SELECT 1"
	end)
	t.eq(ok, false, "disconnected object")
	t.ok(tostring(err):find("attempt to call a nil value", 1, true), tostring(err))
	local nopw = mysql.connect(opts { user = "nopw", password = "" })
	t.eq(nopw:query("SELECT CURRENT_USER() AS u")[1].u, "nopw@127.0.0.1", "empty password")
	nopw:disconnect()
	raises_sc(mysql.connect, opts { password = "wrong" })
	raises_sc(mysql.connect, opts { database = "nosuchdb" })
	raises_sc(mysql.connect, opts { charset = "klingon" })
	raises_sc(mysql.connect, opts { port = 1 })
	-- an auth switch: the first answer claims caching_sha2_password, the
	-- server asks for mysql_native_password instead
	local sw = mysql.connect(opts { auth_plugin = "caching_sha2_password" })
	t.eq(sw:query("SELECT 1 AS one")[1].one, 1, "logged in after an auth switch")
	sw:disconnect()
end)

local TYPES_TABLE <const> = [[
CREATE TABLE types (
	id INT PRIMARY KEY,
	ti TINYINT, si SMALLINT, mi MEDIUMINT, i INT, bi BIGINT, ubi BIGINT UNSIGNED,
	f FLOAT, d DOUBLE, dec1 DECIMAL(10,2), y YEAR,
	dt DATE, dtm DATETIME, dtm6 DATETIME(6), tm TIME, ts TIMESTAMP NULL,
	c CHAR(4), vc VARCHAR(20), tx TEXT, bl BLOB, bt BIT(3),
	en ENUM('a','b'), st SET('x','y'), js JSON
)]]

local ROW <const> = [[
INSERT INTO types VALUES (1, -128, -32768, -8388608, -2147483648, -9223372036854775808,
	18446744073709551615, 1.5, 1000, 12.50, 2024, '2024-02-29', '2024-02-29 12:34:56',
	'2024-02-29 12:34:56.123456', '-12:30:01', '2024-02-29 12:00:00', 'ab', 'hello', 'text',
	x'00ff0d0a', b'101', 'b', 'x,y', '{"k": 1}')]]

local function check_types_row(r, binary)
	t.eq(r.ti, -128, "tinyint")
	t.eq(r.si, -32768, "smallint")
	t.eq(r.mi, -8388608, "mediumint")
	t.eq(r.i, -2147483648, "int")
	t.eq(r.bi, math.mininteger, "bigint")
	if binary then
		t.eq(r.ubi, -1, "unsigned bigint wraps (binary)")
		t.eq(r.f, 1.5, "float")
		t.eq(math.type(r.d), "float", "double is a float (binary)")
	else
		t.eq(r.ubi, 1.8446744073709552e+19, "unsigned bigint as float (text)")
		t.eq(r.f, 1.5, "float")
		t.eq(math.type(r.d), "integer", "double 1000 reads as an integer (text)")
	end
	t.eq(r.d, 1000, "double")
	t.eq(r.dec1, 12.5, "decimal")
	t.eq(r.y, 2024, "year")
	t.eq(r.dt, "2024-02-29", "date")
	t.eq(r.dtm, "2024-02-29 12:34:56", "datetime")
	t.eq(r.dtm6, "2024-02-29 12:34:56.123456", "datetime(6)")
	t.eq(r.tm, "-12:30:01", "time")
	t.eq(r.ts, "2024-02-29 12:00:00", "timestamp")
	t.eq(r.c, "ab", "char")
	t.eq(r.vc, "hello", "varchar")
	t.eq(r.tx, "text", "text")
	t.eq(r.bl, "\0\255\r\n", "blob")
	t.eq(r.bt, "\5", "bit")
	t.eq(r.en, "b", "enum")
	t.eq(r.st, "x,y", "set")
	t.eq(r.js, '{"k": 1}', "json")
end

t.case("text protocol: every common column type, NULL, compact rows", function()
	local db = mysql.connect(opts())
	db:query "DROP TABLE IF EXISTS types"
	ok_result(db:query(TYPES_TABLE), "create")
	local ins = ok_result(db:query(ROW), "insert")
	t.eq(ins.affected_rows, 1, "affected rows")
	ok_result(db:query "INSERT INTO types (id) VALUES (2)", "insert nulls")
	local rows = db:query "SELECT * FROM types ORDER BY id"
	t.eq(#rows, 2, "two rows")
	check_types_row(rows[1], false)
	local n = 0
	for k in pairs(rows[2]) do
		n = n + 1
		t.eq(k, "id", "only id is not NULL")
	end
	t.eq(n, 1, "NULL columns are absent")
	db:set_compact_arrays(true)
	local compact = db:query "SELECT id, ti, si FROM types WHERE id = 2"
	t.eq(compact[1][1], 2, "compact first")
	t.eq(compact[1][2], nil, "compact NULL hole")
	db:set_compact_arrays(false)
	t.same(db:query "SELECT * FROM types WHERE id = 99", {}, "no rows")
	t.eq(db:query("SELECT 1 AS a, 2 AS a")[1].a, 2, "duplicate names: the last wins")
	t.eq(db:query("SELECT '0000-00-00 00:00:00' + INTERVAL 0 SECOND AS z")[1].z, nil,
		"an invalid date is NULL")
	db:disconnect()
end)

t.case("OK and ERR tables, a failing statement", function()
	local db = mysql.connect(opts())
	db:query "DROP TABLE IF EXISTS okt"
	db:query "CREATE TABLE okt (id INT AUTO_INCREMENT PRIMARY KEY, v INT)"
	local r = db:query "INSERT INTO okt (v) VALUES (1), (2)"
	t.eq(r.affected_rows, 2, "affected")
	t.eq(r.insert_id, 1, "insert id")
	t.eq(r.message, "&Records: 2  Duplicates: 0  Warnings: 0", "message with its length byte")
	local e = db:query "SELECT * FROM nosuchtable"
	t.eq(e.badresult, true, "badresult")
	t.eq(e.errno, 1146, "errno")
	t.eq(e.sqlstate, "42S02", "sqlstate")
	t.eq(e.err, "Table 'skytest.nosuchtable' doesn't exist", "err")
	local syn = db:query "SELEC 1"
	t.eq(syn.errno, 1064, "syntax error")
	t.eq(db:query("SELECT 5 AS v")[1].v, 5, "connection fine after errors")
	db:disconnect()
end)

t.case("multiple result sets: statements, a failure in the batch, CALL", function()
	local db = mysql.connect(opts())
	local r = db:query "SELECT 1 AS a; SELECT 2 AS b; UPDATE okt SET v = v"
	t.eq(r.multiresultset, true, "flag")
	t.eq(r[1][1].a, 1, "first set")
	t.eq(r[2][1].b, 2, "second set")
	t.eq(r[3].affected_rows, 2, "third: OK (matched rows: FOUND_ROWS)")
	r = db:query "SELECT 1 AS a; SELECT * FROM nosuch; SELECT 3"
	t.eq(r[1][1].a, 1, "before the failure")
	t.eq(r.badresult, true, "failure flagged")
	t.eq(r.errno, 1146, "errno of the failure")
	t.eq(r[2], nil, "the rest did not run")
	db:query "DROP PROCEDURE IF EXISTS two_sets"
	db:query "CREATE PROCEDURE two_sets() BEGIN SELECT 1 AS x; SELECT 2 AS y; END"
	r = db:query "CALL two_sets()"
	t.eq(r.multiresultset, true, "CALL: several results")
	t.eq(r[1][1].x, 1, "CALL first")
	t.eq(r[2][1].y, 2, "CALL second")
	t.eq(r[3].affected_rows, 0, "CALL ends with an OK")
	t.eq(db:query("SELECT 9 AS n")[1].n, 9, "in step afterwards")
	db:disconnect()
end)

t.case("10,000 rows, a 17 MiB row and a 17 MiB query", function()
	local db = mysql.connect(opts())
	local r = db:query "SELECT seq AS n, CONCAT('row', seq) AS s FROM seq_1_to_10000"
	t.eq(#r, 10000, "10,000 rows")
	t.eq(r[10000].n, 10000, "last n")
	t.eq(r[1234].s, "row1234", "a string column")
	local size = 17 * 1024 * 1024
	r = db:query(string.format("SELECT REPEAT('a', %d) AS big, 7 AS after", size))
	t.eq(#r[1].big, size, "17 MiB value")
	t.eq(r[1].after, 7, "the column after it")
	local big = string.rep("b", size)
	r = db:query("SELECT LENGTH('" .. big .. "') AS n")
	t.eq(r[1].n, size, "17 MiB query")
	t.eq(db:query("SELECT 1 AS one")[1].one, 1, "in step afterwards")
	db:disconnect()
end)

t.case("prepared statements: parameters, binary rows, errors", function()
	local db = mysql.connect(opts())
	local stmt = db:prepare "SELECT * FROM types WHERE id = ?"
	t.eq(stmt.param_count, 1, "param count")
	t.eq(stmt.field_count, 24, "field count")
	t.eq(stmt.params[1].name, "?", "param name")
	local rows = db:execute(stmt, 1)
	check_types_row(rows[1], true)
	rows = db:execute(stmt, 2)
	t.eq(rows[1].id, 2, "NULL row id")
	t.eq(rows[1].ti, nil, "NULL in binary rows")
	t.same(db:execute(stmt, 99), {}, "no rows")
	local p = db:prepare "SELECT ? AS a, ? AS b, ? AS c, ? AS d, ? AS e, ? AS f"
	local r = db:execute(p, 42, 2.5, "str", true, nil, 3.0)[1]
	t.eq(r.a, 42, "integer parameter")
	t.eq(r.b, 2.5, "float parameter")
	t.eq(r.c, "str", "string parameter")
	t.eq(r.d, 1, "boolean parameter")
	t.eq(r.e, nil, "nil parameter")
	t.eq(r.f, 3, "integral float as integer")
	t.raises("require stmt.param_count 6 get arg_num 5", db.execute, db, p, 1, 2, 3, 4, 5)
	t.raises("invalid parameter type table", db.execute, db, p, 1, 2, 3, 4, 5, {})
	local zero = db:prepare "SELECT CAST('0000-00-00' AS DATE) AS d, CAST(? AS TIME) AS t"
	r = db:execute(zero, "838:59:59")[1]
	t.eq(r.t, "838:59:59", "time with days")
	local bad = db:prepare "SELECT * FROM nosuch"
	t.eq(bad.badresult, true, "prepare error is returned")
	t.eq(bad.errno, 1146, "prepare errno")
	db:query "DROP PROCEDURE IF EXISTS two_sets_p"
	db:query "CREATE PROCEDURE two_sets_p(a INT) BEGIN SELECT a AS x; SELECT a + 1 AS y; END"
	local call = db:prepare "CALL two_sets_p(?)"
	r = db:execute(call, 5)
	t.eq(r.mulitresultset, true, "execute flags several results (misspelled)")
	t.eq(r[1][1].x, 5, "first set")
	t.eq(r[2][1].y, 6, "second set")
	t.eq(db:stmt_reset(stmt).affected_rows, 0, "reset")
	db:stmt_close(stmt)
	local gone = db:execute(stmt, 1)
	t.eq(gone.errno, 1243, "closed statement")
	local ins = db:prepare "INSERT INTO okt (v) VALUES (?)"
	t.eq(db:execute(ins, 10).affected_rows, 1, "insert through a statement")
	db:disconnect()
end)

t.case("quote_sql_str", function()
	t.eq(mysql.quote_sql_str "a'b\"c\\d\0e", "'a\\'b\\\"c\\\\d\\0e'", "example")
	t.eq(mysql.quote_sql_str "\b\n\r\t\26%_", "'\\b\\n\\r\\t\\Z%_'", "controls")
	local db = mysql.connect(opts())
	local all = {}
	for i = 0, 255 do
		all[#all + 1] = string.char(i)
	end
	all = table.concat(all)
	local r = db:query("SELECT " .. mysql.quote_sql_str(all) .. " AS s")
	t.eq(r[1].s, all, "every byte through a quoted literal")
	db:disconnect()
end)

t.case("a query while the server restarts: an error, then recovery", function()
	local connects = 0
	local db = mysql.connect(opts {
		on_connect = function()
			connects = connects + 1
		end,
	})
	local stmt = db:prepare "SELECT ? AS v"
	util.server "stop-mysql"
	raises_sc(db.query, db, "SELECT 1") -- the first call finds the connection dead
	raises_sc(db.query, db, "SELECT 1") -- the reconnect fails: nobody listens
	util.server "start-mysql"
	t.eq(db:query("SELECT 2 AS v")[1].v, 2, "recovered")
	t.eq(connects, 2, "logged in again with on_connect")
	t.eq(db:execute(stmt, 1).errno, 1243, "statements are lost on reconnect")
	-- KILL of the own connection: ERR 1927, then the connection is gone
	local id = db:query("SELECT CONNECTION_ID() AS id")[1].id
	t.eq(db:query("KILL " .. id).errno, 1927, "killed")
	skynet.sleep(10) -- the close is seen: the next call reconnects
	t.eq(db:query("SELECT 3 AS v")[1].v, 3, "reconnected after KILL")
	db:disconnect()
end)

t.case("killing the server mid-request: every caller gets sc.error", function()
	local db = mysql.connect(opts())
	local wait = util.spawn(10, function(i)
		if i == 1 then
			return db:query "SELECT SLEEP(20)"
		end
		return db:query("SELECT " .. i)
	end)
	skynet.sleep(30)
	util.server "kill-mysql"
	for i, r in ipairs(wait()) do
		t.eq(r[1] == false and r[2] == sc.error, true, "caller " .. i)
	end
	util.server "start-mysql"
	t.eq(db:query("SELECT 4 AS v")[1].v, 4, "recovered")
	db:disconnect()
end)

t.start()
