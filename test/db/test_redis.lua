-- skynet.db.redis against a private redis-server (test/node/test_db.sh):
-- login forms, every reply type, the command families, pipelines of 1,000
-- commands, many coroutines on one object, pub/sub with a server-side kill,
-- a malformed (RESP3) reply, and the server killed mid-request.
local skynet = require "skynet"
local sc = require "skynet.socketchannel"
local redis = require "skynet.db.redis"
local t = require "testlib"
local util = require "dbutil"

local function conf(extra)
	local c = { host = "127.0.0.1", port = util.redis_port, auth = util.redis_password }
	for k, v in pairs(extra or {}) do
		c[k] = v
	end
	return c
end

local function raises_sc(f, ...)
	local ok, err = pcall(f, ...)
	t.eq(ok, false, "call failed")
	t.eq(err, sc.error, "error object")
end

t.case("login: password, user + password, db selection, failures", function()
	util.check_env()
	local db = redis.connect(conf())
	t.eq(db:ping(), "PONG", "ping")
	t.eq(db[1] ~= nil, true, "db[1] is the channel")
	db:flushall()
	db:disconnect()
	local user = redis.connect(conf { username = "sky" })
	t.eq(user:acl("whoami"), "sky", "ACL user")
	user:disconnect()
	raises_sc(redis.connect, conf { auth = "wrong" })
	local noauth = redis.connect { host = "127.0.0.1", port = util.redis_port }
	t.raises("NOAUTH", noauth.get, noauth, "k")
	noauth:disconnect()
	local db3 = redis.connect(conf { db = 3 })
	db3:set("where", "three")
	local db0 = redis.connect(conf())
	t.eq(db0:get("where"), nil, "db 0 does not see db 3")
	t.eq(db3:get("where"), "three", "db 3")
	raises_sc(redis.connect, conf { db = 99999 })
	db3:disconnect()
	db0:disconnect()
	local ok, err = pcall(function()
		return db0:get("x")
	end)
	t.eq(ok, false, "disconnected object")
	t.ok(tostring(err):find("attempt to call a nil value", 1, true), tostring(err))
end)

t.case("reply types", function()
	local db = redis.connect(conf())
	t.eq(db:set("s", "v"), "OK", "status")
	t.eq(db:get("s"), "v", "bulk")
	t.eq(db:set("empty", ""), "OK", "set empty")
	t.eq(db:get("empty"), "", "$0 bulk")
	t.eq(db:get("missing"), nil, "nil bulk")
	t.eq(db:incr("n"), 1, "integer")
	t.eq(math.type(db:incr("n")), "integer", "integer subtype")
	t.eq(db:set("big", "9223372036854775806"), "OK", "set")
	t.eq(db:incr("big"), math.maxinteger, "max integer")
	t.eq(db:incrbyfloat("f", 1.5), "1.5", "float stays a string")
	t.eq(db:set("two", 2.0), "OK", "float argument")
	t.eq(db:get("two"), "2.0", "tostring of 2.0")
	local mget = db:mget("s", "missing", "empty")
	t.eq(mget[1], "v", "mget 1")
	t.eq(mget[2], nil, "mget hole")
	t.eq(mget[3], "", "mget 3")
	t.same(db:lrange("nolist", 0, -1), {}, "*0")
	t.eq(db:blpop("nolist", "0.05"), nil, "nil array (BLPOP timeout)")
	db:xadd("st", "1-1", "a", "1")
	db:xadd("st", "1-2", "b", "2", "c", "3")
	t.same(db:xrange("st", "-", "+"), { { "1-1", { "a", "1" } }, { "1-2", { "b", "2", "c", "3" } } },
		"nested arrays")
	t.raises("ERR unknown command 'FOOBAR'", db.foobar, db, "x")
	t.raises("WRONGTYPE", db.lpush, db, "s", "x")
	-- an array holding an error element raises the whole table
	db:multi()
	db:incr("s")
	db:set("t", "v")
	db:get("t")
	local ok, err = pcall(db.exec, db)
	t.eq(ok, false, "exec raises")
	t.eq(type(err), "table", "a table")
	t.ok(tostring(err[1]):find("not an integer", 1, true), "error element")
	t.eq(err[2], "OK", "second element")
	t.eq(err[3], "v", "third element")
	t.eq(db:get("s"), "v", "connection still usable")
	db:disconnect()
end)

