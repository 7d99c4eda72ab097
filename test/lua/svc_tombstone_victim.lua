-- Helper of test/node/test_tombstone.sh: the service that faults. Its "fault"
-- command writes the message's source and session to stderr (unbuffered,
-- so the line is out before the process dies), then calls the test-only C
-- module tombtest two Lua functions deep; the test finds these functions
-- and their lines in the tombstone.
local skynet = require "skynet"
local tombtest = require "tombtest"

local function crash_deep(mode)
	if mode == "segv" then
		tombtest.segv()
	else
		tombtest[mode]()
	end
end

local function handle_fault(mode)
	crash_deep(mode)
end

skynet.start(function()
	skynet.dispatch("lua", function(session, source, cmd, mode)
		assert(cmd == "fault", cmd)
		io.stderr:write(string.format("tombstone: fault source=:%08x session=%d\n", source, session))
		handle_fault(mode)
	end)
end)
