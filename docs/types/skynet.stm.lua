---@meta skynet.stm
-- Editor help: `require "skynet.stm"`, a single-writer, many-reader box
-- holding the latest version of a message, shared by the services of a
-- process.

---Publishes a new version: writer(msg, sz) (a buffer taken over) or writer(str).
---@alias skynet.stm.writer fun(msg: lightuserdata|string, sz?: integer)

---Calls f with a version newer than the last one seen: true and f's results, else false.
---@alias skynet.stm.reader fun(f: fun(msg: lightuserdata, sz: integer, ud: any): ..., ud?: any): boolean, ...

local stm = {}

---A new box whose first version is the message (a buffer is taken over, a string copied).
---@param msg lightuserdata|string
---@param sz? integer
---@return skynet.stm.writer
function stm.new(msg, sz) end

---A pointer to hand to another service; turn it into exactly one reader with newcopy.
---@param writer skynet.stm.writer
---@return lightuserdata
function stm.copy(writer) end

---A reader from a pointer stm.copy made.
---@param ptr lightuserdata
---@return skynet.stm.reader
function stm.newcopy(ptr) end

return stm
