-- Helper: a skynet.init function raises before start runs.
local skynet = require "skynet"

skynet.init(function()
	error("svc_init_error: init failure on purpose")
end)

skynet.start(function() end)
