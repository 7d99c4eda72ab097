-- Helper: adds a debug command HELLO; has no info_func.
local skynet = require "skynet"
local debug_ext = require "skynet.debug"

debug_ext.reg_debugcmd("HELLO", function(who)
	skynet.retpack("hello " .. tostring(who))
end)

skynet.start(function()
	skynet.dispatch("lua", function(session, source, cmd)
		skynet.retpack(cmd == "ping" and "pong" or nil)
	end)
end)
