-- The callee of test_trace. svc_trace_probe raw: registers the trace
-- protocol itself, so it sees the PTYPE_TRACE messages that come before
-- requests (the kernel then attaches nothing); `seen` returns and forgets
-- their payloads. svc_trace_probe: an ordinary service; `ctx` returns the
-- trace id and span id its request runs in, `fail` raises, a `ctx_send` or
-- `client` message records them for `last`.
local skynet = require "skynet"
local tracing = require "skynet.tracing"

local mode = ...
local seen = {}
local last

skynet.register_protocol {
	name = "client", id = skynet.PTYPE_CLIENT, unpack = skynet.tostring,
	dispatch = function()
		last = table.pack(tracing.id())
	end,
}

if mode == "raw" then
	skynet.register_protocol {
		name = "trace", id = skynet.PTYPE_TRACE, unpack = skynet.tostring,
		dispatch = function(_, _, payload)
			seen[#seen + 1] = payload
		end,
	}
end

local CMD = {}

function CMD.ctx()
	return tracing.id()
end

function CMD.ctx_send()
	last = table.pack(tracing.id())
end

function CMD.last()
	return last and table.unpack(last, 1, last.n)
end

function CMD.fail()
	error("svc_trace_probe: failing on purpose")
end

function CMD.seen()
	local s = seen
	seen = {}
	return s
end

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, ...)
		local f = CMD[cmd]
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end)
