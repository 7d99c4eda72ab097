-- skynet.coroutine: user coroutines that may call blocking skynet APIs.
--
-- A user coroutine yields to its resumer with a private marker in front of
-- its values. Anything else it yields comes from the framework (a call, a
-- sleep, a wait...): resume passes those values up to whoever resumed the
-- current coroutine, feeds the answer back down, and keeps going, so
-- `resume` returns only when the user coroutine yields or ends. Meanwhile
-- the user coroutine reads as "blocked" and cannot be resumed by hand.
local M = {}

local co_create = coroutine.create
local co_resume = coroutine.resume
local co_yield = coroutine.yield
local co_status = coroutine.status
local co_running = coroutine.running
local co_close = coroutine.close
local select = select
local error = error
local setmetatable = setmetatable

local USER_YIELD <const> = {} -- marker: a skynet.coroutine.yield
local SUSPENDED <const> = 1 -- made here, not inside resume
local RUNNING <const> = 2 -- inside skynet.coroutine.resume
local BLOCKED <const> = 3 -- suspended by the framework
local DEAD <const> = 4 -- finished or failed

local state = setmetatable({}, { __mode = "k" }) -- co -> SUSPENDED/RUNNING/BLOCKED/DEAD
local root_of = setmetatable({}, { __mode = "k" }) -- co -> plain skynet thread above it

local relay

-- The framework answered a blocked coroutine: give it the answer.
local function unblock(co, ...)
	state[co] = RUNNING
	return relay(co, co_resume(co, ...))
end

-- co came back from coroutine.resume with ok, ...: finish, return to the
-- user, or pass a framework suspension up.
function relay(co, ok, ...)
	if not ok then
		state[co] = DEAD
		root_of[co] = nil
		return false, ...
	end
	if co_status(co) == "dead" then
		state[co] = DEAD
		root_of[co] = nil
		return true, ...
	end
	if (...) == USER_YIELD then
		state[co] = SUSPENDED
		return true, select(2, ...)
	end
	state[co] = BLOCKED
	return unblock(co, co_yield(...))
end

function M.create(f)
	local co = co_create(f)
	state[co] = SUSPENDED
	return co
end

function M.resume(co, ...)
	local s = state[co]
	if s == BLOCKED then
		return false, "cannot resume a skynet coroutine suspend by skynet framework"
	end
	if s == nil then
		return false, "cannot resume none skynet coroutine"
	end
	if s ~= SUSPENDED then
		return co_resume(co, ...) -- the standard error for a dead or running coroutine
	end
	local parent = co_running()
	root_of[co] = root_of[parent] or parent
	state[co] = RUNNING
	return relay(co, co_resume(co, ...))
end

function M.yield(...)
	local co = co_running()
	if state[co] ~= RUNNING then
		error("Call skynet.coroutine.yield out of skynet.coroutine.resume", 2)
	end
	return co_yield(USER_YIELD, ...)
end

function M.status(co)
	if state[co] == BLOCKED then
		return "blocked"
	end
	return co_status(co)
end

function M.running()
	return co_running()
end

-- The standard isyieldable, as in skynet: true in any coroutine that is
-- not inside a C call that cannot yield, so also in a plain skynet thread
-- (a handler may block), though skynet.coroutine.yield needs a coroutine
-- started by skynet.coroutine.resume.
M.isyieldable = coroutine.isyieldable

-- (root skynet thread, false) for a skynet.coroutine, (co, true) otherwise.
function M.thread(co)
	co = co or co_running()
	local root = root_of[co]
	if root then
		return root, false
	end
	if state[co] then
		return nil, false -- made here but not running under any thread now
	end
	return co, true
end

function M.close(co)
	if state[co] == BLOCKED then
		return false, "skynet.coroutine.close: coroutine blocked in the framework"
	end
	if state[co] then
		state[co] = DEAD
	end
	root_of[co] = nil
	return co_close(co)
end

function M.wrap(f)
	local co = M.create(f)
	local function result(ok, ...)
		if not ok then
			local err = ...
			if co_status(co) == "dead" then
				co_close(co) -- run its to-be-closed variables, as coroutine.wrap does
			end
			error(err, 2)
		end
		return ...
	end
	return function(...)
		return result(M.resume(co, ...))
	end
end

return M
