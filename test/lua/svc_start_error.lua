-- Helper: its start function raises, so the launch fails.
local skynet = require "skynet"

skynet.start(function()
	error("svc_start_error: start failure on purpose")
end)
