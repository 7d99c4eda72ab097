---@meta skynet.sharetable
-- Editor help: `require "skynet.sharetable"`, named tables loaded once and
-- read by every service without copying (through read-only proxies).

local sharetable = {}

---Loads (or reloads) a Lua file whose returned table is shared under the file name. Blocks.
---@async
---@param filename string
---@param ... any arguments of the chunk
function sharetable.loadfile(filename, ...) end

---Loads Lua source whose returned table is shared under name. Blocks.
---@async
---@param name string
---@param source string
---@param ... any
function sharetable.loadstring(name, source, ...) end

---Shares a copy of a table under name. Blocks.
---@async
---@param name string
---@param tbl table
function sharetable.loadtable(name, tbl) end

---A read-only proxy of name's current version, or nil. Blocks.
---@async
---@param name string
---@return table?
function sharetable.query(name) end

---Proxies of several names (all names when list is nil): name -> proxy. Blocks.
---@async
---@param list? string[]
---@return table<string, table>
function sharetable.queryall(list) end

---Moves this service's proxies of the names to their current versions, in place. Blocks.
---@async
---@param ... string
function sharetable.update(...) end

return sharetable
