---@meta skynet.profiler.page
-- Editor help: `require "skynet.profiler.page"`, the last profile over HTTP.

local page = {}

---Answers /profile (the flame graph page), /profile.folded and /profile/assets/... for an
---http.server handler: status, body, headers; nil for any other path.
---@param req table the http.server request (method, path)
---@return integer|nil status
---@return string? body
---@return table<string, string>? headers
function page.serve(req) end

return page
