---@meta skynet.datacenter
-- Editor help: `require "skynet.datacenter"`, a node-wide tree of values
-- (served by datacenterd). Every call blocks; values are copied.

local datacenter = {}

---The value at the key path, nil when a key is missing.
---@async
---@param ... string|integer keys
---@return any
function datacenter.get(...) end

---Stores the last argument at the key path before it (nil deletes); returns the previous value.
---@async
---@param ... any keys, then the value
---@return any
function datacenter.set(...) end

---The value at the key path, waiting until a set fills it.
---@async
---@param ... string|integer
---@return any
function datacenter.wait(...) end

return datacenter
