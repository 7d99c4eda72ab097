---@meta skynet.mqueue
-- Editor help: `require "skynet.mqueue"` (deprecated: use skynet.queue),
-- serial handling of the messages of protocol "queue".

local mqueue = {}

---Sets the handler (once per service): f(...) runs for every queue message, one at a time.
---@param f fun(...): ...
function mqueue.register(f) end

---Sends a queue request and returns the handler's results (raises its error). Blocks.
---@async
---@param addr integer|string
---@param ... any
---@return ...
function mqueue.call(addr, ...) end

---Sends a queue message without waiting.
---@param addr integer|string
---@param ... any
function mqueue.send(addr, ...) end

---Messages queued and not started yet.
---@return integer
function mqueue.size() end

return mqueue
