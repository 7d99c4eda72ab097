-- skynet: the Lua service API (protocols, send/call/ret, timers, coroutines).
--
-- Sessions. `waiting` maps every session this service expects a message
-- for (other than pending timeouts) to what the message means:
--   thread    a coroutine blocked in call/sleep/wait, resumed with
--             (true, msg, sz, session) on a reply, (false) when the call
--             failed, (false, "BREAK") when skynet.wakeup cut it short;
--   table     a skynet.request handler, called inline as t[1](t, session,
--             ok, msg, sz) (ok false: the call failed);
--   "BREAK"   nobody waits any more: the late message is dropped.
-- A session is registered by the coroutine the dispatcher resumed
-- (running_thread), not by coroutine.running(): a skynet.coroutine nested in
-- it passes every framework yield up, so the framework resumes the root.
--
-- Timers. `timers` maps the session of each pending skynet.timeout to its
-- function: no coroutine exists until it fires, then one is taken from the
-- pool. The table is rebuilt once most of a large batch is gone, so its
-- memory comes back. The object timeout returns is a light userdata whose
-- address is the session (made by unpacking a serialized type-3 value), so
-- it costs nothing; killthread(obj) cancels the C timer with
-- core.timeout_cancel, and wakeup of a sleep cancels the sleep's timer.
--
-- Yield protocol of framework coroutines: coroutine.yield(cmd) with cmd
--   "SUSPEND"  blocked; the blocking call registered the coroutine first;
--   "QUIT"     skynet.exit: the dispatcher closes the coroutine;
--   "EXIT"     (pool internal) the function returned;
--   nil        a bare coroutine.yield(): suspended for good.
--
-- Signals. snlua's SIGNAL 0 breaks the code a coroutine runs with the error
-- "signal 0"; this file marks itself (registry "snlua.framework") and so do
-- the lazy parts when they load, so a break that lands in their bookkeeping
-- (a reply half sent, a coroutine on its way into the pool, a session half
-- registered) waits for the next instruction of service code. A request
-- coroutine broken there fails like any other error: its caller gets an
-- error reply.
--
-- Footprint. Each service compiles nothing (bytecode is cached) but still
-- holds its own copy of every function prototype, so this file keeps only
-- what the message path needs. The rest (exit, killthread, getenv, the
-- service helpers, trace, task, request/select, manager, the rarer message
-- functions (response, rawcall, redirect...), the debug protocol) lives in
-- other files loaded on first use (LAZY at the end);
-- they reach the internal state through require "skynet.private". Under
-- snlua they load inside its memory grant, so they work for a service at
-- its skynet.memlimit. This file also avoids the math and debug libraries,
-- which snlua opens on first use only (debug.traceback is looked up when an
-- error needs it).
local c = require "skynet.core"
local skynet_require = require "skynet.require"

-- snlua's hooks (nil outside snlua); through package.preload rather than
-- debug.getregistry, so that a service need not open the debug library.
local snlua = package.preload["skynet.snlua"] and require "skynet.snlua"
local mark_framework = snlua and snlua.framework
local granted = snlua and snlua.granted -- loads past skynet.memlimit (see LAZY)
if mark_framework then
	mark_framework()
end

local tostring = tostring
local type = type
local pairs = pairs
local select = select
local error = error
local tunpack = table.unpack
local tpack = table.pack
local sformat = string.format
-- debug.traceback, looked up when an error needs it: most services never
-- open the debug library (snlua opens it on first use).
local function traceback(msg)
	return debug.traceback(msg, 2) -- level 2: the frame that raised, as without this wrapper
end
local function co_traceback(co, msg)
	return debug.traceback(co, msg)
end
local coroutine_create = coroutine.create
local coroutine_resume = coroutine.resume
local coroutine_yield = coroutine.yield
local coroutine_running = coroutine.running
local coroutine_close = coroutine.close
local c_send = c.send
local c_genid = c.genid
local c_timeout_cancel = c.timeout_cancel
local c_timeout = c.timeout

