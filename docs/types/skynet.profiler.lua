---@meta skynet.profiler
-- Editor help: `require "skynet.profiler"`, the node's sampling profiler.

local profiler = {}

---@class skynet.profiler.status
---@field running boolean a profile runs
---@field target integer the handle sampled, 0 for every service
---@field hz integer samples a second
---@field elapsed number seconds since start (0 when not running)
---@field ticks integer sampler wake-ups
---@field signals integer workers asked for a sample
---@field samples integer stacks recorded
---@field cost number seconds the workers spent taking them
---@field stacks integer distinct stacks
---@field last_samples? integer samples of the last stopped profile (nil before the first)

---Starts a profile of one service (a handle, ":hex" or ".name") or of every Lua service (nil
---or "all"), at hz samples a second (1 to 1000, default 100). Returns true, or nil and why when
---a profile runs already. Raises on a bad argument.
---@param address? integer|string
---@param hz? integer
---@return true|nil ok
---@return string? why
function profiler.start(address, hz) end

---Stops the running profile and keeps it as the last one: its folded text (most samples first)
---and the number of samples; also written to file when given. nil and why when none runs or
---the file cannot be written.
---@param file? string
---@return string|nil text
---@return integer|string samples_or_why
function profiler.stop(file) end

---The last stopped profile, as stop; nil and "no profile yet" before the first.
---@param file? string
---@return string|nil text
---@return integer|string samples_or_why
function profiler.dump(file) end

---Whether a profile runs, and its figures.
---@return skynet.profiler.status
function profiler.status() end

return profiler
