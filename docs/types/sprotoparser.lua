---@meta sprotoparser
-- Editor help: `require "sprotoparser"`, sproto schema text to the schema
-- binary.

local parser = {}

---The schema binary of a schema text; raises "syntax error at [file] line (n)" and the like.
---@param text string
---@param filename? string used in error messages
---@return string
function parser.parse(text, filename) end

---Prints a schema binary as hex, 16 bytes a line.
---@param bin string
function parser.dump(bin) end

return parser
