---@meta sprotoloader
-- Editor help: `require "sprotoloader"`, schemas shared by every service of
-- the process in 16 slots (0..15).

local loader = {}

---Saves a schema binary in a slot (default 0); a slot is written once.
---@param bin string
---@param slot? integer
function loader.save(bin, slot) end

---Parses a schema text file and saves it in a slot.
---@param filename string
---@param slot? integer
function loader.register(filename, slot) end

---A schema object over the slot's schema (default 0).
---@param slot? integer
---@return sproto
function loader.load(slot) end

return loader
