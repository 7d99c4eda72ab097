---@meta skynet.top
-- Editor help: `require "skynet.top"`, the node's services like htop (the
-- console's top, the metrics port's /top page).

local top = {}

---@class skynet.top.service: skynet.metrics.service
---@field address string ":0000000b"
---@field name string the launcher's description, or the C module's name
---@field state string "-", "ok", "over cpu", "throttled", ...
---@field policy "warn"|"throttle"|"kill"

---@class skynet.top.snapshot
---@field services skynet.top.service[]
---@field workers skynet.metrics.worker[] with id (from 0) and address
---@field timer_lag number seconds: how late the most recent timer fired
---@field budget skynet.metrics.budget
---@field now integer skynet.now() when taken

---The launcher's description of each service it started, by handle; nil when it does not answer.
---@return table<integer, string>|nil
function top.launcher_names() end

---Reads every figure at once (and asks the launcher for names).
---@return skynet.top.snapshot
function top.snapshot() end

---The budget bits of a service as words.
---@param bits integer
---@return string state
---@return string policy
function top.budget_state(bits) end

---The services ordered by sort: "cpu" (default), "msg", "queue", "mem", "timers", "address".
---@param snap skynet.top.snapshot
---@param sort? string
---@return skynet.top.service[]
function top.sorted(snap, sort) end

---The console's table, one string per line.
---@param snap skynet.top.snapshot
---@param n? integer services shown (default 20)
---@param sort? string
---@return string[]
function top.text(snap, n, sort) end

---The same as JSON (the /top.json answer).
---@param snap skynet.top.snapshot
---@param n? integer
---@param sort? string
---@return string
function top.json(snap, n, sort) end

---An http.server handler for /top (the live page) and /top.json?n=&sort= (its data).
---@param req table the request (path, query, method)
---@return integer code
---@return string body
---@return table? header
function top.serve(req) end

return top
