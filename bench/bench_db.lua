-- Database driver benchmarks (bench/bench_db.sh starts the private servers
-- and passes their ports in the environment). One service, real time:
--   db.redis.get_per_s           GETs from 50 coroutines on one connection
--                                (their requests travel pipelined)
--   db.redis.get_serial_per_s    GETs from one coroutine, one at a time
--   db.redis.pipeline_get_per_s  GETs sent as pipeline() batches of 100
--   db.mysql.point_select_per_s  primary-key SELECTs, one connection, one
--                                coroutine, one at a time
local skynet = require "skynet"
local redis = require "skynet.db.redis"
local mysql = require "skynet.db.mysql"

local SECONDS <const> = tonumber(os.getenv "DB_BENCH_SECONDS") or 2

local function bench(name, workers, body)
	local count, stop = 0, false
	local done, token = 0, {}
	local start = skynet.now()
	skynet.timeout(SECONDS * 100, function()
		stop = true
	end)
	for w = 1, workers do
		skynet.fork(function()
			local i = 0
			while not stop do
				i = i + 1
				local n = body(w, i) -- yields: add after it returns
				count = count + n
			end
			done = done + 1
			if done == workers then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
	local elapsed = (skynet.now() - start) / 100
	print(string.format("BENCH name=%s value=%.0f unit=ops/s", name, count / elapsed))
end

skynet.start(function()
	local rconf = { host = "127.0.0.1", port = tonumber(os.getenv "DB_REDIS_PORT"),
		auth = os.getenv "DB_REDIS_PASSWORD" }
	local db = redis.connect(rconf)
	db:set("key:000000000001", string.rep("x", 3)) -- what redis-benchmark -t get reads
	bench("db.redis.get_per_s", 50, function()
		db:get "key:000000000001"
		return 1
	end)
	bench("db.redis.get_serial_per_s", 1, function()
		db:get "key:000000000001"
		return 1
	end)
	local ops = {}
	for i = 1, 100 do
		ops[i] = { "GET", "key:000000000001" }
	end
	bench("db.redis.pipeline_get_per_s", 1, function()
		db:pipeline(ops, {})
		return 100
	end)
	db:disconnect()

	local m = mysql.connect { host = "127.0.0.1", port = tonumber(os.getenv "DB_MYSQL_PORT"),
		user = "sky", password = os.getenv "DB_MYSQL_PASSWORD", database = "skytest" }
	m:query "CREATE TABLE bench (id INT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB"
	m:query "INSERT INTO bench SELECT seq, CONCAT('value', seq) FROM seq_1_to_10000"
	bench("db.mysql.point_select_per_s", 1, function(_, i)
		local r = m:query("SELECT v FROM bench WHERE id = " .. (i % 10000 + 1))
		assert(r[1].v)
		return 1
	end)
	m:disconnect()
	skynet.abort(0)
end)
