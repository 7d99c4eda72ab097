---@meta snax.gateserver
-- Editor help: `require "snax.gateserver"`, a reusable TCP gate for clients
-- that frame messages with a 2-byte big-endian length.

---@class snax.gateserver.conf
---@field address? string default "0.0.0.0"
---@field port integer|string 0: any free port (conf.port is set to the bound one)
---@field maxclient? integer
---@field nodelay? boolean
---@field backlog? integer

---The gate's policy.
---@class snax.gateserver.handler
---@field connect fun(fd: integer, addr: string) a client arrived (not reading until openclient)
---@field message fun(fd: integer, msg: lightuserdata, sz: integer) one frame (the handler owns msg)
---@field disconnect? fun(fd: integer)
---@field error? fun(fd: integer, text: string)
---@field warning? fun(fd: integer, kb: integer)
---@field open? fun(source: integer, conf: snax.gateserver.conf): ...
---@field command? fun(cmd: string, source: integer, ...): ...
---@field embed? boolean do not start the service: start returns the command function

local gateserver = {}

---Starts reading a client's frames.
---@param fd integer
function gateserver.openclient(fd) end

---Names the service that consumes fd's frames, for flow control (nil: the gate).
---@param fd integer
---@param handle? integer|string
function gateserver.consumer(fd, handle) end

---Kicks a client (its frames are dropped; disconnect still comes).
---@param fd integer
function gateserver.closeclient(fd) end

---Starts the gate service with handler (commands "open" and "close" plus handler.command).
---With handler.embed, returns the command function f(cmd, source, ...) instead.
---@param handler snax.gateserver.handler
---@return fun(cmd: string, source: integer, ...): ...|nil
function gateserver.start(handler) end

return gateserver
