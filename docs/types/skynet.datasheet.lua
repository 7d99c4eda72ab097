---@meta skynet.datasheet
-- Editor help: `require "skynet.datasheet"`, the reader side of datasheets.

local datasheet = {}

---The read-only root proxy of name (the same object on every call); follows updates. Raises
---when name does not exist. Blocks on the first query of a name.
---@async
---@param name string
---@return table
function datasheet.query(name) end

return datasheet
