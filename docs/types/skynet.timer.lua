---@meta skynet.timer
-- Editor help: `require "skynet.timer"`, repeating, wall-clock and cron
-- schedules, and calls with a deadline. Requiring it also sets
-- skynet.timeout_call.

---@class skynet.timer.opts
---@field name? string added to the log line of a failed run
---@field stop_on_error? boolean end the schedule when f raises
---@field tz? string|table time zone of cron ("local" default, "UTC", "+08:00", a zone name)

---A live schedule.
---@class skynet.timer.handle
---@field kind "every"|"every_after"|"at"|"cron"
---@field cancelled boolean
---@field due? integer every: skynet.now() of the next grid point
---@field target? integer at, cron: the epoch second of the next run
local handle = {}

---Stops later runs (a run in progress finishes).
function handle:cancel() end

local timer = {}

---Runs f(missed, handle) every period_cs centiseconds on a fixed grid (missed: grid points
---skipped). Never blocks.
---@param period_cs integer
---@param f fun(missed: integer, handle: skynet.timer.handle)
---@param opts? skynet.timer.opts
---@return skynet.timer.handle
function timer.every(period_cs, f, opts) end

---Runs f(handle) delay_cs after the call, then delay_cs after each run ends.
---@param delay_cs integer
---@param f fun(handle: skynet.timer.handle)
---@param opts? skynet.timer.opts
---@return skynet.timer.handle
function timer.every_after(delay_cs, f, opts) end

---Runs f(handle) once when the wall clock reaches t (epoch seconds).
---@param t number
---@param f fun(handle: skynet.timer.handle)
---@param opts? skynet.timer.opts
---@return skynet.timer.handle
function timer.at(t, f, opts) end

---Runs f(t, handle) at each fire instant t of a cron spec ("min hour dom month dow", names
---and @daily style macros); raises naming a bad field.
---@param spec string
---@param f fun(t: integer, handle: skynet.timer.handle)
---@param opts? skynet.timer.opts
---@return skynet.timer.handle
function timer.cron(spec, f, opts) end

---The first fire instant of spec after epoch second t (default: now) in zone tz, or nil when
---none comes within 30 years.
---@param spec string
---@param t? integer
---@param tz? string|table
---@return integer?
function timer.cron_next(spec, t, tz) end

---The wall clock the library uses (epoch seconds).
---@return number
function timer.walltime() end

---Test hook: replaces the wall clock with f (nil restores the real one).
---@param f? fun(): number
function timer.set_wallclock(f) end

---skynet.call with a deadline: true and the results, or false, "timeout". Blocks.
---@async
---@param ti integer centiseconds
---@param addr integer|string
---@param typename string
---@param ... any
---@return boolean ok, any ...
function timer.timeout_call(ti, addr, typename, ...) end

return timer
