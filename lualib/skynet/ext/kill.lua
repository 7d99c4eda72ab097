-- skynet.exit, skynet.killthread and skynet.term, loaded on
-- first use.
local skynet = require "skynet"
local c = require "skynet.core"
local S = require "skynet.private"

local PTYPE_RESPONSE <const> = 1
local PTYPE_ERROR <const> = 7

local coroutine_close = coroutine.close
local coroutine_status = coroutine.status
-- Lets the heap pass skynet.memlimit by a bounded reserve (snlua), so that
-- exiting never fails for want of memory. Absent under another host.
local exit_reserve = debug.getregistry()["snlua.exit_reserve"]

-- Forgets the session a killed coroutine or timeout waits on: cancels its
-- timer, or marks it BREAK when a message may still come for it.
local function drop_session(session)
	local waiting, timers = S.waiting, S.timers
	if timers[session] then
		timers[session] = nil
		S.set("timer_gone")
		if not c.timeout_cancel(session) then
			waiting[session] = "BREAK" -- fired already: drop its message
		end
		S.timeout_tb[session] = nil
		return
	end
	local v = waiting[session]
	if v == nil or v == "BREAK" then
		return
	end
	local late
	if S.watching[session] ~= nil then
		late = true -- a call: its reply or error is still to come
	else
		local wait_only = false
		for token, s in pairs(S.sleep_session) do
			if s == session or s == -session then
				S.sleep_session[token] = nil
				wait_only = s < 0
				break
			end
		end
		for _, s in pairs(S.wakeup_queue) do -- woken already, not resumed yet
			if s == -session then
				wait_only = true
			end
		end
		for token, s in pairs(S.woken) do -- a second wakeup must not report it
			if s == session or s == -session then
				S.woken[token] = nil
			end
		end
		-- a wait (genid session) never gets a message; a sleep's timer may
		late = not wait_only and not c.timeout_cancel(session)
	end
	waiting[session] = late and "BREAK" or nil
	S.watching[session] = nil
end

local function timer_session(obj)
	return (string.unpack("<j", c.packstring(obj), 2))
end

-- Finds what a killthread pattern names: tostring(co) of a blocked or
-- forked coroutine (substring), or the exact tostring of a timeout object.
local function find_thread(pattern)
	local hex = pattern:match "^userdata: 0x(%x+)$"
	if hex then
		local s = tonumber(hex, 16)
		if S.timers[s] then
			return S.timer_object(s)
		end
	end
	for _, v in pairs(S.waiting) do
		if type(v) == "thread" and tostring(v):find(pattern, 1, true) then
			return v
		end
	end
	for _, co in pairs(S.fork_queue) do
		if co and tostring(co):find(pattern, 1, true) then
			return co
		end
	end
end

function skynet.killthread(co)
	if type(co) == "string" then
		co = find_thread(co)
	end
	local t = type(co)
	if t == "userdata" then
		local session = timer_session(co)
		if S.timers[session] then
			drop_session(session)
			return co
		end
		co = S.fired[session] -- fired, and blocked since
		if co == nil then
			return nil
		end
	elseif t ~= "thread" then
		return nil
	end
	for i, f in pairs(S.fork_queue) do
		if f == co then
			S.fork_queue[i] = false
			S.fork_args[i] = nil
			return co
		end
	end
	if coroutine_status(co) ~= "suspended" then
		return nil
	end
	local session
	for s, v in pairs(S.waiting) do
		if v == co then
			session = s
			break
		end
	end
	if session == nil then
		return nil
	end
	drop_session(session)
	local rs, source = S.req_session[co], S.req_source[co]
	if rs and rs ~= 0 and source then
		c.send(source, PTYPE_ERROR, rs, "")
	end
	S.req_session[co] = nil
	S.req_source[co] = nil
	S.co_finished(co)
	coroutine_close(co)
	return co
end

function skynet.term(addr)
	S.error_dispatch(0, addr)
end

local function clear(t)
	for k in pairs(t) do
		t[k] = nil
	end
end

-- Exit in nine steps (numbered below): 1 drop pending forks; 2 leave the
-- launcher's list; 3 answer every request still being served with an error
-- (and forget waits and timers); 4 close the suspended coroutines, so their
-- to-be-closed variables run; 5 mark detached response closures dead; 6 send
-- an error with session 0 ("this service is gone") to every service it has
-- calls pending with; 7 from then on answer each incoming request with an
-- error; 8 retire the handle (EXIT); 9 leave the running coroutine for good.
function skynet.exit()
	if exit_reserve then
		exit_reserve()
	end
	S.exited = true
	clear(S.fork_queue) -- 1
	clear(S.fork_args)
	skynet.send(".launcher", "lua", "REMOVE", skynet.self(), false) -- 2
	local req_session, req_source = S.req_session, S.req_source
	for co, session in pairs(req_session) do -- 3
		local source = req_source[co]
		if session ~= 0 and source then
			c.send(source, PTYPE_ERROR, session, "")
		end
	end
	local running = S.running()
	local suspended = {}
	for _, v in pairs(S.waiting) do
		if type(v) == "thread" and v ~= running then
			suspended[#suspended + 1] = v
		end
	end
	clear(S.waiting)
	clear(S.timers)
	clear(req_session)
	for _, co in ipairs(suspended) do -- 4
		if coroutine_status(co) == "suspended" then
			coroutine_close(co)
		end
	end
	for resp in pairs(S.unresponse) do -- 5
		resp(false)
	end
	local dead = {}
	for _, addr in pairs(S.watching) do -- 6
		dead[addr] = true
	end
	for addr in pairs(dead) do
		c.send(addr, PTYPE_ERROR, 0, "")
	end
	c.callback(function(prototype, _, _, session, source) -- 7
		if session ~= 0 and source ~= 0 and prototype ~= PTYPE_RESPONSE and prototype ~= PTYPE_ERROR then
			c.send(source, PTYPE_ERROR, session, "")
		end
	end)
	c.command "EXIT" -- 8
	coroutine.yield "QUIT" -- 9
end

return true
