---@meta http.internal
-- Editor help: `require "http.internal"`, HTTP/1.1 header, body and chunked
-- body parsing shared by httpd, httpc and websocket. An interface is a table
-- of closures over one connection: read(n), write(s), readall() (and init,
-- close for TLS).

---@class http.interface
---@field read fun(n?: integer): string
---@field write fun(s: string)
---@field readall fun(): string
---@field init? fun(host?: string)
---@field close? fun()

---@class http.internal
---@field HEADER_LIMIT integer largest header, in bytes (8192)
local internal = {}

---Reads until the blank line ending a header; appends each line to lines and returns the bytes
---that followed, or nil when the header is too long. header: the bytes read so far. Blocks.
---@async
---@param read fun(n?: integer): string
---@param lines string[]
---@param header string
---@return string?
function internal.recvheader(read, lines, header) end

---Parses lines[from..] into header (lower-case names, repeated names as arrays); nil on a bad
---line.
---@param lines string[]
---@param from integer
---@param header table
---@return table?
function internal.parseheader(lines, from, header) end

---Reads one chunk: data, rest ("" for the last chunk), or nil on bad framing or a chunk larger
---than room. Blocks.
---@async
---@param read fun(n?: integer): string
---@param body string bytes already read
---@param room? integer
---@return string? data, string? rest
function internal.readchunk(read, body, room) end

---Reads the trailer lines after the last chunk into header; the bytes after it, or nil.
---Blocks.
---@async
---@param read fun(n?: integer): string
---@param header table
---@param body string
---@return string?
function internal.recvtrailer(read, header, body) end

---Decodes a chunked body: the body, header (trailers merged) and the bytes past the end; nil on
---bad framing or over limit. Blocks.
---@async
---@param read fun(n?: integer): string
---@param limit? integer
---@param header table
---@param body string
---@return string? body, table? header, string? rest
function internal.recvchunkedbody(read, limit, header, body) end

---Writes a request and reads the status line and header: code, the bytes after the header, and
---the header table. Blocks.
---@async
---@param interface http.interface
---@param method string
---@param host string
---@param url string
---@param recvheader? table
---@param header? table<string, string>
---@param content? string
---@return integer code, string body, table header
function internal.request(interface, method, host, url, recvheader, header, content) end

---Reads the rest of a response body (limit: largest body accepted). Blocks.
---@async
---@param interface http.interface
---@param code integer
---@param body string
---@param header table
---@param limit? integer
---@return string
function internal.response(interface, code, body, header, limit) end

---A stream over the body of a response whose header was read; onclose(stream) runs once when
---it ends or is closed.
---@param interface http.interface
---@param code integer
---@param body string
---@param header table
---@param onclose? fun(stream: http.stream)
---@return http.stream
function internal.response_stream(interface, code, body, header, onclose) end

return internal
