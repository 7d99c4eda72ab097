---@meta skynet.metrics
-- Editor help: `require "skynet.metrics"`, the node-wide figures the metrics
-- service exports.

local metrics = {}

---@class skynet.metrics.service
---@field handle integer
---@field mqlen integer messages waiting
---@field message integer messages handled
---@field cpu number seconds of CPU
---@field module string its C module: "snlua" for a Lua service, "logger", "gate", ...
---@field heap integer its Lua heap in bytes at the end of its last batch (0: none)
---@field cpu_share number share of a second in its callback, over the last complete budget window
---@field message_rate integer messages per second, over the last complete budget window
---@field timers integer its pending timers
---@field budget integer budget state bits (0x01 cpu, 0x02 memory, 0x04 queue over; 0x08 throttled;
--- 0x10 watched; policy in bits 8..9)

---One record per live service.
---@return skynet.metrics.service[]
function metrics.services() end

---@class skynet.metrics.timers
---@field pending integer timers waiting
---@field fired integer timers fired
---@field late_sum number seconds of lateness, summed
---@field lag number seconds: how late the most recent timer fired
---@field buckets { le: number, count: integer }[] lateness histogram (per bucket, not cumulative)

---The timer thread's figures.
---@return skynet.metrics.timers
function metrics.timers() end

---@class skynet.metrics.worker
---@field handle integer the service it runs now, 0 when idle
---@field running number seconds the current message has taken so far
---@field label string the service's "module param", "" when idle

---One record per worker thread, in id order.
---@return skynet.metrics.worker[]
function metrics.workers() end

---@class skynet.metrics.budget
---@field overruns { cpu: integer, memory: integer, queue: integer } windows over a limit, per measure
---@field throttles integer queues deferred by the throttle
---@field kills integer services retired over budget

---The node's budget counters since boot.
---@return skynet.metrics.budget
function metrics.budget() end

return metrics
