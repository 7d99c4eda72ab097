-- Helper of test/node/test_reminder_redis.sh (two nodes on one Redis): the
-- start service of a real-time node, and the target of its runs (.rr):
-- each delivery is appended to RR_DIR/fired.<rr_node>.log ("key due
-- fired_at payload", flushed at once, so a SIGKILL loses none of it).
--   rr_node = "a": 8 coroutines set 200 reminders r<n> due 1 to 4 s ahead
--     (each set that returned goes to set.log, "key due"), then 10 more,
--     x<n>, due 1 to 1.5 s ahead with the payload "old"; then it prints
--     "rr: a set" and creates RR_DIR/a.ready. It runs until killed.
--   rr_node = "b": once a.ready exists it sets x1..x5 again (payload "new",
--     due 0.05 s later) and cancels x6..x10, which node a holds, then
--     prints "rr: b crossed". It runs until stopped.
--   rr_node = "a2": node a started again; it only fires.
local skynet = require "skynet"
require "skynet.manager"
local core = require "skynet.core"
local reminder = require "skynet.reminder"

local dir = assert(skynet.getenv "rr_dir")
local node = assert(skynet.getenv "rr_node")
local fired = assert(io.open(string.format("%s/fired.%s.log", dir, node), "a"))

local CMD = {}

function CMD.reminder(key, payload, info)
	fired:write(string.format("%s %.6f %.6f %s\n", key, info.due, core.walltime(), tostring(payload)))
	fired:flush()
	return true
end

local function exists(path)
	local f = io.open(path)
	if f then
		f:close()
	end
	return f ~= nil
end

local function set_all(log)
	local n, running, token = 0, 8, {}
	for _ = 1, 8 do
		skynet.fork(function()
			while n < 200 do
				n = n + 1
				local key = "r" .. n
				local due = core.walltime() + 1 + math.random() * 3
				reminder.set(key, due, ".rr", "r")
				log:write(string.format("%s %.6f\n", key, due))
				log:flush()
			end
			running = running - 1
			if running == 0 then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
	local cross_due = {}
	for i = 1, 10 do
		cross_due[i] = core.walltime() + 1 + math.random() * 0.5
		reminder.set("x" .. i, cross_due[i], ".rr", "old")
	end
	local f = assert(io.open(dir .. "/cross.log", "w"))
	for i = 1, 10 do
		f:write(string.format("x%d %.6f\n", i, cross_due[i]))
	end
	f:close()
	print "rr: a set"
	assert(io.open(dir .. "/a.ready", "w")):close()
end

local function cross()
	while not exists(dir .. "/a.ready") do
		skynet.sleep(1)
	end
	for i = 1, 5 do
		local r = reminder.get("x" .. i)
		reminder.set("x" .. i, r.due + 0.05, ".rr", "new")
	end
	for i = 6, 10 do
		reminder.cancel("x" .. i)
	end
	print "rr: b crossed"
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
	skynet.register ".rr"
	if node == "a" then
		skynet.fork(set_all, assert(io.open(dir .. "/set.log", "a")))
	elseif node == "b" then
		skynet.fork(cross)
	end
end)
