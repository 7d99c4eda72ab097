---@meta skynet.sharemap
-- Editor help: `require "skynet.sharemap"`, a record shared through an stm
-- box and encoded with sproto (schema in sproto slot 0).

---The writer side: fields read and write the record; commit publishes it.
---@class skynet.sharemap.writer
---@field [string] any record fields
local writer = {}

---Encodes the record and publishes it as the new version.
function writer:commit() end

---An stm copy pointer for one reader (pass it in a message; every pointer must become exactly
---one reader).
---@return lightuserdata
function writer:copy() end

---The reader side: fields read the data last decoded (read-only).
---@class skynet.sharemap.reader
---@field [string] any record fields
local reader = {}

---Decodes the newest version when there is one: true, the data table and the bytes decoded;
---false when nothing new was committed (or the writer is gone).
---@return boolean, table?, integer?
function reader:update() end

local sharemap = {}

---Loads the schema file into sproto slot 0 (once per process).
---@param schemafile string
function sharemap.register(schemafile) end

---A writer of typename records over t (default {}).
---@param typename string
---@param t? table
---@return skynet.sharemap.writer
function sharemap.writer(typename, t) end

---A reader of typename records from a writer's copy pointer.
---@param typename string
---@param ptr lightuserdata
---@return skynet.sharemap.reader
function sharemap.reader(typename, ptr) end

return sharemap
