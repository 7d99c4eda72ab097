---@meta http.httpd
-- Editor help: `require "http.httpd"`, the server side of HTTP/1.1: read one
-- request, write one response.

local httpd = {}

---Reason phrases by status code.
---@type table<integer, string>
httpd.status_message = {}

---Reads one request with read (e.g. sockethelper.readfunc(fd)): 200, url, method, header, body,
---version; a status code alone for a rejected request (413, 400, 501, 505); or nil, err when
---the connection failed or the request line is bad. Blocks.
---@async
---@param read fun(n?: integer): string
---@param bodylimit? integer
---@return integer? code, any url, string? method, table? header, string? body, number? version
function httpd.read_request(read, bodylimit) end

---Writes a response; bodyfunc is the body string or a function returning the pieces (nil at
---the end). Returns true, or false and the error. Blocks.
---@async
---@param write fun(s: string)
---@param statuscode integer
---@param bodyfunc? string|fun(): string?
---@param header? table<string, string|string[]>
---@return boolean ok, any err
function httpd.write_response(write, statuscode, bodyfunc, header) end

return httpd
