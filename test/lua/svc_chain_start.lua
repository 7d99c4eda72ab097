-- Helper: its start function calls a service whose handler raises, so the
-- launch fails; newservice's error carries that handler's error, two hops away.
local skynet = require "skynet"

skynet.start(function()
	local echo = skynet.newservice("svc_echo")
	skynet.call(echo, "lua", "error", "svc_chain_start: handler failure on purpose")
end)
