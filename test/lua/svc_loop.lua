-- Helper for test_endless: "loop" tells the requester it started, then spins
-- forever in pure Lua until a SIGNAL breaks it; "loop_c" does the same but
-- calls into C (skynet.hpc) every 1000 spins; "work" spins n times (calling
-- into C every 1000) under pcall and returns how many "signal 0" errors it
-- caught; "nap" sleeps ti cs, then answers; "count" reports how far the
-- loops got.
local skynet = require "skynet"

local hpc = skynet.hpc

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

function CMD.work(source, n)
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

function CMD.nap(source, ti)
	skynet.sleep(ti)
	skynet.retpack("awake")
end

function CMD.count()
	skynet.retpack(spins)
end

function CMD.ping()
	skynet.retpack("pong")
end

skynet.start(function()
	skynet.dispatch("lua", function(session, source, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			error("svc_loop: unknown command (" .. tostring(cmd) .. ")")
		end
		f(source, ...)
	end)
end)
