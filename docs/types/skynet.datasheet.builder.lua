---@meta skynet.datasheet.builder
-- Editor help: `require "skynet.datasheet.builder"`, publishing datasheets.

local builder = {}

---Publishes version 1 of name (once per name per service). Blocks.
---@async
---@param name string
---@param v table|string a table, or an image from compile
function builder.new(name, v) end

---Publishes a new version of name (only in the service that created it). Blocks.
---@async
---@param name string
---@param v table|string
function builder.update(name, v) end

---The image string of a table (never blocks).
---@param v table
---@return string
function builder.compile(v) end

return builder
