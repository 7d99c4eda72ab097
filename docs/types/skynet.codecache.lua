---@meta skynet.codecache
-- Editor help: `require "skynet.codecache"` (snlua's process-wide cache of
-- compiled Lua files; also reachable as skynet.cache).

---@class skynet.codecache
local codecache = {}

---Like loadfile, through the cache: each file is compiled once per process.
---@param path string
---@param mode? string "b", "t" or "bt"
---@param env? table the chunk's _ENV
---@return function? chunk, string? err
function codecache.loadfile(path, mode, env) end

---Drops every cached file: later loads compile again.
function codecache.clear() end

---This state's cache mode: "ON" (cache), "EXIST" (only use what is cached) or "OFF". With m,
---sets it. Returns the previous mode.
---@param m? "ON"|"EXIST"|"OFF"
---@return "ON"|"EXIST"|"OFF"
function codecache.mode(m) end

return codecache