t.case("commands as methods: argument forms and command families", function()
	local db = redis.connect(conf())
	t.eq(type(db.FooBaR), "function", "any name")
	t.eq(db:mset { "a", 1, "b", 2 }, "OK", "table argument")
	t.same(db:mget { "a", "b", n = 2 }, { "1", "2" }, "table with n")
	t.eq(db:exists("a"), true, "exists boolean")
	t.eq(db:exists("zz"), false, "exists false")
	t.eq(db:exists { "zz", "a" }, true, "exists of several keys")
	t.eq(db:EXISTS("a"), 1, "raw EXISTS")
	t.raises("redis: nil argument #2", db.set, db, "a", nil)
	t.eq(db:get("a"), "1", "still connected after a local nil error")
	-- hashes
	t.eq(db:hset("h", "f1", "v1", "f2", "v2"), 2, "hset")
	t.eq(db:hget("h", "f1"), "v1", "hget")
	local all = db:hgetall("h")
	t.eq(#all, 4, "hgetall")
	t.eq(db:hexists("h", "f2"), 1, "hexists integer")
	t.eq(db:hincrby("h", "n", 5), 5, "hincrby")
	-- lists
	t.eq(db:rpush("l", "x", "y", "z"), 3, "rpush")
	t.same(db:lrange("l", 0, -1), { "x", "y", "z" }, "lrange")
	t.eq(db:lpop("l"), "x", "lpop")
	-- sets
	t.eq(db:sadd("set", "m1", "m2"), 2, "sadd")
	t.eq(db:sismember("set", "m1"), true, "sismember")
	t.eq(db:sismember("set", "m3"), false, "sismember false")
	t.eq(db:scard("set"), 2, "scard")
	-- sorted sets
	db:zadd("z", 1, "one", 2.5, "two")
	t.same(db:zrange("z", 0, -1, "WITHSCORES"), { "one", "1", "two", "2.5" }, "zrange")
	t.eq(db:zscore("z", "two"), "2.5", "zscore")
	-- keys and expiry
	db:set("tmp", "x", "EX", 100)
	t.ok(db:ttl("tmp") > 0, "ttl")
	t.eq(db:expire("tmp", 0), 1, "expire")
	t.eq(db:get("tmp"), nil, "expired")
	local scan = db:scan(0, "COUNT", 100)
	t.eq(type(scan[2]), "table", "scan: cursor and keys")
	-- scripting, server
	t.same(db:eval("return {1, 'two', {3}}", 0), { 1, "two", { 3 } }, "eval")
	t.ok(db:info("server"):find("redis_version", 1, true), "info bulk")
	-- a large value
	local big = string.rep("0123456789", 100000)
	db:set("bigval", big)
	t.eq(db:get("bigval"), big, "1 MB value")
	-- binary safe
	local bin = "a\r\nb\0c$-1\r\n"
	db:set("bin", bin)
	t.eq(db:get("bin"), bin, "binary value")
	db:disconnect()
end)

t.case("pipeline: 1,000 commands, both forms", function()
	local db = redis.connect(conf())
	local ops = {}
	for i = 1, 1000 do
		ops[i] = { "set", "p" .. i, i }
	end
	t.eq(db:pipeline(ops), "OK", "last reply")
	ops = {}
	for i = 1, 1000 do
		ops[i] = { "get", "p" .. i }
	end
	ops[500] = { "lpush", "p1", "x" } -- a failing command in the middle
	local resp = {}
	t.eq(db:pipeline(ops, resp), resp, "returns resp")
	t.eq(#resp, 1000, "1,000 replies")
	t.eq(resp[1].ok, true, "first ok")
	t.eq(resp[1].out, "1", "first")
	t.eq(resp[1000].out, "1000", "last")
	t.eq(resp[500].ok, false, "error entry")
	t.ok(resp[500].out:find("WRONGTYPE", 1, true), "error text")
	t.raises("WRONGTYPE", db.pipeline, db, { { "get", "p1" }, { "lpush", "p1", "x" } })
	t.raises("pipeline is null", db.pipeline, db, {})
	db:disconnect()
end)

t.case("many coroutines share one connection, answers in call order", function()
	local db = redis.connect(conf())
	local wait = util.spawn(200, function(i)
		db:set("c" .. i, i)
		return db:get("c" .. i)
	end)
	for i, r in ipairs(wait()) do
		t.eq(r[2], tostring(i), "coroutine " .. i)
	end
	db:disconnect()
end)

t.case("watch: subscribe, psubscribe, messages, resubscribe after a kill", function()
	local w = redis.watch(conf())
	w:subscribe("news", "sport")
	w:psubscribe("chat.*")
	local db = redis.connect(conf())
	local function publish_until_heard(chan, msg)
		-- the subscription is confirmed asynchronously: publish until one listens
		for _ = 1, 200 do
			if db:publish(chan, msg) > 0 then
				return
			end
			skynet.sleep(1)
		end
		error("nobody subscribed to " .. chan)
	end
	local reader = util.spawn(1, function()
		local got = {}
		for i = 1, 3 do
			got[i] = table.pack(w:message())
		end
		return got
	end)
	publish_until_heard("news", "n1")
	publish_until_heard("sport", "s1")
	publish_until_heard("chat.room", "c1")
	local got = reader()[1][2]
	t.eq(got[1][1], "n1", "data")
	t.eq(got[1][2], "news", "channel")
	t.eq(got[1].n, 2, "channel message: two values")
	t.eq(got[2][1], "s1", "second channel")
	t.eq(got[3][1], "c1", "pattern data")
	t.eq(got[3][2], "chat.room", "pattern channel")
	t.eq(got[3][3], "chat.*", "pattern")
	-- kill the subscriber's connection on the server: message() raises
	-- sc.error, the next one reconnects and subscribes again
	reader = util.spawn(1, function()
		return w:message()
	end)
	skynet.sleep(5)
	db:client("kill", "type", "pubsub")
	local r = reader()[1]
	t.eq(r[1] == false and r[2] == sc.error, true, "waiting message() got sc.error")
	reader = util.spawn(1, function()
		return w:message()
	end)
	publish_until_heard("chat.x", "after")
	t.eq(reader()[1][2], "after", "resubscribed pattern")
	w:unsubscribe("news")
	w:disconnect()
	db:disconnect()
end)

t.case("a RESP3 reply fails every waiter and the connection recovers", function()
	local db = redis.connect(conf())
	local wait = util.spawn(5, function()
		return db:hello(3)
	end)
	for i, r in ipairs(wait()) do
		t.eq(r[1], false, "caller " .. i .. " failed")
	end
	t.ok(tostring(wait()[1][2]):find("redis: unsupported reply type", 1, true),
		tostring(wait()[1][2]))
	t.eq(db:ping(), "PONG", "reconnected, RESP2 again")
	db:disconnect()
end)

t.case("killing the server mid-request: every caller gets sc.error, then recovery", function()
	local db = redis.connect(conf())
	-- a BLPOP holds the connection; the other calls queue behind it
	local wait = util.spawn(20, function(i)
		if i == 1 then
			return db:blpop("never", 0)
		end
		return db:get("k" .. i)
	end)
	skynet.sleep(20)
	util.server "kill-redis"
	for i, r in ipairs(wait()) do
		t.eq(r[1] == false and r[2] == sc.error, true, "caller " .. i)
	end
	raises_sc(db.get, db, "k") -- no server: the reconnect fails at once
	util.server "start-redis"
	t.eq(db:ping(), "PONG", "reconnected, AUTH again")
	db:disconnect()
end)

t.start()
