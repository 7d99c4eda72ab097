---@meta http.url
-- Editor help: `require "http.url"`, request targets and query strings.

local url = {}

---Decodes "+" as a space and %XX as a byte.
---@param s string
---@return string
function url.decode(s) end

---The path (decoded) and the query (raw, "" when there is none) of a request target.
---@param u string
---@return string path, string query
function url.parse(u) end

---key=value pairs separated by "&", decoded; a repeated key becomes an array of its values.
---@param q string
---@return table<string, string|string[]>
function url.parse_query(q) end

return url
