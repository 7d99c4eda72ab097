-- skynet.request / select, loaded on first use.
--
--   local r = skynet.request { addr, "lua", ... } { addr2, "lua", ... }
--   for req, resp in r:select(timeout) do ... end
--
-- Every request is sent at once when select starts, with S.call_handler: the
-- kernel hands its reply to a handler table that records the reply and wakes
-- the selecting coroutine, so the coroutine may make other calls inside the
-- loop without mixing up replies. Requests whose send failed come first with
-- resp nil; then each request as its reply arrives, resp = table.pack of the
-- reply or false on error. Leaving the loop early (break, error) closes the
-- object: outstanding replies are dropped when they come.
local skynet = require "skynet"
local S = require "skynet.private"

local tpack = table.pack
local tunpack = table.unpack
local pcall = pcall

local state = setmetatable({}, { __mode = "k" }) -- request object -> select state

local request = {}
request.__index = request

function request:add(obj)
	if type(obj) ~= "table" then
		error("skynet.request: request table expected", 2)
	end
	if state[self] ~= nil then
		error("skynet.request: add after select", 2)
	end
	self[#self + 1] = obj
	return self
end

request.__call = request.add

local function unpack_reply(p, msg, sz)
	return tpack(p.unpack(msg, sz))
end

local function on_reply(handler, session, ok, msg, sz)
	local st = handler.st
	local req = st.sessions[session]
	if req == nil then
		return
	end
	st.sessions[session] = nil
	st.pending = st.pending - 1
	local resp = false
	if ok then
		local good, r = pcall(unpack_reply, S.protocol(req[2]), msg, sz)
		if good then
			resp = r
		end
	end
	st.rt = st.rt + 1
	st.ready[st.rt] = req
	st.resps[st.rt] = resp
	skynet.wakeup(st)
end

local function send_one(req, handler)
	local p = S.protocol(req[2])
	if p == nil then
		error("unknown protocol")
	end
	local addr = req[1]
	return S.call_handler(addr, p.id, handler, p.pack(tunpack(req, 3, req.n or #req)))
end

function request:close()
	local st = state[self]
	if st == nil or st.closed then
		return
	end
	st.closed = true
	for session in pairs(st.sessions) do
		S.drop_handler(session, st.handler)
	end
	st.sessions = {}
	st.pending = 0
	if st.timer then
		skynet.killthread(st.timer)
		st.timer = nil
	end
end

request.__close = request.close

function request:select(timeout)
	if state[self] ~= nil then
		error("skynet.request: select can be called only once", 2)
	end
	local st = {
		sessions = {}, ready = {}, resps = {}, rh = 1, rt = 0, pending = 0, closed = false,
	}
	st.handler = { on_reply, st = st }
	state[self] = st
	local failed = {}
	for _, req in ipairs(self) do
		local ok, session = pcall(send_one, req, st.handler)
		if ok then
			st.sessions[session] = req
			st.pending = st.pending + 1
		else
			failed[#failed + 1] = req
		end
	end
	if timeout and st.pending > 0 then
		st.timer = skynet.timeout(timeout, function()
			st.timer = nil
			if st.pending > 0 then
				self.timeout = true
				st.expired = true
				skynet.wakeup(st)
			end
		end)
	end
	local fi = 0
	local function next_reply()
		fi = fi + 1
		local req = failed[fi]
		if req then
			return req, nil
		end
		while true do
			local i = st.rh
			if i <= st.rt then
				st.rh = i + 1
				req = st.ready[i]
				local resp = st.resps[i]
				st.ready[i] = nil
				st.resps[i] = nil
				return req, resp
			end
			if st.pending == 0 or st.expired or st.closed then
				self:close()
				return nil
			end
			skynet.wait(st)
		end
	end
	return next_reply, nil, nil, self
end

function skynet.request(obj)
	local r = setmetatable({}, request)
	if obj then
		return r:add(obj)
	end
	return r
end

return true
