---@meta bson
-- Editor help: `require "bson"`, BSON documents. BSON values Lua has no
-- type for are strings starting with a zero byte, made by the constructors.

---An encoded document: # is its size, tostring its bytes.
---@class bson.document: userdata
local document = {}

---Records where the top-level fixed-size values are, so doc[key] = v rewrites them in place.
function document:makeindex() end

---@class bson
---@field null string the BSON null value
---@field minkey string
---@field maxkey string
local bson = {}

---Encodes a table as a document.
---@param t table
---@return bson.document
function bson.encode(t) end

---Encodes the pairs k1, v1, k2, v2, ... as a document, in that order.
---@param ... any
---@return bson.document
function bson.encode_order(...) end

---Decodes a document (a bson userdata, or a pointer from to_lightuserdata).
---@param doc bson.document|lightuserdata
---@return table
function bson.decode(doc) end

---A BSON date (seconds since the epoch).
---@param sec integer
---@return string
function bson.date(sec) end

---A BSON timestamp; inc 0 when left out, from a process-wide counter when nil is passed.
---@param sec integer
---@param inc? integer
---@return string
function bson.timestamp(sec, inc) end

---A BSON regular expression.
---@param pattern string
---@param options? string
---@return string
function bson.regex(pattern, options) end

---BSON binary data.
---@param data string
---@return string
function bson.binary(data) end

---An object id from 24 hex characters, or a new one.
---@param hex24? string
---@return string
function bson.objectid(hex24) end

---A BSON int64.
---@param n integer
---@return string
function bson.int64(n) end

---A pointer to the bytes of a document or a string (v must outlive it).
---@param v bson.document|string
---@return lightuserdata
function bson.to_lightuserdata(v) end

---The BSON type name of a value and, for some types, its parts.
---@param v any
---@return string type, any ...
function bson.type(v) end

return bson
