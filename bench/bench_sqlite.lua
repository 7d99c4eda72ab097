-- skynet.db.sqlite write rate: WORKERS coroutines of one service each insert
-- small rows (an integer key, a 32-byte text) one exec at a time, for
-- SECONDS of real time, into a WAL database in a folder from mktemp -d
-- (removed at the end). The database thread groups what is queued into one
-- transaction (group commit), so the figure counts durable inserts per
-- second. Prints
--   BENCH name=sqlite.insert_per_s       (sync = "normal")
--   BENCH name=sqlite.insert_full_per_s  (sync = "full": an fsync per commit)
-- and a "bench:" line each with the commits and the mean group size, then
-- aborts the node.
local skynet = require "skynet"
local sqlite = require "skynet.db.sqlite"
local report = require "bench_report"
require "skynet.manager"

local WORKERS <const> = 200
local SECONDS <const> = tonumber(os.getenv "SQLITE_BENCH_SECONDS") or 2

local function tmpdir()
	local p = assert(io.popen "mktemp -d")
	local dir = p:read "l"
	p:close()
	return assert(dir, "mktemp -d")
end

local function run(name, dir, sync)
	local db = sqlite.open(dir .. "/" .. sync .. ".db", { sync = sync })
	db:exec "CREATE TABLE r(id INTEGER PRIMARY KEY, due INTEGER, body TEXT)"
	local body = string.rep("x", 32)
	local before = db:stats()
	local count, stop, done, token = 0, false, 0, {}
	local start = skynet.hpc()
	skynet.timeout(SECONDS * 100, function()
		stop = true
	end)
	for _ = 1, WORKERS do
		skynet.fork(function()
			while not stop do
				db:exec("INSERT INTO r(due, body) VALUES (?, ?)", count, body)
				count = count + 1
			end
			done = done + 1
			if done == WORKERS then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
	local elapsed = (skynet.hpc() - start) / 1e9
	local commits = db:stats().commits - before.commits
	db:close()
	report(name, count / elapsed, "inserts/s")
	print(string.format("bench: sqlite sync=%s %d inserts, %d commits, %.1f inserts per commit",
		sync, count, commits, count / math.max(commits, 1)))
end

skynet.start(function()
	local dir = tmpdir()
	local ok, err = xpcall(function()
		run("sqlite.insert_per_s", dir, "normal")
		run("sqlite.insert_full_per_s", dir, "full")
	end, debug.traceback)
	os.execute("rm -rf '" .. dir .. "'")
	if not ok then
		print("bench: sqlite benchmark failed: " .. tostring(err))
	end
	skynet.abort()
end)
