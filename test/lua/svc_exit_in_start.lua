-- Helper: exits inside its start function, so newservice returns nil.
local skynet = require "skynet"

skynet.start(function()
	skynet.exit()
end)
