---@meta http.httpc
-- Editor help: `require "http.httpc"`, an HTTP/1.1 client (one request per
-- connection). host is "[scheme://]name[:port]" (http or https). Every call
-- blocks and raises on failure; a status of 400 or more is a normal return.

---A response body read piece by piece: call it (or :padding()) for the next piece, nil at the
---end. Close it to drop the connection early.
---@class http.stream
---@field status integer
---@field header table<string, string|string[]>
---@field connected boolean
local stream = {}

---The next piece of the body, or nil at the end. Blocks.
---@async
---@return string?
function stream:padding() end

---Closes the connection.
function stream:close() end

---@class http.httpc
---@field timeout integer? centiseconds for the connect and the whole exchange (nil: none)
---@field stream_idle integer? centiseconds to wait for each piece of a stream
---@field body_limit integer? largest body accepted, in bytes
local httpc = {}

---Sends a request and reads the whole response: the status code and the body. recvheader,
---when given, receives the response header (lower-case names). Blocks.
---@async
---@param method string
---@param hostname string
---@param url string
---@param recvheader? table
---@param header? table<string, string>
---@param content? string
---@return integer code, string body
function httpc.request(method, hostname, url, recvheader, header, content) end

---A HEAD request: the status code. Blocks.
---@async
---@param hostname string
---@param url string
---@param recvheader? table
---@param header? table<string, string>
---@param content? string
---@return integer
function httpc.head(hostname, url, recvheader, header, content) end

---httpc.request("GET", hostname, url, recvheader, header, content). Blocks.
---@async
---@param hostname string
---@param url string
---@param recvheader? table
---@param header? table<string, string>
---@param content? string
---@return integer code, string body
function httpc.get(hostname, url, recvheader, header, content) end

---POSTs a form (application/x-www-form-urlencoded). Blocks.
---@async
---@param host string
---@param url string
---@param form table<string, any>
---@param recvheader? table
---@return integer code, string body
function httpc.post(host, url, form, recvheader) end

---Sends a request and returns once the response header is read; the body comes from the
---stream. Blocks.
---@async
---@param method string
---@param hostname string
---@param url string
---@param recvheader? table
---@param header? table<string, string>
---@param content? string
---@return http.stream
function httpc.request_stream(method, hostname, url, recvheader, header, content) end

---Resolves host names with skynet.dns (server, port: its name server; nil: resolv.conf).
---@param server? string
---@param port? integer
function httpc.dns(server, port) end

return httpc
