---@meta skynet.harbor
-- Editor help: `require "skynet.harbor"`, global names (single node: the
-- cdummy service answers).

local harbor = {}

---Binds a global name to handle (default: this service). Never blocks.
---@param name string
---@param handle? integer
function harbor.globalname(name, handle) end

---The handle of a global name (waits until it is registered). Blocks.
---@async
---@param name string
---@return integer
function harbor.queryname(name) end

---Waits while harbor id is connected (single node: returns at once). Blocks.
---@async
---@param id integer
function harbor.link(id) end

---Waits until harbor id is connected (single node: never returns). Blocks.
---@async
---@param id integer
function harbor.connect(id) end

---Waits while the master is connected (single node: never returns). Blocks.
---@async
function harbor.linkmaster() end

return harbor
