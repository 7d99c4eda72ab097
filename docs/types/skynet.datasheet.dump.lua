---@meta skynet.datasheet.dump
-- Editor help: `require "skynet.datasheet.dump"`, the binary image a
-- datasheet is published as.

local dump = {}

---The image string of a table (what builder.compile returns).
---@param t table
---@return string
function dump.dump(t) end

---The root table of an image and the map table -> table number; raises on bytes that are not
---an image.
---@param s string
---@return table root, table<table, integer> numbers
function dump.undump(s) end

---The new image renumbered so that tables at key paths that were tables in old keep their
---numbers.
---@param old string
---@param new string
---@return string
function dump.diff(old, new) end

return dump