local PTYPE_RESPONSE <const> = 1
local PTYPE_ERROR <const> = 7
local PTYPE_TRACE <const> = 12
local SESSION_MAX <const> = 0x7fffffff

local skynet = {
	PTYPE_TEXT = 0,
	PTYPE_RESPONSE = 1,
	PTYPE_MULTICAST = 2,
	PTYPE_CLIENT = 3,
	PTYPE_SYSTEM = 4,
	PTYPE_HARBOR = 5,
	PTYPE_SOCKET = 6,
	PTYPE_ERROR = 7,
	PTYPE_QUEUE = 8,
	PTYPE_DEBUG = 9,
	PTYPE_LUA = 10,
	PTYPE_SNAX = 11,
	PTYPE_TRACE = 12,
	pack = c.pack,
	packstring = c.packstring,
	unpack = c.unpack,
	tostring = c.tostring,
	trash = c.trash,
	error = c.error,
	now = c.now,
	hpc = c.hpc,
	pcall = pcall,
}

local proto = {}
local waiting = {} -- session -> thread | table | "BREAK"
local timers = {} -- session -> function of a pending timeout
local timer_n, timer_peak = 0, 0 -- pending timeouts, most since the last rebuild
local watching = {} -- session -> address, for calls in flight
local req_session = {} -- co -> session of the request it serves (0: a send)
local req_source = {} -- co -> source of that request
local sleep_session = {} -- token -> session (> 0: sleep with a timer, < 0: wait)
local unresponse = {} -- response closure -> address owed
local fired = {} -- co <-> session of a fired timeout that is blocked
local fired_n = 0
local trace_tag = {} -- co -> trace tag
local trace_source = {} -- source -> tag announced by PTYPE_TRACE
local timeout_tb = {} -- session -> creation traceback (trace_timeout)
local tracing = false -- any trace feature in use
local trace_timeouts = false -- record creation tracebacks of timeouts

local running_thread = nil
local unpacking = false -- a request is being unpacked (error => reply error)
local errors = nil -- error texts collected during one dispatch

-- FIFOs: wakeup (sessions, and the token each came from), error
-- (sessions), fork (coroutines + args). woken maps a token whose wakeup is
-- queued but not yet run to its queued session, so a second wakeup of it
-- still returns true (and queues nothing).
local wq, wq_token, wq_h, wq_t = {}, {}, 1, 0
local woken = {}
local eq, eq_h, eq_t = {}, 1, 0
local fq, fq_args, fq_h, fq_t = {}, {}, 1, 0

-- Internal state shared with the parts loaded on demand.
local S = {
	proto = proto,
	waiting = waiting,
	timers = timers,
	watching = watching,
	req_session = req_session,
	req_source = req_source,
	sleep_session = sleep_session,
	unresponse = unresponse,
	fired = fired,
	trace_tag = trace_tag,
	trace_source = trace_source,
	timeout_tb = timeout_tb,
	fork_queue = fq,
	fork_args = fq_args,
	wakeup_queue = wq,
	woken = woken,
	init_thread = nil, -- the start coroutine while it runs
	info_func = nil, -- skynet.info_func
	exited = false,
}

-- Last will. A service stopped from outside (KILL, ABORT) runs no more Lua
-- code before its state closes, so the clean-up of skynet.exit (errors to
-- the callers of requests it had not answered) never happens and those
-- callers would wait forever. This object lives as long as the state (S
-- holds it), so its finalizer runs when the state closes: it sends those
-- errors. It only sends (no yield, no call), and does nothing after
-- skynet.exit, which has done it already.
S.last_will = setmetatable({}, {
	__gc = function()
		if S.exited then
			return
		end
		for co, session in pairs(req_session) do
			local source = req_source[co]
			if session ~= 0 and source then
				pcall(c_send, source, PTYPE_ERROR, session, "")
			end
		end
		for resp in pairs(unresponse) do
			pcall(resp, false)
		end
	end,
})

