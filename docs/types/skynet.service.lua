---@meta skynet.service
-- Editor help: `require "skynet.service"`, node-unique services made from a
-- Lua function (which may not capture locals: its only upvalue is _ENV).

local service = {}

---Launches mainfunc once as the service name (later calls return the same handle). Blocks.
---@async
---@param name string
---@param mainfunc function
---@param ... any arguments of mainfunc
---@return integer
function service.new(name, mainfunc, ...) end

---The handle of name, waiting until it is launched. Blocks.
---@async
---@param name string
---@return integer
function service.query(name) end

---Forgets and kills the service name; false when there was none. Blocks.
---@async
---@param name string
---@return boolean
function service.close(name) end

return service
