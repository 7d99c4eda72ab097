---@meta skynet.loglimit
-- Editor help: `require "skynet.loglimit"`, log lines at a bounded rate.

---Formats (string.format) and writes one line with skynet.error, unless this period's limit
---is reached: then the call is only counted, and one line with the count is written when the
---period ends. Never blocks.
---@alias skynet.loglimit.log fun(fmt: string, ...: any)

local loglimit = {}

---A new limiter: at most `lines` lines (default 10) per `period_s` seconds (default 1), then
---one line with the count of the rest. Raises on a bad argument. Never blocks.
---@param lines? integer
---@param period_s? number
---@return skynet.loglimit.log
function loglimit.new(lines, period_s) end

return loglimit