-- Session wrap-around (sessions count up to SESSION_MAX, then start again
-- at 1): collisions are only possible once the counter has wrapped; from
-- then on every allocation first skips sessions that are still in use.
local last_session = 0
local wrapped = false

local function track(session)
	if session < last_session then
		wrapped = true
	end
	last_session = session
	return session
end

local function session_guard()
	local nxt = last_session >= SESSION_MAX and 1 or last_session + 1
	while waiting[nxt] ~= nil or timers[nxt] ~= nil do
		last_session = c_genid()
		nxt = last_session >= SESSION_MAX and 1 or last_session + 1
	end
end

local function push_error(text)
	local e = errors
	if e == nil then
		errors = { text }
	else
		e[#e + 1] = text
	end
end

---------------------------------------------------------------- protocols

-- math.type(v) == "integer" without the math library (opened on first use):
-- an integer prints as digits only, a float never does ("3.0", "1e+20", "inf").
local function is_integer(v)
	return type(v) == "number" and not tostring(v):find("[^%-%d]")
end

function skynet.register_protocol(class)
	local name, id = class.name, class.id
	assert(type(name) == "string" and is_integer(id) and id >= 0 and id <= 255,
		"skynet.register_protocol: bad name or id")
	assert(proto[name] == nil and proto[id] == nil,
		"skynet.register_protocol: already registered (" .. name .. ")")
	proto[name] = class
	proto[id] = class
	if class.trace ~= nil then
		tracing = true
		require "skynet.ext.trace" -- forced tracing needs S.new_tag
	end
end

local function get_proto(typename)
	local p = proto[typename]
	if p == nil then
		error(sformat("skynet: unknown protocol (%s)", tostring(typename)), 3)
	end
	return p
end

function skynet.dispatch(typename, func)
	local p = proto[typename]
	if func then
		assert(p, "skynet.dispatch: unknown protocol")
		local old = p.dispatch
		p.dispatch = func
		return old
	end
	return p and p.dispatch
end

-- Default hook for both unknown requests and unknown responses.
local function unknown_message(session, source, msg, sz, prototype)
	c.error(sformat("Unknown %s: %s", prototype and "request (" .. prototype .. ")" or "response",
		tostring(c.tostring(msg, sz))))
	error(sformat("Unknown session : %d from %x", session, source))
end

local unknown_request = unknown_message
local unknown_response = unknown_message

---------------------------------------------------------------- coroutines

local pool = setmetatable({}, { __mode = "kv" })
S.pool = pool -- the parked coroutines (each suspended in the loop of co_get)

-- Bookkeeping when co stops for good (finished, failed or killed).
local function co_finished(co)
	if fired_n > 0 then
		local s = fired[co]
		if s then
			fired[co] = nil
			fired[s] = nil
			fired_n = fired_n - 1
		end
	end
	if tracing then
		local tag = trace_tag[co]
		if tag then
			trace_tag[co] = nil
			c.trace(tag, "end")
		end
	end
end

local function co_run(f, ...)
	f(...)
	return f
end

-- A framework coroutine, from the pool when one is parked there. Its first
-- resume passes the job: resume(co, f, args...) runs f(args...); then it
-- parks itself in the pool and yields "EXIT", waiting for the next job.
local function co_get()
	local n = #pool
	local co
	if n > 0 then
		co = pool[n]
		pool[n] = nil
		return co
	end
	co = coroutine_create(function(...)
		local f = co_run(...)
		while true do
			local source = req_source[co]
			if source ~= nil then
				local session = req_session[co]
				req_session[co] = nil
				req_source[co] = nil
				if session ~= nil and session ~= 0 and type(f) == "function" then
					local info = debug.getinfo(f, "S")
					c.error(sformat("Maybe forgot response session %s from %s : %s:%d", session,
						skynet.address(source), info.short_src, info.linedefined))
				end
			end
			if fired_n > 0 or tracing then
				co_finished(co)
			end
			f = nil -- luacheck: ignore 311 (the parked coroutine must not keep the job alive)
			pool[#pool + 1] = co
			f = co_run(coroutine_yield "EXIT")
		end
	end)
	return co
end

-- co died with err (or ran an unknown command): log, fail its request, close it.
local function co_error(co, err)
	push_error(co_traceback(co, tostring(err)))
	local session = req_session[co]
	if session ~= nil then
		local source = req_source[co]
		if session ~= 0 and source then
			c_send(source, PTYPE_ERROR, session, "")
		end
	end
	req_session[co] = nil
	req_source[co] = nil
	co_finished(co)
	coroutine_close(co)
end

-- Handles the result of resuming co, then resumes, one per step, the woken
-- coroutines and those whose calls failed, until both queues are empty.
local function run(co, ok, cmd)
	while true do
		if co then
			if not ok then
				co_error(co, cmd)
			elseif cmd == "QUIT" then
				coroutine_close(co)
				return
			elseif cmd ~= "SUSPEND" and cmd ~= "EXIT" and cmd ~= nil then
				co_error(co, "Unknown command : " .. tostring(cmd))
			end
			co = nil
		end
		if wq_h <= wq_t then
			local s, token = wq[wq_h], wq_token[wq_h]
			wq[wq_h] = nil
			wq_token[wq_h] = nil
			wq_h = wq_h + 1
			if woken[token] == s then
				woken[token] = nil
			end
			local timed = s > 0
			if not timed then
				s = -s
			end
			local v = waiting[s]
			if type(v) == "thread" then
				if timed and not c_timeout_cancel(s) then
					waiting[s] = "BREAK" -- the timer fired already: drop its message
				else
					waiting[s] = nil
				end
				co = v
				running_thread = v
				ok, cmd = coroutine_resume(v, false, "BREAK")
			end
		elseif eq_h <= eq_t then
			local s = eq[eq_h]
			eq[eq_h] = nil
			eq_h = eq_h + 1
			local v = waiting[s]
			if v ~= nil then
				waiting[s] = nil
				watching[s] = nil
				local t = type(v)
				if t == "thread" then
					co = v
					running_thread = v
					ok, cmd = coroutine_resume(v, false)
				elseif t == "table" then
					v[1](v, s, false)
				end
			end
		else
			if wq_t ~= 0 or eq_t ~= 0 then -- rewind only what was used (cold lines stay clean)
				wq_h, wq_t, eq_h, eq_t = 1, 0, 1, 0
			end
			return
		end
	end
end

---------------------------------------------------------------- dispatch

local function error_dispatch(session, source)
	if session == 0 then
		-- source is dead: fail every call to it, forget what we owe it
		for s, addr in pairs(watching) do
			if addr == source then
				eq_t = eq_t + 1
				eq[eq_t] = s
			end
		end
		for resp, addr in pairs(unresponse) do
			if addr == source then
				unresponse[resp] = nil
			end
		end
		trace_source[source] = nil
	elseif watching[session] ~= nil then
		eq_t = eq_t + 1
		eq[eq_t] = session
	elseif waiting[session] == "BREAK" then
		waiting[session] = nil
	end
end

local function start_request(f, session, source, ...)
	unpacking = false
	local co = co_get()
	req_session[co] = session
	req_source[co] = source
	if tracing then
		local tag = trace_source[source]
		if tag then
			trace_source[source] = nil
			trace_tag[co] = tag
			c.trace(tag, "request")
		end
	end
	running_thread = co
	return run(co, coroutine_resume(co, f, session, source, ...))
end

local function raw_dispatch(prototype, msg, sz, session, source)
	if prototype == PTYPE_RESPONSE then
		local v = waiting[session]
		if v == nil then
			v = timers[session]
			if v == nil then
				return unknown_response(session, source, msg, sz)
			end
			-- a timeout fires: run its function in a pooled coroutine
			timers[session] = nil
			timer_n = timer_n - 1
			if trace_timeouts then
				timeout_tb[session] = nil
			end
			local co = co_get()
			running_thread = co
			local ok, cmd = coroutine_resume(co, v)
			if ok and cmd == "SUSPEND" then
				fired[co] = session
				fired[session] = co
				fired_n = fired_n + 1
			end
			return run(co, ok, cmd)
		end
		waiting[session] = nil
		local t = type(v)
		if t == "thread" then
			running_thread = v
			return run(v, coroutine_resume(v, true, msg, sz, session))
		elseif t == "table" then
			watching[session] = nil
			v[1](v, session, true, msg, sz)
			return run()
		end
		return -- "BREAK"
	end
	local p = proto[prototype]
	local f = p and p.dispatch
	if f == nil then
		if prototype == PTYPE_TRACE then
			trace_source[source] = c.tostring(msg, sz)
			tracing = true
		elseif session ~= 0 then
			c_send(source, PTYPE_ERROR, session, "")
		else
			return unknown_request(session, source, msg, sz, prototype)
		end
		return
	end
	if f == error_dispatch then
		error_dispatch(session, source)
		return run()
	end
	if tracing and p.trace ~= nil then
		if p.trace == false then
			trace_source[source] = nil
		elseif trace_source[source] == nil then
			trace_source[source] = S.new_tag()
		end
	end
	unpacking = true
	return start_request(f, session, source, p.unpack(msg, sz))
end

function skynet.dispatch_message(prototype, msg, sz, session, source)
	local ok, err = pcall(raw_dispatch, prototype, msg, sz, session, source)
	if not ok then
		if unpacking then
			unpacking = false
			if session ~= 0 and source ~= 0 then
				c_send(source, PTYPE_ERROR, session, "")
			end
		end
		push_error(tostring(err))
	end
	if wq_h <= wq_t or eq_h <= eq_t then
		run() -- woken by a hook that ran outside any coroutine
	end
	while fq_h <= fq_t do
		local i = fq_h
		fq_h = i + 1
		local co = fq[i]
		fq[i] = nil
		if co then
			local args = fq_args[i]
			fq_args[i] = nil
			running_thread = co
			if type(args) == "table" then
				run(co, coroutine_resume(co, tunpack(args, 1, args.n)))
			else
				run(co, coroutine_resume(co, args))
			end
		end
	end
	if fq_t ~= 0 then
		fq_h, fq_t = 1, 0
	end
	if timer_peak >= 1024 and timer_n * 4 < timer_peak then
		-- most of a big batch of timeouts is gone: give the table's memory back
		local t = {}
		for k, v in pairs(timers) do
			t[k] = v
		end
		timers = t
		S.timers = t
		timer_peak = timer_n
	end
	local e = errors
	if e then
		errors = nil
		error(table.concat(e, "\n"), 0)
	end
end

---------------------------------------------------------------- send / call

function skynet.send(addr, typename, ...)
	if addr == 0 then
		error("Invalid service address 0", 2)
	end
	local p = proto[typename] or get_proto(typename)
	return c_send(addr, p.id, 0, p.pack(...))
end

local function yield_call(addr, session)
	watching[session] = addr
	waiting[session] = running_thread
	local ok, msg, sz = coroutine_yield "SUSPEND"
	watching[session] = nil
	if not ok then
		error "call failed"
	end
	return msg, sz
end

-- Sends a request with a new session (safe after wrap-around); returns the session.
local function new_call(addr, id, msg, sz)
	if addr == 0 then
		if sz ~= nil then
			c.trash(msg, sz)
		end
		error("Invalid service address 0", 3)
	end
	if tracing then
		local tag = trace_tag[running_thread]
		if tag then
			c.trace(tag, "call " .. skynet.address(addr))
			c_send(addr, PTYPE_TRACE, 0, tag)
		end
	end
	if wrapped then
		session_guard()
	end
	local session = c_send(addr, id, nil, msg, sz)
	if not session then
		if session == nil then
			error("call to invalid address " .. skynet.address(addr))
		end
		error("call to " .. skynet.address(addr) .. " failed: message too large")
	end
	return track(session)
end

function skynet.call(addr, typename, ...)
	local p = proto[typename] or get_proto(typename)
	local session = new_call(addr, p.id, p.pack(...))
	return p.unpack(yield_call(addr, session))
end

function skynet.ret(msg, sz)
	local co = running_thread
	local session = req_session[co]
	if session == nil then
		if sz ~= nil then
			c.trash(msg, sz) -- ret owns the buffer on every path
		end
		error "No session"
	end
	req_session[co] = nil
	if session == 0 then
		if sz ~= nil then
			c.trash(msg, sz)
		end
		return false
	end
	local source = req_source[co]
	local r = c_send(source, PTYPE_RESPONSE, session, msg or "", sz)
	if r then
		return true
	elseif r == false then
		c_send(source, PTYPE_ERROR, session, "")
	end
	return false
end

function skynet.retpack(...)
	return skynet.ret(c.pack(...))
end

function skynet.genid()
	if wrapped then
		session_guard()
	end
	return track(c_genid())
end

function skynet.self()
	local h = c.addresscommand "REG"
	skynet.self = function()
		return h
	end
	return h
end

function skynet.address(addr)
	if type(addr) == "number" then
		return sformat(":%08x", addr)
	end
	return tostring(addr)
end

---------------------------------------------------------------- timers

local function timer_object(session)
	return c.unpack(string.pack("<Bj", 3, session)) -- 3: the light userdata tag of skynet.pack
end

-- skynet.timeout and skynet.sleep arm their timer inline (as genid does
-- through track): one Lua call less on the path every timer takes.
function skynet.timeout(ti, func)
	if type(func) ~= "function" then
		local f = func
		func = function()
			return f()
		end
	end
	if wrapped then
		session_guard()
	end
	local session, obj = c_timeout(ti)
	if session < last_session then
		wrapped = true
	end
	last_session = session
	timers[session] = func
	local n = timer_n + 1
	timer_n = n
	if n > timer_peak then
		timer_peak = n
	end
	if trace_timeouts then
		timeout_tb[session] = traceback()
	end
	return obj
end

function skynet.sleep(ti, token)
	token = token or coroutine_running()
	if sleep_session[token] then
		error "token duplicative"
	end
	if wrapped then
		session_guard()
	end
	local session = c_timeout(ti)
	if session < last_session then
		wrapped = true
	end
	last_session = session
	sleep_session[token] = session
	waiting[session] = running_thread
	local ok, err = coroutine_yield "SUSPEND"
	if sleep_session[token] == session then
		sleep_session[token] = nil
	end
	if ok then
		return
	end
	if err == "BREAK" then
		return "BREAK"
	end
	error(err)
end

function skynet.wait(token)
	token = token or coroutine_running()
	if sleep_session[token] then
		error "token duplicative"
	end
	local session = skynet.genid()
	sleep_session[token] = -session
	waiting[session] = running_thread
	coroutine_yield "SUSPEND"
	if sleep_session[token] == -session then
		sleep_session[token] = nil
	end
end

function skynet.wakeup(token)
	local s = sleep_session[token]
	if s then
		sleep_session[token] = nil
		woken[token] = s
		wq_t = wq_t + 1
		wq[wq_t] = s
		wq_token[wq_t] = token
		return true
	end
	if woken[token] then
		return true -- woken already, not resumed yet
	end
end

-- fq_args[i] is the function of fork i, or table.pack(f, args...).
function skynet.fork(func, ...)
	local co = co_get()
	local t = fq_t + 1
	fq_t = t
	fq[t] = co
	if select("#", ...) > 0 or type(func) ~= "function" then
		fq_args[t] = tpack(func, ...)
	else
		fq_args[t] = func
	end
	return co
end

---------------------------------------------------------------- start

skynet.init = skynet_require.init

function skynet.init_service(start)
	S.init_thread = running_thread
	local ok, err = xpcall(function()
		skynet_require.init_all()
		start()
	end, traceback)
	S.init_thread = nil
	if not ok then
		c.error("init service failed: " .. tostring(err))
		if c.command("QUERY", ".launcher") == nil then
			-- Started before the launcher: the bootstrap, or the launcher itself.
			c.error("error: the node cannot start without this service; stopping with exit status 1")
			c.command("ABORT", "1")
			return
		end
		skynet.send(".launcher", "lua", "ERROR")
		skynet.exit()
	else
		skynet.send(".launcher", "lua", "LAUNCHOK")
	end
end

function skynet.start(start_func)
	c.callback(skynet.dispatch_message)
	skynet.timeout(0, function()
		skynet.init_service(start_func)
	end)
end

---------------------------------------------------------------- built-in protocols

skynet.register_protocol { name = "lua", id = 10, pack = c.pack, unpack = c.unpack }
skynet.register_protocol { name = "response", id = PTYPE_RESPONSE }
skynet.register_protocol {
	name = "error", id = PTYPE_ERROR, dispatch = error_dispatch,
	unpack = function(...)
		return ...
	end,
}
-- The debug protocol loads its handlers (skynet.debug) on the first request.
skynet.register_protocol {
	name = "debug", id = 9, pack = c.pack, unpack = c.unpack,
	dispatch = function(...)
		require "skynet.debug"
		return proto.debug.dispatch(...)
	end,
}
skynet._proto = proto

---------------------------------------------------------------- internals for the lazy parts

S.timer_object = timer_object
S.yield_call = yield_call
S.new_call = new_call
S.error_dispatch = error_dispatch
S.co_finished = co_finished

function S.running()
	return running_thread
end

-- Flags and counters the lazy parts change: "tracing", "trace_timeouts",
-- "timer_gone" (a pending timeout was removed by hand), and the hooks for
-- unknown messages, "unknown_request" and "unknown_response" (returns the
-- hook it replaced).
function S.set(what, value)
	if what == "tracing" then
		tracing = value
	elseif what == "trace_timeouts" then
		trace_timeouts = value
	elseif what == "timer_gone" then
		timer_n = timer_n - 1
	elseif what == "unknown_request" then
		what, unknown_request = unknown_request, value
		return what
	elseif what == "unknown_response" then
		what, unknown_response = unknown_response, value
		return what
	end
end

skynet.private = S
package.loaded["skynet.private"] = S

-- Functions loaded on first use: " name=<module letter>" (a string costs far
-- less than a table in every service).
local LAZY <const> = " exit=k killthread=k term=k localname=s harbor=s getenv=s setenv=s"
	.. " starttime=s time=s endless=s mqlen=s stat=s memlimit=s newservice=s uniqueservice=s"
	.. " queryservice=s info_func=s trace=t tracetag=t tracelog=t traceproto=t tracecall=t"
	.. " trace_timeout=t task=T uniqtask=T request=r launch=m kill=m abort=m register=m name=m"
	.. " forward_type=m filter=m monitor=m cache=c response=e ignoreret=e context=e redirect=e"
	.. " rawsend=e rawcall=e yield=e dispatch_unknown_request=e dispatch_unknown_response=e "
local LAZY_MODULE <const> = {
	k = "skynet.ext.kill",
	s = "skynet.ext.service",
	t = "skynet.ext.trace",
	T = "skynet.ext.task",
	r = "skynet.ext.request",
	m = "skynet.manager",
	c = "skynet.codecache",
	e = "skynet.ext.message",
}

setmetatable(skynet, {
	__index = function(t, k)
		if type(k) ~= "string" then
			return nil
		end
		local _, e = LAZY:find(" " .. k .. "=", 1, true)
		if e then
			-- Under snlua's memory grant: a service at its limit can still
			-- use a function it has not loaded yet (skynet.exit above all).
			local name = LAZY_MODULE[LAZY:sub(e + 1, e + 1)]
			local r
			if granted then
				r = granted(require, name)
			else
				r = require(name)
			end
			if k == "cache" then
				rawset(t, k, r)
			end
			local v = rawget(t, k)
			if mark_framework and type(v) == "function" then
				pcall(mark_framework, v) -- with every slot taken it stays unmarked
			end
			return v
		end
	end,
})

return skynet
