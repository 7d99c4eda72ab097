-- skynet: the Lua service API (protocols, send/call/ret, timers, coroutines).
--
-- The message path lives in C (lualib-src/kernel/, module skynet.kernel, one
-- file per part): session tracking, the protocol table, the coroutine pool,
-- the dispatcher with its wakeup, error and fork queues, send/call/ret,
-- timeout/sleep/wait/wakeup/fork, start and the last will. Its design
-- comments (init.c, coroutine.c) describe the state tables, the yield
-- protocol ("SUSPEND", "QUIT", "EXIT", a bare yield) and how sessions are
-- registered for the coroutine the dispatcher resumed. This file only returns the table the
-- kernel builds, so a service holds no copy of the framework's bytecode.
--
-- Lazy parts. exit, killthread, getenv, the service helpers, trace, task,
-- request/select, manager, the rarer message functions (response, rawcall,
-- redirect...) and the debug protocol live in Lua files loaded on first use
-- (the skynet table's __index, in the kernel); they ask the kernel through
-- the functions of require "skynet.private". Under snlua they load inside its
-- memory grant, so they work for a service at its skynet.memlimit.
--
-- Signals. snlua's SIGNAL 0 breaks the code a coroutine runs with the error
-- "signal 0". Its hook fires on Lua instructions only, so the kernel is
-- never broken midway; this file and each lazy function loaded marks its
-- chunk as framework code (registry "snlua.framework"), so a break that lands
-- in their bookkeeping waits for the next instruction of service code.
-- snlua's hooks (nil outside snlua); through package.preload rather than
-- debug.getregistry, so that a service need not open the debug library.
local snlua = package.preload["skynet.snlua"] and require "skynet.snlua"
if snlua then
	snlua.framework()
end

return require "skynet.kernel"
