-- The callee of test_trace. svc_trace_probe: `ctx` returns the trace id
-- and span id its request runs in, `fail` raises, `leaf` returns its
-- argument, `relay` calls `ctx` of another, a `ctx_send` or `client`
-- message records them for `last`. svc_trace_probe raw: also keeps, for
-- every message it serves, the trace id it ran in ("-": none); `seen`
-- returns and forgets them. svc_trace_probe filter: a skynet.filter makes
-- each `alias` request a `leaf` one.
local skynet = require "skynet"
local tracing = require "skynet.tracing"

local mode = ...
local seen = {}
local last

local function record()
	last = table.pack(tracing.id())
	if mode == "raw" then
		seen[#seen + 1] = last[1] or "-"
	end
end

skynet.register_protocol {
	name = "client", id = skynet.PTYPE_CLIENT, unpack = skynet.tostring,
	dispatch = record,
}

local CMD = {}

function CMD.ctx()
	record()
	return tracing.id()
end

CMD.ctx_send = record

function CMD.last()
	if last then
		return table.unpack(last, 1, last.n)
	end
end

function CMD.fail()
	error("svc_trace_probe: failing on purpose")
end

-- Nothing read of the trace: with trace_lines = false, the request's span
-- stays pending (kernel trace.c) until it ends.
function CMD.leaf(x)
	return x
end

-- A request that waits on a call of its own: its span is settled at the send.
function CMD.relay(target)
	return skynet.call(target, "lua", "ctx")
end

function CMD.seen()
	local s = seen
	seen = {}
	return s
end

local function start()
	skynet.dispatch("lua", function(session, _, cmd, ...)
		local f = CMD[cmd]
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end

if mode == "filter" then -- a filter turns an `alias` request into a `leaf` one
	require "skynet.manager"
	skynet.filter(function(ptype, msg, sz, session, source)
		if ptype == skynet.PTYPE_LUA then
			local args = table.pack(skynet.unpack(msg, sz))
			if args[1] == "alias" then
				return ptype, skynet.packstring("leaf", table.unpack(args, 2, args.n)), nil, session, source
			end
		end
		return ptype, msg, sz, session, source
	end, start)
else
	skynet.start(start)
end
