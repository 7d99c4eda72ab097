---@meta snax.hotfix
-- Editor help: `require "snax.hotfix"` returns one function that patches the
-- handlers of a running snax service (used by snaxd).

---Compiles source as a snax patch, joins its locals with the service's, replaces the handlers
---it defines and returns the results of the patch's hotfix(...). Raises and changes nothing on
---failure.
---@param funcs table[] the service's method records (snax.interface)
---@param source string
---@param ... any
---@return ...
local function hotfix(funcs, source, ...) end

return hotfix
