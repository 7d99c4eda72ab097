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

---One record per live service.
---@return skynet.metrics.service[]
function metrics.services() end

---@class skynet.metrics.timers
---@field pending integer timers waiting
---@field fired integer timers fired
---@field late_sum number seconds of lateness, summed
---@field buckets { le: number, count: integer }[] lateness histogram (per bucket, not cumulative)

---The timer thread's figures.
---@return skynet.metrics.timers
function metrics.timers() end

return metrics
