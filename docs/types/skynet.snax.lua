---@meta skynet.snax
-- Editor help: `require "skynet.snax"`, the client side of snax services.

---The interface of a snax service: method name -> id, per group.
---@class skynet.snax.interface
---@field name string
---@field accept table<string, integer>
---@field response table<string, integer>
---@field system table<string, integer>

---A handle on a snax service: obj.post.X(...) sends accept.X, obj.req.X(...) calls response.X
---(blocking) and returns its results.
---@class skynet.snax.object
---@field handle integer|string
---@field type string the service name
---@field post table<string, fun(...)>
---@field req table<string, async fun(...): ...>

local snax = {}

---The loader the config key snax_loader names, or nil.
---@return function?
function snax.loader() end

---The method ids of the snax service name (parsed once per name).
---@param name string
---@return skynet.snax.interface
function snax.interface(name) end

---The snax object of an existing service (the same object while anyone holds it).
---@param handle integer|string
---@param name string
---@return skynet.snax.object
function snax.bind(handle, name) end

---Launches a snax service and runs its init(...); returns the handle. Blocks.
---@async
---@param name string
---@param ... any init arguments
---@return integer
function snax.rawnewservice(name, ...) end

---Launches a snax service; returns its object. Blocks.
---@async
---@param name string
---@param ... any
---@return skynet.snax.object
function snax.newservice(name, ...) end

---The one instance of a snax service in this node (launched on first use). Blocks.
---@async
---@param name string
---@param ... any
---@return skynet.snax.object
function snax.uniqueservice(name, ...) end

---The one global instance of a snax service. Blocks.
---@async
---@param name string
---@param ... any
---@return skynet.snax.object
function snax.globalservice(name, ...) end

---Waits for the unique service name. Blocks.
---@async
---@param name string
---@return skynet.snax.object
function snax.queryservice(name) end

---Waits for the global service name. Blocks.
---@async
---@param name string
---@return skynet.snax.object
function snax.queryglobal(name) end

---The object of the running snax service.
---@return skynet.snax.object
function snax.self() end

---Runs the service's exit(...) and ends it. Blocks.
---@async
---@param obj skynet.snax.object
---@param ... any
function snax.kill(obj, ...) end

---Ends the running snax service (snax.kill(snax.self(), ...)).
---@async
---@param ... any
function snax.exit(...) end

---Patches the handlers of a running snax service with Lua source; returns the results of the
---patch's hotfix(...). Blocks.
---@async
---@param obj skynet.snax.object
---@param source string
---@param ... any
---@return ...
function snax.hotfix(obj, source, ...) end

---The service's profile: method name -> { count, time }. Blocks.
---@async
---@param obj skynet.snax.object
---@return table<string, { count: integer, time: number }>
function snax.profile_info(obj) end

---skynet.error(string.format(fmt, ...)).
---@param fmt string
---@param ... any
function snax.printf(fmt, ...) end

return snax
