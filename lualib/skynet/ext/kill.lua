-- skynet.exit, skynet.killthread and skynet.term, loaded on
-- first use. The state work is the kernel's (lualib-src/kernel/kill.c):
-- S.killthread is skynet.killthread itself, S.exit_state does exit's part
-- in the kernel's tables; here is what is left around them.
local skynet = require "skynet"
local c = require "skynet.core"
local S = require "skynet.private"

local PTYPE_RESPONSE <const> = 1
local PTYPE_ERROR <const> = 7

-- Lets the heap pass skynet.memlimit by a bounded reserve (snlua), so that
-- exiting never fails for want of memory. Absent under another host.
local exit_reserve = debug.getregistry()["snlua.exit_reserve"]

skynet.killthread = S.killthread

function skynet.term(addr)
	S.error_dispatch(0, addr)
end

-- Exit in five steps: 1 in the kernel (S.exit_state): drop pending forks,
-- answer every request still being served with an error, forget waits and
-- timers, close the suspended coroutines (so their to-be-closed variables
-- run), mark detached response closures dead, send an error with session 0
-- ("this service is gone") to every service it has calls pending with; 2
-- from then on answer each incoming request with an error; 3 retire the
-- handle (EXIT, which logs "KILL self"); 4 leave the launcher's list: after
-- the KILL line, so that a failed start's reason, which the launcher hands
-- to the newservice caller on this message, is logged after that line; 5
-- leave the running coroutine for good.
function skynet.exit()
	if exit_reserve then
		exit_reserve()
	end
	S.exit_state() -- 1
	c.callback(function(prototype, _, _, session, source) -- 2
		if session ~= 0 and source ~= 0 and prototype ~= PTYPE_RESPONSE and prototype ~= PTYPE_ERROR then
			c.send(source, PTYPE_ERROR, session, "")
		end
	end)
	c.command "EXIT" -- 3
	skynet.send(".launcher", "lua", "REMOVE", skynet.self(), false) -- 4
	coroutine.yield "QUIT" -- 5
end

return true
