-- Helpers of the database tests (a library: require "dbutil"): the private
-- servers test/node/test_db.sh started (their ports and passwords come in
-- the environment) and the commands that kill and restart them.

local M = {}

M.dir = os.getenv "DB_DIR"
M.redis_port = tonumber(os.getenv "DB_REDIS_PORT")
M.redis_password = os.getenv "DB_REDIS_PASSWORD"
M.mysql_port = tonumber(os.getenv "DB_MYSQL_PORT")
M.mysql_password = os.getenv "DB_MYSQL_PASSWORD"

function M.check_env()
	assert(M.dir and M.redis_port and M.mysql_port,
		"DB_DIR, DB_REDIS_PORT, DB_MYSQL_PORT unset: run test/node/test_db.sh")
end

-- servers.sh <what> (kill-redis, start-mysql, ...). Blocks this worker
-- while it runs (seconds at most): tests only.
function M.server(what)
	local ok = os.execute(string.format("sh test/db/servers.sh %s '%s'", what, M.dir))
	assert(ok, "servers.sh " .. what .. " failed")
end

-- Starts n forks of f(i); see testlib.spawn.
M.spawn = require("testlib").spawn

return M
