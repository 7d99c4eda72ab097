-- skynet.db.sqlite: types round-trip, errors leave the db usable, batch
-- atomicity, group commit, open failures (corrupt file, folder, missing
-- folder, locked file), close semantics, an owner that exits with its db
-- open. Files live in a folder from mktemp -d, removed at the end.
local skynet = require "skynet"
local sqlite = require "skynet.db.sqlite"
local t = require "testlib"

local DIR = t.tmpdir()

local function path(name)
	return DIR .. "/" .. name
end

-- Threads of this process (Linux).
local function threads()
	local f = assert(io.open "/proc/self/status")
	local s = f:read "a"
	f:close()
	return tonumber(s:match "Threads:%s*(%d+)")
end

local function write_file(name, bytes)
	local f = assert(io.open(path(name), "wb"))
	f:write(bytes)
	f:close()
end

local function count(db, tbl)
	return db:query("SELECT count(*) AS n FROM " .. tbl)[1].n
end

t.case("values of every type round-trip", function()
	local db = sqlite.open(path "types.db")
	db:exec "CREATE TABLE v(id INTEGER PRIMARY KEY, x)"
	local bytes = "a\0b\255\0" .. string.rep("z", 1000) .. "\0"
	local big = string.rep("0123456789", 100000) -- 1 MB
	local values = {
		{ math.maxinteger, "integer" },
		{ math.mininteger, "integer" },
		{ 0, "integer" },
		{ 1.5, "real" },
		{ -1e300, "real" },
		{ 2 ^ 53, "real" },
		{ "", "text" },
		{ "héllo", "text" },
		{ bytes, "text" },
		{ big, "text" },
	}
	for i, v in ipairs(values) do
		local changes, rowid = db:exec("INSERT INTO v(id, x) VALUES (?, ?)", i, v[1])
		t.eq(changes, 1, "changes")
		t.eq(rowid, i, "rowid")
	end
	local rows = db:query "SELECT id, x, typeof(x) AS type FROM v ORDER BY id"
	t.eq(#rows, #values, "rows")
	for i, v in ipairs(values) do
		t.eq(math.type(rows[i].x), math.type(v[1]), "number kind of value " .. i)
		t.eq(rows[i].x, v[1], "value " .. i)
		t.eq(rows[i].type, v[2], "type of value " .. i)
	end
	local r = db:query("SELECT ? AS b, typeof(?) AS tb, ? AS t, ? AS f, ? AS n", sqlite.blob(bytes),
		sqlite.blob(bytes), true, false, nil)[1]
	t.eq(r.b, bytes, "blob")
	t.eq(r.tb, "blob", "blob type")
	t.eq(r.t, 1, "true")
	t.eq(r.f, 0, "false")
	t.eq(r.n, nil, "NULL is absent")
	local e = db:query("SELECT ? AS b, typeof(?) AS tb, length(?) AS n", sqlite.blob "",
		sqlite.blob "", sqlite.blob "")[1]
	t.eq(e.b, "", "empty blob")
	t.eq(e.tb, "blob", "empty blob type")
	t.eq(e.n, 0, "empty blob length")
	t.eq(#db:query "SELECT 1 WHERE 0", 0, "no rows")
	db:close()
end)

t.case("statement errors raise and leave the db usable", function()
	local db = sqlite.open(path "errors.db")
	db:exec "CREATE TABLE u(k INTEGER PRIMARY KEY, v TEXT NOT NULL)"
	t.raises("sqlite: near \"SELEC\": syntax error (SELEC 1)", db.query, db, "SELEC 1")
	local long = "SELECT * FROM no_such_table WHERE " .. string.rep("x = 1 AND ", 20) .. "1"
	local err = t.raises("sqlite: no such table: no_such_table (SELECT", db.query, db, long)
	t.ok(err:find("(" .. long:sub(1, 60) .. ")", 1, true), "the first 60 chars of sql: " .. err)
	t.raises("cannot bind a table", db.exec, db, "INSERT INTO u VALUES (?, ?)", 1, {})
	t.raises("3 parameters given, the statement has 2", db.exec, db, "INSERT INTO u VALUES (?, ?)",
		1, "a", "b")
	t.raises("one statement expected", db.query, db, "SELECT 1; SELECT 2")
	t.raises("sqlite: transaction statements are not allowed here (COMMIT)", db.exec, db, "COMMIT")
	t.raises("transaction statements are not allowed", db.exec, db, "SELECT 1; BEGIN")
	t.raises("transaction statements are not allowed", db.batch, db, { { "SAVEPOINT x" } })
	db:exec("INSERT INTO u VALUES (?, ?)", 1, "one")
	-- A constraint violation among concurrent inserts: only that one fails.
	local wait = t.spawn(10, function(i)
		return db:exec("INSERT INTO u VALUES (?, ?)", i == 5 and 1 or i + 100, "x")
	end)
	local results = wait()
	for i, r in ipairs(results) do
		if i == 5 then
			t.ok(not r[1] and r[2]:find("UNIQUE constraint failed: u.k", 1, true), tostring(r[2]))
		else
			t.ok(r[1], "insert " .. i .. ": " .. tostring(r[2]))
		end
	end
	t.raises("NOT NULL constraint failed", db.exec, db, "INSERT INTO u VALUES (2, NULL)")
	t.eq(count(db, "u"), 10, "rows after the errors")
	-- A script (several statements, no parameters).
	db:exec "CREATE TABLE s1(a); CREATE TABLE s2(b); INSERT INTO s1 VALUES (1)"
	t.eq(count(db, "s1"), 1, "script ran")
	t.raises("string expected", sqlite.blob, 1)
	db:close()
end)

t.case("a batch runs all or nothing", function()
	local db = sqlite.open(path "batch.db")
	local r = db:batch {
		{ "CREATE TABLE b(k INTEGER PRIMARY KEY, v)" },
		{ "INSERT INTO b VALUES (?, ?)", 1, "a" },
		{ "INSERT INTO b VALUES (?, ?)", 2, nil, n = 3 },
		{ "SELECT k, v FROM b ORDER BY k" },
	}
	t.eq(#r, 4, "results")
	t.eq(r[2].changes, 1, "changes")
	t.eq(r[3].last_insert_rowid, 2, "rowid")
	t.eq(#r[4], 2, "rows of the select")
	t.eq(r[4][2].v, nil, "NULL parameter given with n")
	t.raises("UNIQUE constraint failed", db.batch, db, {
		{ "INSERT INTO b VALUES (?, ?)", 3, "c" },
		{ "INSERT INTO b VALUES (?, ?)", 1, "dup" },
	})
	t.eq(count(db, "b"), 2, "nothing of the failed batch stays")
	t.raises("batch item 2", db.batch, db, { { "SELECT 1" }, "SELECT 2" })
	t.same(db:batch {}, {}, "empty batch")
	db:close()
end)

-- The thread is first kept busy by a slow query (a recursive count taking
-- tens of milliseconds), so the inserts queue meanwhile and must then run
-- as one group, or a few: one commit per insert fails the case.
local SLOW <const> = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
	.. "WHERE x < 1000000) SELECT count(*) AS n FROM c"

t.case("concurrent writes share commits (group commit)", function()
	local db = sqlite.open(path "group.db", { sync = "normal" })
	db:exec "CREATE TABLE g(n INTEGER)"
	local before = db:stats()
	local N = 1000
	local slow = t.spawn(1, function()
		return db:query(SLOW)[1].n
	end)
	local wait = t.spawn(N, function(i)
		return db:exec("INSERT INTO g VALUES (?)", i)
	end)
	for i, r in ipairs(wait()) do
		t.ok(r[1], "insert " .. i .. ": " .. tostring(r[2]))
	end
	t.eq(slow()[1][2], 1000000, "the slow query")
	local after = db:stats()
	t.eq(after.requests - before.requests, N + 1, "requests")
	local commits = after.commits - before.commits
	t.ok(commits <= 10, string.format("%d commits for %d writes", commits, N))
	t.eq(count(db, "g"), N, "rows")
	db:close()
end)

t.case("open fails on a corrupt file, a folder, a missing folder", function()
	math.randomseed(42)
	local junk = {}
	for i = 1, 4096 do
		junk[i] = string.char(math.random(0, 255))
	end
	write_file("junk.db", table.concat(junk))
	t.raises("sqlite: cannot open " .. path "junk.db" .. ": file is not a database", sqlite.open,
		path "junk.db")
	-- A folder: SQLite cannot open it for writing.
	t.raises("sqlite: cannot open " .. DIR .. ": ", sqlite.open, DIR)
	-- A file in a folder that does not exist fails as root too (no folder is
	-- created), with create = false and with create = true.
	local missing = path "no/such/folder/x.db"
	t.raises("sqlite: cannot open " .. missing .. ": unable to open database file", sqlite.open,
		missing, { create = false })
	t.raises("sqlite: cannot open " .. missing .. ": unable to open database file", sqlite.open,
		missing)
	t.raises("sqlite: cannot open " .. path "absent.db" .. ": unable to open database file",
		sqlite.open, path "absent.db", { create = false })
	t.raises("sync must be", sqlite.open, path "x.db", { sync = "always" })
	t.raises("option wal must be a boolean", sqlite.open, path "x.db", { wal = 1 })
end)

t.case("open fails on a file another connection holds locked", function()
	local holder = sqlite.open(path "locked.db", { exclusive = true })
	holder:exec "CREATE TABLE l(x)"
	t.raises("sqlite: cannot open " .. path "locked.db" .. ": database is locked", sqlite.open,
		path "locked.db", { busy_ms = 0 })
	holder:close()
	local db = sqlite.open(path "locked.db", { busy_ms = 0 })
	t.eq(count(db, "l"), 0, "usable once the holder closed")
	db:close()
end)

t.case("read-only databases refuse writes", function()
	local db = sqlite.open(path "ro.db")
	db:exec "CREATE TABLE r(x); INSERT INTO r VALUES (1)"
	db:close()
	local ro = sqlite.open(path "ro.db", { readonly = true })
	t.eq(count(ro, "r"), 1, "readable")
	t.raises("attempt to write a readonly database", ro.exec, ro, "INSERT INTO r VALUES (2)")
	ro:close()
end)

t.case("exec_then answers in order, without blocking, and survives a raising function", function()
	local db = sqlite.open(path "then.db", { sync = "off" })
	db:exec "CREATE TABLE e(n INTEGER UNIQUE)"
	local got = {}
	local co = coroutine.running()
	for i = 1, 5 do
		local n = i == 3 and 1 or i -- the third breaks UNIQUE
		t.eq(db:exec_then(function(ok, a, b)
			got[#got + 1] = { i = i, ok = ok, a = a, b = b }
			if i == 4 then
				error "a raising function"
			end
			if #got == 5 then
				skynet.wakeup(co)
			end
		end, "INSERT INTO e VALUES (?)", n), nil, "returns nothing at once")
	end
	t.eq(#got, 0, "no answer before the dispatch")
	skynet.wait(co)
	for i, g in ipairs(got) do
		t.eq(g.i, i, "order")
		if i == 3 then
			t.eq(g.ok, false, "the failed insert")
			t.ok(tostring(g.a):find("UNIQUE constraint failed", 1, true), tostring(g.a))
		else
			t.eq(g.ok, true, "insert " .. i)
			t.eq(g.a, 1, "changes of insert " .. i)
		end
	end
	t.eq(count(db, "e"), 4, "rows")
	t.raises("f must be a function", db.exec_then, db, "INSERT INTO e VALUES (9)")
	db:close()
	t.raises("sqlite: database is closed", db.exec_then, db, function() end, "SELECT 1")
end)

t.case("close completes pending requests; later calls raise", function()
	local db = sqlite.open(path "close.db", { sync = "off", wal = false })
	db:exec "CREATE TABLE c(n)"
	local base = threads()
	local wait = t.spawn(20, function(i)
		return db:exec("INSERT INTO c VALUES (?)", i)
	end)
	skynet.yield() -- the forks queue their inserts
	db:close()
	for i, r in ipairs(wait()) do
		t.ok(r[1], "pending insert " .. i .. ": " .. tostring(r[2]))
	end
	t.eq(threads(), base - 1, "the thread was joined")
	t.raises("sqlite: database is closed", db.exec, db, "SELECT 1")
	t.raises("sqlite: database is closed", db.query, db, "SELECT 1")
	t.raises("sqlite: database is closed", db.batch, db, { { "SELECT 1" } })
	t.eq(db:stats().requests, 23, "stats after close (open, create, 20 inserts, close)")
	db:close() -- a second close does nothing
	local again = sqlite.open(path "close.db")
	t.eq(count(again, "c"), 20, "every pending insert was committed")
	again:close()
end)

t.case("a service that exits with its db open leaks no thread", function()
	local base = threads()
	local owner = skynet.newservice "svc_sqlite_owner"
	skynet.call(owner, "lua", "open", path "owner.db")
	t.eq(threads(), base + 1, "one thread for the db")
	skynet.send(owner, "lua", "quit", 50)
	t.ok(t.wait_until(function()
		return threads() == base
	end, 6000), "the db thread ended: " .. threads() .. " threads, " .. base .. " before")
	local db = sqlite.open(path "owner.db")
	t.eq(count(db, "t"), 51, "the queued inserts were committed")
	db:close()
end)

t.case("the temporary folder is removed", function()
	collectgarbage()
	os.execute("rm -rf '" .. DIR .. "'")
	t.ok(not io.open(DIR .. "/types.db"), "removed")
end)

t.start()
