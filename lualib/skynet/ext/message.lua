-- The rarer message functions of the skynet table, loaded
-- on first use by skynet.lua: response, ignoreret, context, rawcall, yield
-- and the hooks for unknown messages (redirect and rawsend are the kernel's:
-- they carry a trace). They ask the
-- kernel (skynet.private, S): S.request gives the request the running
-- coroutine serves, S.owe and S.owes keep the replies detached responses owe,
-- S.protocol finds a protocol.
local skynet = require "skynet"
local c = require "skynet.core"
local S = require "skynet.private"

local PTYPE_RESPONSE <const> = 1
local PTYPE_ERROR <const> = 7

local c_send = c.send
local protocol = S.protocol
local request = S.request
local owe, owes = S.owe, S.owes

-- protocol(typename) found none: raise at the caller of the skynet function.
local function unknown_protocol(typename)
	error(string.format("skynet: unknown protocol (%s)", tostring(typename)), 3)
end

function skynet.dispatch_unknown_request(f)
	return S.set("unknown_request", f)
end

function skynet.dispatch_unknown_response(f)
	return S.set("unknown_response", f)
end

function skynet.rawcall(addr, typename, msg, sz)
	local p = protocol(typename) or unknown_protocol(typename)
	return S.yield_call(addr, S.new_call(addr, p.id, msg, sz))
end

local function noop_response() end

function skynet.response(pack)
	pack = pack or c.pack
	local session, source = request(true)
	if session == nil then
		error("no session", 2)
	end
	if session == 0 then
		return noop_response
	end
	local function resp(ok, ...)
		if ok == "TEST" then
			return owes(resp)
		end
		if pack == nil then
			error("Can't response more than once", 2)
		end
		local r = false
		if owes(resp, true) then
			if ok then
				r = c_send(source, PTYPE_RESPONSE, session, pack(...))
				if r == false then
					c_send(source, PTYPE_ERROR, session, "")
				end
			else
				-- resp(false, reason): the text rides in the error, the caller's
				-- kernel keeps it (skynet ignores an error's payload)
				local reason = ...
				r = c_send(source, PTYPE_ERROR, session, type(reason) == "string" and reason or "")
			end
			r = r ~= nil and r ~= false
		end
		pack = nil
		return r
	end
	owe(resp, source)
	return resp
end

function skynet.ignoreret()
	request(true)
end

function skynet.context()
	return request(false)
end

function skynet.yield()
	return skynet.sleep(0)
end

return skynet
