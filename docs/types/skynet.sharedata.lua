---@meta skynet.sharedata
-- Editor help: `require "skynet.sharedata"`, named read-only trees shared by
-- every service of the node (served by sharedatad). Every call blocks.

local sharedata = {}

---Creates name from a table, a string of Lua source, or "@file" (a file whose globals are the
---data; the extra arguments are passed to it).
---@async
---@param name string
---@param v table|string
---@param ... any
function sharedata.new(name, v, ...) end

---Replaces the data of name (same forms as new); this service sees it when update returns.
---@async
---@param name string
---@param v table|string
---@param ... any
function sharedata.update(name, v, ...) end

---Deletes name; proxies keep the data they had.
---@async
---@param name string
function sharedata.delete(name) end

---A read-only proxy of name's current data (the same object on every call); follows updates.
---@async
---@param name string
---@return table
function sharedata.query(name) end

---Releases old versions this service no longer needs (then collects garbage).
function sharedata.flush() end

---A plain table copy of name's data, or of the subtree at the key path.
---@async
---@param name string
---@param ... string|integer keys
---@return any
function sharedata.deepcopy(name, ...) end

return sharedata
