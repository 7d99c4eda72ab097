-- Helper of test/node/test_reminder_crash.sh, the start service of a real-
-- time node with reminder_store set. It is also the target (.rt_crash):
-- each delivery is appended to CRASH_DIR/fired.log ("key due fired_at
-- phase", flushed at once, so a SIGKILL loses none of it).
--   crash_mode = "load": 8 coroutines set reminders (keys k<n>, due 0.05 to
--     2 s ahead) as fast as the store takes them; each set that returned is
--     appended to set.log ("key due"). Runs until the node is killed.
--   crash_mode = "check": sets nothing; once the store holds nothing
--     pending (or after 20 s) it writes "check done pending=N" to stdout
--     and stops the node.
local skynet = require "skynet"
require "skynet.manager"
local core = require "skynet.core"
local reminder = require "skynet.reminder"

local dir = assert(skynet.getenv "crash_dir")
local mode = skynet.getenv "crash_mode"
local phase = mode == "load" and 1 or 2

local fired = assert(io.open(dir .. "/fired.log", "a"))

local CMD = {}

function CMD.reminder(key, _, info)
	fired:write(string.format("%s %.6f %.6f %d\n", key, info.due, core.walltime(), phase))
	fired:flush()
	return true
end

local function setter(id, log)
	local n = 0
	while true do
		n = n + 1
		local key = string.format("k%d.%d", id, n)
		local after = 0.05 + math.random() * 1.95
		local due = core.walltime() + after
		reminder.set(key, due, ".rt_crash", n)
		log:write(string.format("%s %.6f\n", key, due))
		log:flush()
	end
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
	skynet.register ".rt_crash"
	if mode == "load" then
		local log = assert(io.open(dir .. "/set.log", "a"))
		for id = 1, 8 do
			skynet.fork(setter, id, log)
		end
		skynet.error "crash: loading"
		return
	end
	skynet.fork(function()
		local deadline = skynet.now() + 2000
		local s = reminder.stats()
		while (s.pending > 0 or s.inflight > 0) and skynet.now() < deadline do
			skynet.sleep(10)
			s = reminder.stats()
		end
		skynet.sleep(50) -- acknowledgements of the last runs
		print(string.format("check done pending=%d", reminder.stats().pending))
		skynet.abort(0)
	end)
end)
