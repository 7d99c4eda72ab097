-- Helper: records the order of main chunk, skynet.init functions and start.
local skynet = require "skynet"

local order = { "main" }

skynet.init(function()
	order[#order + 1] = "init1"
end)

skynet.init(function()
	order[#order + 1] = "init2"
end)

skynet.start(function()
	order[#order + 1] = "start"
	skynet.dispatch("lua", function(_, _, cmd)
		if cmd == "order" then
			skynet.retpack(table.concat(order, ","))
		else
			error("svc_init_order: unknown command (" .. tostring(cmd) .. ")")
		end
	end)
end)
