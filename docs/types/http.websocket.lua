---@meta http.websocket
-- Editor help: `require "http.websocket"`, RFC 6455 WebSocket server and
-- client over ws or wss. A websocket's id is its socket id.

---The server's callbacks (all optional); they run in the coroutine of accept.
---@class http.websocket.handle
---@field connect? fun(id: integer)
---@field handshake? fun(id: integer, header: table, url: string)
---@field message? fun(id: integer, data: string, op: "text"|"binary")
---@field ping? fun(id: integer)
---@field pong? fun(id: integer)
---@field close? fun(id: integer, code?: integer, reason?: string)
---@field error? fun(id: integer, err: any)
---@field warning? fun(ws: table, kb: integer)

---The request http.httpd already read (interface: the closures it read with).
---@class http.websocket.upgrade
---@field header table
---@field method string
---@field url string
---@field version? number
---@field interface? http.interface

---@class http.websocket.options
---@field upgrade? http.websocket.upgrade
---@field max_size? integer largest frame and message (server default 256 KiB)
---@field protocols? string[] sub-protocols accepted (default { "chat" })
---@field strict? boolean refuse unmasked client frames, RSV bits and bad UTF-8

local websocket = {}

---Serves a websocket session on socket id in the calling coroutine until it ends: true, or
---false and an error. Blocks.
---@async
---@param id integer
---@param handle http.websocket.handle
---@param protocol? "ws"|"wss"
---@param addr? string peer address
---@param options? http.websocket.options
---@return boolean ok, any err
function websocket.accept(id, handle, protocol, addr, options) end

---Connects to a ws:// or wss:// url and does the handshake; returns the id (raises on
---failure). Blocks.
---@async
---@param url string
---@param header? table<string, string>
---@param timeout? integer centiseconds
---@param options? { max_size?: integer, strict?: boolean }
---@return integer id
function websocket.connect(url, header, timeout, options) end

---Reads the next message: data, op ("text"/"binary"); false and the close payload when the peer
---closed. Raises on a protocol error. Blocks.
---@async
---@param id integer
---@return string|false data, string op_or_payload
function websocket.read(id) end

---Sends a message (fmt "text" by default, or "binary").
---@param id integer
---@param data string
---@param fmt? "text"|"binary"
---@param masking_key? integer
function websocket.write(id, data, fmt, masking_key) end

---Sends a ping.
---@param id integer
function websocket.ping(id) end

---Sends a close frame (with code and reason) and closes.
---@param id integer
---@param code? integer
---@param reason? string
function websocket.close(id, code, reason) end

---The peer address of an open websocket, or nil.
---@param id integer
---@return string?
function websocket.addrinfo(id) end

---The client address the X-Real-IP request header gave, or nil.
---@param id integer
---@return string?
function websocket.real_ip(id) end

---True when the websocket is not open (closed or unknown).
---@param id integer
---@return boolean
function websocket.is_close(id) end

---The bytes of one frame (masked with mask_key when given).
---@param op integer opcode
---@param payload string
---@param mask_key? integer
---@return string
function websocket.encode_frame(op, payload, mask_key) end

---A message reader over any read(n) function: next() -> data, op, or nil and the close
---payload; raises { ws_code, text } on a protocol error.
---@param read fun(n: integer): string
---@param mode? "server"|"client" server reads client frames
---@param options? { max_size?: integer, strict?: boolean }
---@return fun(): string?, string
function websocket.decoder(read, mode, options) end

return websocket
