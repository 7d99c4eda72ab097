-- Helper service for the smoke tests (test_smoke_*.lua); not a test itself.
-- Optional argument: a global name to register after `delay` cs.
local skynet = require "skynet"
require "skynet.manager"

local gname, delay = ...
local CMD = {}
local held = {}

function CMD.echo(...)
	return ...
end

function CMD.sleep_echo(ti, ...)
	skynet.sleep(ti)
	return ...
end

function CMD.fail()
	error("smoke_peer: failure on purpose")
end

-- Keeps the reply; answered (or failed) later.
function CMD.hold()
	held[#held + 1] = skynet.response()
	return held
end

function CMD.tracetag()
	return skynet.tracetag()
end

-- Forced tracing: each request of the lua protocol gets a tag (flag true).
function CMD.traceproto(flag)
	skynet.traceproto("lua", flag)
	return true
end

function CMD.exit()
	skynet.exit()
end

skynet.info_func(function(...)
	return "peer info", ...
end)

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = assert(CMD[cmd], cmd)
		local r = table.pack(f(...))
		if r[1] ~= held then
			skynet.retpack(table.unpack(r, 1, r.n))
		end
	end)
	if gname then
		skynet.timeout(tonumber(delay) or 0, function()
			skynet.register(gname)
		end)
	end
end)
