---@meta skynet.sharedata.corelib
-- Editor help: `require "skynet.sharedata.corelib"`, read-only proxies onto
-- versions of the shared store (the reader side of skynet.sharedata).
-- Handles are light userdata naming a version.

local corelib = {}

---next() over a proxy (what pairs uses).
---@param p table
---@param key any
---@return any key, any value
function corelib.next(p, key) end

---A root proxy of the version h, or nil when it is gone already.
---@param h lightuserdata
---@return table?
function corelib.trybox(h) end

---A root proxy of the version h (raises when it is gone).
---@param h lightuserdata
---@return table
function corelib.box(h) end

---Moves a root proxy (and its subtables) to the version newh.
---@param p table
---@param newh lightuserdata
function corelib.update(p, newh) end

---Re-resolves the proxies of p's tree that still point at an older version.
---@param p table
function corelib.flush(p) end

---A plain table copy of the version h (or the subtree at the key path): true and it, or false
---when the version is gone.
---@param h lightuserdata
---@param ... any keys
---@return boolean ok, any value
function corelib.trycopy(h, ...) end

---Like trycopy, raising when the version is gone.
---@param h lightuserdata
---@param ... any
---@return any
function corelib.copy(h, ...) end

---A plain table copy of what the proxy p shows (or the subtree at the key path).
---@param p table
---@param ... any
---@return any
function corelib.copy_proxy(p, ...) end

---Live versions in the process and their bytes.
---@return integer count, integer bytes
function corelib.stat() end

return corelib
