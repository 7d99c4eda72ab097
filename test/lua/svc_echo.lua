-- Helper service for the Lua tests: a toolbox of request behaviours.
-- Commands in CMD reply with their return values (retpack); commands in
-- RAW get (session, source, ...) and reply themselves, or not at all.
local skynet = require "skynet"

local args = { ... }
local CMD = {}
local RAW = {}

local log = {} -- values recorded by "record"
local last = nil -- result of the latest self-check, read by "last"
local held = {} -- response closures kept by "defer"
local held_threads = {} -- coroutines parked by "hold"

function CMD.echo(...)
	return ...
end

function CMD.args()
	return SERVICE_NAME, table.unpack(args)
end

function CMD.record(v)
	log[#log + 1] = v
end

function CMD.get_log()
	local out = log
	log = {}
	return out
end

function CMD.last()
	return table.unpack(last, 1, last.n)
end

function CMD.sleep_echo(ti, ...)
	skynet.sleep(ti)
	return ...
end

function CMD.error(msg)
	error(msg)
end

function CMD.error_table()
	error({ code = 42 })
end

-- Calls addr with the remaining arguments and returns its reply.
function CMD.call(addr, ...)
	return skynet.call(addr, "lua", ...)
end

function CMD.exit()
	skynet.exit()
end

-- Send-only: note the marker, exit, and prove that nothing after exit runs.
function CMD.exit_and_mark(addr)
	skynet.send(addr, "lua", "mark", "before")
	skynet.exit()
	skynet.send(addr, "lua", "mark", "after")
end

-- Send-only: queue a fork, then exit; the fork must never run.
function CMD.fork_then_exit(addr)
	skynet.fork(function()
		skynet.send(addr, "lua", "mark", "forked")
	end)
	skynet.exit()
end

function CMD.alloc(n)
	local ok, err = pcall(string.rep, "x", n)
	if ok then
		return true, #err
	end
	return false, err
end

function CMD.ping()
	return "pong"
end

-- Spins ms milliseconds in its callback: CPU time for test_metrics.
function CMD.spin(ms)
	local stop = skynet.hpc() + ms * 1000000
	while skynet.hpc() < stop do
	end
end

-- Replies, then tries to reply again: records both outcomes.
function RAW.ret_twice()
	local r1 = skynet.ret(skynet.pack("first"))
	local ok, err = pcall(skynet.ret, skynet.pack("second"))
	last = table.pack(r1, ok, err)
end

-- Meant to be sent (session 0): ret has nobody to answer.
function RAW.ret_on_send(session)
	local r = skynet.ret(skynet.pack("nobody"))
	last = table.pack(session, r)
end

-- A fork has no request to answer.
function RAW.ret_in_fork()
	skynet.fork(function()
		last = table.pack(pcall(skynet.ret, skynet.pack("from fork")))
	end)
	skynet.retpack("handler")
end

function RAW.context(session, source)
	local s, src = skynet.context()
	skynet.retpack(s == session, src == source, s, src)
end

-- Keeps the reply for later (flush/answer/fail).
function RAW.defer(_, _, tag)
	held[#held + 1] = { resp = skynet.response(), tag = tag }
end

-- Keeps the reply with a custom pack function.
function RAW.defer_custom(_, _, tag)
	local resp = skynet.response(function(...)
		return skynet.pack("custom", ...)
	end)
	held[#held + 1] = { resp = resp, tag = tag }
end

function CMD.held_count()
	return #held
end

-- Answers the held closures, newest first, each with its tag; checks the
-- closure API on the way and returns what it saw.
function CMD.flush()
	local report = {}
	for i = #held, 1, -1 do
		local h = held[i]
		local live_before = h.resp("TEST")
		local sent = h.resp(true, h.tag)
		local live_after = h.resp("TEST")
		local ok, err = pcall(h.resp, true, "again")
		report[#report + 1] = {
			tag = h.tag,
			live_before = live_before,
			sent = sent,
			live_after = live_after,
			again_ok = ok,
			again_err = tostring(err),
		}
		held[i] = nil
	end
	return report
end

-- Answers every held closure with an error.
function CMD.fail_all()
	local n = #held
	for i = n, 1, -1 do
		held[i].resp(false)
		held[i] = nil
	end
	return n
end

-- Answers the oldest held closure with v; returns what resp returned.
function CMD.answer_one(v)
	local h = table.remove(held, 1)
	return h.resp(true, v)
end

-- Blocks until "release" or the coroutine is killed.
function RAW.hold(_, _, tag)
	local co = coroutine.running()
	held_threads[#held_threads + 1] = co
	skynet.wait(co)
	skynet.retpack("released", tag)
end

-- Like hold, and tells addr (with a send) when its to-be-closed variable runs.
function RAW.hold_tbc(_, _, addr, tag)
	local _ <close> = setmetatable({}, {
		__close = function()
			skynet.send(addr, "lua", "mark", "closed " .. tag)
		end,
	})
	local co = coroutine.running()
	held_threads[#held_threads + 1] = co
	skynet.wait(co)
	skynet.retpack("released", tag)
end

function CMD.release()
	local n = #held_threads
	for i = 1, n do
		skynet.wakeup(held_threads[i])
	end
	held_threads = {}
	return n
end

-- Kills the coroutines parked by hold: their requesters must get an error.
function CMD.kill_held()
	local n = 0
	for i = 1, #held_threads do
		if skynet.killthread(held_threads[i]) then
			n = n + 1
		end
	end
	held_threads = {}
	return n
end

-- Returns without replying: the caller stays blocked.
function RAW.noreply() end

skynet.info_func(function(...)
	return { service = "svc_echo", args = { ... } }
end)

skynet.start(function()
	skynet.dispatch("lua", function(session, source, cmd, ...)
		local raw = RAW[cmd]
		if raw then
			return raw(session, source, ...)
		end
		local f = CMD[cmd]
		if not f then
			error(string.format("svc_echo: unknown command (%s)", tostring(cmd)))
		end
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end)
