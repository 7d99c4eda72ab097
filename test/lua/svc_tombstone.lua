-- Helper of test/node/test_tombstone.sh: the start service of a node that
-- dies on purpose. The config key tomb_mode says how:
--   "segv", "abort", "fpe", "ill": launch svc_tombstone_victim and call it
--     with "fault", mode; the victim calls the test-only C module tombtest
--     (test/luaclib/lua-tombtest.c), which raises the signal.
--   "idle": write "tombstone: idle" to stderr and wait; the test sends the
--     signal from outside.
--   "exit": stop the node cleanly (no tombstone may be written).
local skynet = require "skynet"
require "skynet.manager"

local mode = assert(skynet.getenv "tomb_mode")

skynet.start(function()
	if mode == "idle" then
		io.stderr:write("tombstone: idle\n")
		return
	end
	if mode == "exit" then
		skynet.abort()
		return
	end
	local victim = skynet.newservice("svc_tombstone_victim")
	skynet.call(victim, "lua", "fault", mode)
end)
