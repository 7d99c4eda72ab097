-- Helper service for test_datacenter: datacenter calls made from another
-- service. "wait" is sent: it blocks in datacenter.wait and then reports
-- { tag = tag, ok = ok, value = v } to `report` as a testlib mark.
local skynet = require "skynet"
local datacenter = require "skynet.datacenter"

local CMD = {}

function CMD.wait(report, tag, ...)
	local ok, v = pcall(datacenter.wait, ...)
	skynet.send(report, "lua", "mark", { tag = tag, ok = ok, value = v })
end

function CMD.set(...)
	return table.pack(datacenter.set(...))
end

function CMD.get(...)
	return datacenter.get(...)
end

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, ...)
		local f = assert(CMD[cmd], "svc_datacenter: unknown command")
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end)
