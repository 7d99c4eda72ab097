---@meta http.server
-- Editor help: `require "http.server"`, an HTTP/1.1 server loop over
-- http.httpd in the calling service.

---@class http.server.request
---@field id integer socket id
---@field addr string peer "ip:port"
---@field method string
---@field url string
---@field path string decoded
---@field query string raw
---@field header table<string, string|string[]>
---@field body string
---@field version number 1.0 or 1.1
---@field read fun(n?: integer): string
---@field write fun(s: string)

---Returns code, body (a string, or a function giving the pieces) and header; returns nothing
---when it took the connection over (e.g. websocket.accept with options.upgrade).
---@alias http.server.handler async fun(req: http.server.request): integer?, (string|fun(): string?)?, table?

---@class http.server.options
---@field handler http.server.handler
---@field address? string default "127.0.0.1"
---@field port? integer default 0 (any free port)
---@field protocol? "http"|"https"
---@field certfile? string https
---@field keyfile? string https
---@field tls_ctx? ltls.ctx https, instead of certfile/keyfile
---@field bodylimit? integer default 1 MiB
---@field timeout? integer centiseconds per request, default 1000
---@field max_connections? integer default 1024
---@field keepalive? boolean default true

local server = {}

---Starts listening: the listen id, the bound address and port. Blocks.
---@async
---@param options http.server.options
---@return integer id, string addr, integer port
function server.listen(options) end

---Stops listening (open connections finish).
---@async
---@param id integer
function server.close(id) end

---Open connections of a listener.
---@param id integer
---@return integer
function server.connections(id) end

return server
