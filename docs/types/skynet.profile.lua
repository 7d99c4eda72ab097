---@meta skynet.profile
-- Editor help: `require "skynet.profile"`, snlua's coroutine profiler.

local profile = {}

---Starts accounting the running time of co (default: the running coroutine).
---@param co? thread
function profile.start(co) end

---Seconds co ran since profile.start(co); raises without a start.
---@param co? thread
---@return number
function profile.stop(co) end

---coroutine.resume that accounts the time co runs to its profile record.
---@param co thread
---@param ... any
---@return boolean ok, any ...
function profile.resume(co, ...) end

---coroutine.wrap with the same accounting.
---@param f function
---@return fun(...): ...
function profile.wrap(f) end

return profile
