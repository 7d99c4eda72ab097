---@meta skynet.snlua
-- Editor help: `require "skynet.snlua"`, the hooks snlua gives skynet.lua
-- and its lazy parts (only inside snlua).

local snlua = {}

---Marks the chunk of the Lua function f (default: the caller) as framework code, which a
---SIGNAL break waits out. Returns false for a C function; raises for a stripped chunk or when
---the table of marked chunks is full.
---@param f? function
---@return boolean
function snlua.framework(f) end

---Calls f(...) under a memory grant: what it allocates may pass skynet.memlimit, and the limit
---is lifted by what it keeps (bounded). Returns what f returns.
---@param f function
---@param ... any
---@return ...
function snlua.granted(f, ...) end

return snlua
