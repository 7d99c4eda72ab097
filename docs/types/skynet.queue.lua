---@meta skynet.queue
-- Editor help: `require "skynet.queue"` returns a constructor of critical
-- sections: `local cs = require "skynet.queue"()`, then `cs(f, ...)`.

---Runs f(...) alone among the users of this section (FIFO admission, re-entrant) and returns
---its results. Blocks while another coroutine holds it.
---@alias skynet.queue.section async fun(f: function, ...): ...

---A new critical section.
---@return skynet.queue.section
local function queue() end

return queue
