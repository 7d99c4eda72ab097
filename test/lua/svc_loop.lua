-- Helper for test_endless: "loop" tells the requester it started, then spins
-- forever in pure Lua until a SIGNAL breaks it; "loop_c" does the same but
-- calls into C (skynet.hpc) every 1000 spins; "work" spins n times (calling
-- into C every 1000) under pcall and returns how many "signal 0" errors it
-- caught; "nap" sleeps ti cs, then answers; "count" reports how far the
-- loops got. "loop_fw" spins forever in a chunk marked as framework code.
-- "ret_at" k signals the service itself at the k-th instruction after it
-- starts to answer; "probe" then reports whether that signal was sent and
-- whether every coroutine parked in the pool is still usable; "unhook"
-- drops a count that never reached k. "interrupts" reports how many times
-- a worker was interrupted for this service.
local skynet = require "skynet"
local core = require "skynet.core"

local hpc = skynet.hpc
local S = require "skynet.private"

local spins = 0

local function spin_c(n)
	local i = 0
	while n == nil or i < n do
		for _ = 1, 1000 do
			spins = spins + 1
		end
		i = i + 1000
		hpc()
	end
end

-- Marked like skynet.lua marks itself: a break waits for code outside it,
-- but only for so many instructions.
local framework_loop = load([[
	local hpc = ...
	return function()
		while true do
			for _ = 1, 1000 do
			end
			hpc()
		end
	end
]], "=framework_loop")(hpc)
assert(debug.getregistry()["snlua.framework"](framework_loop), "framework_loop not marked")

local fired = false -- the signal of the last ret_at was sent
local hooked = nil -- the coroutine that ran the last ret_at

local function nop() end

local CMD = {}

function CMD.loop(source)
	skynet.send(source, "lua", "mark", "looping")
	while true do
		spins = spins + 1
	end
end

function CMD.loop_c(source)
	skynet.send(source, "lua", "mark", "looping")
	spin_c()
end

function CMD.work(_, n)
	local caught = 0
	local ok, err = pcall(spin_c, n)
	if not ok then
		if not tostring(err):find("signal 0", 1, true) then
			error(err, 0)
		end
		caught = 1
	end
	skynet.retpack(caught)
end

function CMD.nap(_, ti)
	skynet.sleep(ti)
	skynet.retpack("awake")
end

function CMD.loop_fw(source)
	skynet.send(source, "lua", "mark", "looping")
	framework_loop()
end

-- The fork runs (on another pooled coroutine) right after this request and
-- parks on top of it, so "probe" runs there and sees this one in the pool.
function CMD.ret_at(_, k)
	local self = skynet.address(skynet.self())
	fired = false
	hooked = coroutine.running()
	skynet.fork(nop)
	debug.sethook(function()
		debug.sethook()
		fired = true
		core.command("SIGNAL", self)
	end, "", k)
	skynet.retpack(k)
end

function CMD.probe()
	local usable = true
	for _, co in ipairs(S.parked()) do
		if coroutine.status(co) ~= "suspended" then
			usable = false
		end
	end
	skynet.retpack(fired, usable)
end

function CMD.unhook()
	debug.sethook(hooked)
	skynet.retpack(true)
end

function CMD.interrupts()
	skynet.retpack(debug.getregistry()["snlua.interrupts"]())
end

function CMD.count()
	skynet.retpack(spins)
end

function CMD.ping()
	skynet.retpack("pong")
end

skynet.start(function()
	skynet.dispatch("lua", function(_, source, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			error("svc_loop: unknown command (" .. tostring(cmd) .. ")")
		end
		f(source, ...)
	end)
end)
