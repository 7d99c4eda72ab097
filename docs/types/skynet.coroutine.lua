---@meta skynet.coroutine
-- Editor help: `require "skynet.coroutine"`, user coroutines that may call
-- blocking skynet functions (same functions as the standard coroutine
-- library; a coroutine blocked in the framework reads as "blocked").

local coroutine = {}

---A new user coroutine.
---@param f function
---@return thread
function coroutine.create(f) end

---Resumes co until it yields or ends (framework yields inside are passed up).
---@param co thread
---@param ... any
---@return boolean ok, any ...
function coroutine.resume(co, ...) end

---Yields to the resumer (raises outside skynet.coroutine.resume).
---@param ... any
---@return ...
function coroutine.yield(...) end

---"running", "suspended", "normal", "dead" or "blocked" (waiting in the framework).
---@param co thread
---@return string
function coroutine.status(co) end

---The running coroutine.
---@return thread co, boolean ismain
function coroutine.running() end

---The standard isyieldable: true unless co (default: the running one) is inside a C call
---that cannot yield; true in a plain skynet thread as well.
---@param co? thread
---@return boolean
function coroutine.isyieldable(co) end

---For a user coroutine, the skynet thread running it and false; else co and true.
---@param co? thread
---@return thread, boolean
function coroutine.thread(co) end

---Closes a suspended or dead coroutine (false and an error for one blocked in the framework).
---@param co thread
---@return boolean ok, any err
function coroutine.close(co) end

---A function that resumes a new user coroutine running f, raising its errors.
---@param f function
---@return fun(...): ...
function coroutine.wrap(f) end

return coroutine
