-- skynet.queue: a critical section shared by the coroutines of one service.
--
--   local cs = require "skynet.queue"()
--   cs(f, ...)  -- runs f(...) alone among the users of cs, returns its results
--
-- Waiters are admitted in FIFO order: when the holder leaves, the lock is
-- handed straight to the oldest waiter, so a newcomer cannot overtake it.
-- The holder may enter again (nested cs calls from one coroutine). If f
-- raises, the lock is released and the error is re-raised with a traceback.
-- A coroutine killed while it waits or holds the lock (skynet.killthread,
-- skynet.exit) gives it up too, through a to-be-closed guard.
local skynet = require "skynet"

local running = coroutine.running
local xpcall = xpcall
local traceback = debug.traceback
local setmetatable = setmetatable
local error = error

local function new_queue()
	local holder = nil -- coroutine that owns the lock
	local depth = 0 -- nesting level of holder
	local waiters = {} -- FIFO of coroutines; abandoned slots hold false
	local head, tail = 1, 0

	-- Hand the lock to the oldest live waiter, or free it.
	local function pass_on()
		while head <= tail do
			local co = waiters[head]
			waiters[head] = nil
			head = head + 1
			if co then
				holder = co
				depth = 1
				skynet.wakeup(co)
				return
			end
		end
		holder = nil
		depth = 0
		head, tail = 1, 0
	end

	local function leave()
		depth = depth - 1
		if depth == 0 then
			pass_on()
		end
	end

	-- Closed when the critical section ends, however it ends.
	local section_guard = setmetatable({}, { __close = leave })

	-- A waiter that dies before it runs: drop its slot, or, if the lock was
	-- already handed to it, pass the lock on.
	local function abandon(co)
		if holder == co then
			depth = 1
			leave()
			return
		end
		for i = head, tail do
			if waiters[i] == co then
				waiters[i] = false
				return
			end
		end
	end

	local function acquire(co)
		if holder == co then
			depth = depth + 1
			return
		end
		if holder == nil then
			holder = co
			depth = 1
			return
		end
		tail = tail + 1
		waiters[tail] = co
		local admitted = false
		local _ <close> = setmetatable({}, {
			__close = function()
				if not admitted then
					abandon(co)
				end
			end,
		})
		skynet.wait(co)
		admitted = true
	end

	local function finish(ok, ...)
		if not ok then
			error(..., 0)
		end
		return ...
	end

	return function(f, ...)
		acquire(running())
		local _ <close> = section_guard
		return finish(xpcall(f, traceback, ...))
	end
end

return new_queue
