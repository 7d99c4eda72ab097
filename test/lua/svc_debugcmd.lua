-- Helper: adds the debug commands HELLO (one value) and PAIR (two values,
-- the second "QUIT"); has no info_func.
local skynet = require "skynet"
local debug_ext = require "skynet.debug"

debug_ext.reg_debugcmd("HELLO", function(who)
	skynet.retpack("hello " .. tostring(who))
end)

debug_ext.reg_debugcmd("PAIR", function()
	skynet.retpack("first", "QUIT")
end)

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		skynet.retpack(cmd == "ping" and "pong" or nil)
	end)
end)
