-- Helper service for test_sqlite: owns a database and exits without closing
-- it, with requests still queued, to check that the database thread ends
-- by itself and the answers to the gone service are freed.
local skynet = require "skynet"
local sqlite = require "skynet.db.sqlite"

local CMD = {}
local db

function CMD.open(path)
	db = sqlite.open(path, { sync = "normal" })
	db:exec "CREATE TABLE IF NOT EXISTS t(n INTEGER)"
	db:exec("INSERT INTO t VALUES (?)", 0)
end

-- Queues n inserts from forks (never waited for), then exits.
function CMD.quit(n)
	for i = 1, n do
		skynet.fork(function()
			db:exec("INSERT INTO t VALUES (?)", i)
		end)
	end
	skynet.fork(skynet.exit)
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
end)
