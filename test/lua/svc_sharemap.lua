-- Helper service for test_sharemap: a sharemap reader or writer living in
-- another service than the test. The schema is already in sproto slot 0
-- (registered by the test: slots are process-wide).
local skynet = require "skynet"
local sharemap = require "skynet.sharemap"

local reader, writer
local CMD = {}

function CMD.reader(typename, ptr)
	reader = sharemap.reader(typename, ptr)
end

function CMD.field(k)
	return reader[k]
end

function CMD.update()
	return table.pack(reader:update())
end

function CMD.writer(typename, t)
	writer = sharemap.writer(typename, t)
	return writer:copy()
end

function CMD.set(k, v)
	writer[k] = v
	writer:commit()
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = assert(CMD[cmd], "svc_sharemap: unknown command")
		skynet.retpack(f(...))
	end)
end)
