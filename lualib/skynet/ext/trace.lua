-- skynet.trace and friends, loaded on first use by skynet.lua.
--
-- A traced coroutine carries a tag (a trace id, 32 hex digits, for a trace
-- begun here) and a span. Each call, send and redirect it makes carries the
-- tag, the trace id and its span id in a trailer of the message; the callee
-- begins a child span (the kernel does that part: lualib-src/kernel/trace.c).
-- skynet.tracecall sends skynet's PTYPE_TRACE message before the request.
-- core.trace writes the lines.
local skynet = require "skynet"
local c = require "skynet.core"
local S = require "skynet.private"

local PTYPE_TRACE <const> = 12

function skynet.trace(info)
	S.set("tracing", true)
	if S.tag() == false then
		return -- tracing forced off for this coroutine
	end
	local tag = S.new_tag()
	S.trace_begin(tag, nil, info ~= nil and tostring(info) or nil)
	if info then
		c.trace(tag, "trace " .. tostring(info))
	else
		c.trace(tag, "trace")
	end
end

function skynet.tracetag()
	return S.tag() or nil
end

skynet.tracelog = c.trace

function skynet.traceproto(name, flag)
	local p = S.protocol(name)
	if p == nil then
		error(string.format("skynet.traceproto: unknown protocol (%s)", tostring(name)), 2)
	end
	p.trace = flag
	S.set("tracing", true)
end

function skynet.tracecall(tag, addr, typename, msg, sz)
	local p = S.protocol(typename)
	if p == nil then
		error(string.format("skynet.tracecall: unknown protocol (%s)", tostring(typename)), 2)
	end
	c.trace(tag, "tracecall begin")
	c.send(addr, PTYPE_TRACE, 0, tag)
	local session = S.new_call(addr, p.id, msg, sz)
	local rmsg, rsz = S.yield_call(addr, session)
	c.trace(tag, "tracecall end")
	return rmsg, rsz
end

function skynet.trace_timeout(on)
	S.set("trace_timeouts", on and true or false)
end

return true
