---@meta sproto
-- Editor help: `require "sproto"`, schema objects and the RPC envelope.

---A protocol of a schema.
---@class sproto.protocol
---@field tag integer
---@field name string
---@field request? userdata the request type
---@field response? userdata|true the response type (true: a reply without a body)

---Sends a request or push: send(name, args, session, ud) -> packed message.
---@alias sproto.sender fun(name: string|integer, args?: table, session?: integer, ud?: any): string

---Answers a request: response(args, ud) -> packed message.
---@alias sproto.responder fun(args?: table, ud?: any): string

---One end of the RPC envelope.
---@class sproto.host
local host = {}

---Decodes a packed message (a string, or a buffer and size): "REQUEST", name, args, responder
---(nil without a session), ud; or "RESPONSE", session, args, ud.
---@param msg string|lightuserdata
---@param sz? integer
---@return "REQUEST"|"RESPONSE" kind, any, any, any, any
function host:dispatch(msg, sz) end

---A send function for the protocols of sp (the peer's schema).
---@param sp sproto
---@return sproto.sender
function host:attach(sp) end

---@class sproto
local sproto = {}

---A schema object from a schema binary (sprotoparser.parse); freed when collected.
---@param bin string
---@return sproto
function sproto.new(bin) end

---A schema object over a C schema it does not own (sprotoloader).
---@param cobj userdata
---@return sproto
function sproto.sharenew(cobj) end

---A schema object from schema text.
---@param text string
---@return sproto
function sproto.parse(text) end

---sproto's 0-packing.
---@param data string
---@return string
function sproto.pack(data) end

---Undoes sproto.pack (a string, or a buffer and size).
---@param data string|lightuserdata
---@param sz? integer
---@return string
function sproto.unpack(data, sz) end

---The protocol record of a name or tag (raises when unknown).
---@param sp sproto
---@param pname string|integer
---@return sproto.protocol
function sproto.queryproto(sp, pname) end

---True when the schema has the type.
---@param typename string
---@return boolean
function sproto:exist_type(typename) end

---True when the schema has the protocol (name or tag).
---@param pname string|integer
---@return boolean
function sproto:exist_proto(pname) end

---Encodes a table as typename.
---@param typename string
---@param tbl table
---@return string
function sproto:encode(typename, tbl) end

---Decodes typename from a string (or a buffer and size): the table and the bytes read.
---@param typename string
---@param data string|lightuserdata
---@param sz? integer
---@return table, integer
function sproto:decode(typename, data, sz) end

---encode then pack.
---@param typename string
---@param tbl table
---@return string
function sproto:pencode(typename, tbl) end

---unpack then decode.
---@param typename string
---@param data string|lightuserdata
---@param sz? integer
---@return table, integer
function sproto:pdecode(typename, data, sz) end

---A table of a type's default values; with kind "REQUEST" or "RESPONSE", of that part of the
---protocol typename (nil when it has none). Raises "Invalid type" for another kind.
---@param typename string
---@param kind? "REQUEST"|"RESPONSE"
---@return table?
function sproto:default(typename, kind) end

---Encodes the request of a protocol (empty string when it has none).
---@param pname string|integer
---@param tbl? table
---@return string, integer tag
function sproto:request_encode(pname, tbl) end

---Encodes the response of a protocol.
---@param pname string|integer
---@param tbl? table
---@return string
function sproto:response_encode(pname, tbl) end

---Decodes the request of a protocol: the table (nil without a request type) and its name.
---@param pname string|integer
---@param data string|lightuserdata
---@param sz? integer
---@return table?, string
function sproto:request_decode(pname, data, sz) end

---Decodes the response of a protocol (nil without a response type).
---@param pname string|integer
---@param data string|lightuserdata
---@param sz? integer
---@return table?
function sproto:response_decode(pname, data, sz) end

---An RPC host whose header type is packagename (default "package").
---@param packagename? string
---@return sproto.host
function sproto:host(packagename) end

return sproto
