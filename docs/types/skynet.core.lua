---@meta skynet.core
-- Editor help: `require "skynet.core"`, the C binding skynet.lua is built on.
-- Payloads "msg[, sz]": a string is copied; a light userdata with a size is
-- taken over (freed by the core on every path); nil sends nothing.

local core = {}

---Sends a message. session nil: the core allocates one and returns it. Returns the session
---(0 for a plain send), nil for a dead or unknown address, false for a payload too large.
---@param addr integer|string
---@param type integer PTYPE_*
---@param session integer?
---@param msg? lightuserdata|string
---@param sz? integer
---@return integer|false|nil
function core.send(addr, type, session, msg, sz) end

---Sends with a forged source (0: this service) and an explicit session; returns as send.
---@param addr integer|string
---@param source integer|string
---@param type integer
---@param session integer
---@param msg? lightuserdata|string
---@param sz? integer
---@return integer|false|nil
function core.redirect(addr, source, type, session, msg, sz) end

---A fresh session; nothing is sent.
---@return integer
function core.genid() end

---Runs a text command (GETENV, STAT, QUERY, ...); its result or nil.
---@param cmd string
---@param param? string
---@return string?
function core.command(cmd, param) end

---A command whose result is a number (integer when it reads as one).
---@param cmd string
---@param param? integer|string
---@return number?
function core.intcommand(cmd, param) end

---A command whose result is an address (":hex"), returned as a handle.
---@param cmd string
---@param param? string
---@return integer?
function core.addresscommand(cmd, param) end

---Logs the arguments (through tostring), joined by one space.
---@param ... any
function core.error(...) end

---The harbor id of a handle and whether it is remote.
---@param handle integer
---@return integer harbor_id, boolean is_remote
function core.harbor(handle) end

---Makes f the service's message callback. Without forward the core frees msg after f returns.
---@param f fun(type: integer, msg: lightuserdata, sz: integer, session: integer, source: integer)
---@param forward? boolean f keeps (or passes on) msg
function core.callback(f, forward) end

---Logs "<TRACE tag> <ns> text", with the Lua frames of co from level outwards when given.
---@param tag string
---@param text string
---@param co? thread
---@param level? integer
function core.trace(tag, text, co, level) end

---Copies a buffer into a string (a string passes through); nil for a NULL buffer.
---@param msg lightuserdata|string
---@param sz integer
---@return string?
function core.tostring(msg, sz) end

---Frees a light userdata buffer (strings are ignored).
---@param msg lightuserdata|string
---@param sz integer
function core.trash(msg, sz) end

---Serializes values (skynet.pack).
---@param ... any
---@return lightuserdata msg, integer sz
function core.pack(...) end

---Serializes values into a string.
---@param ... any
---@return string
function core.packstring(...) end

---Deserializes a buffer and size, or a string.
---@param msg lightuserdata|string
---@param sz? integer
---@return ...
function core.unpack(msg, sz) end

---Centiseconds since node start.
---@return integer
function core.now() end

---CLOCK_MONOTONIC in nanoseconds.
---@return integer
function core.hpc() end

---The wall clock in seconds since the epoch (moves with virtual time under timer = "virtual").
---@return number
function core.walltime() end

---Arms a timer: a response with the new session arrives after ti centiseconds.
---@param ti integer
---@return integer session, lightuserdata object
function core.timeout(ti) end

---Cancels this service's pending timer for session; false when none is pending.
---@param session integer
---@return boolean
function core.timeout_cancel(session) end

return core
