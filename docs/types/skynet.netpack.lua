---@meta skynet.netpack
-- Editor help: `require "skynet.netpack"`, client framing: a 2-byte
-- big-endian length, then that many payload bytes.

---The frame queue filter returns (keep the one it returns).
---@class skynet.netpack.queue: userdata

local netpack = {}

---Feeds a PTYPE_SOCKET message. Returns the queue and a kind with its values: "data", fd, ptr,
---sz (one frame; the caller owns ptr); "more" (take frames with pop); "open", fd, "ip:port";
---"close", fd; "error", fd, text; "warning", fd, kb; "init", id, ip, port; or no kind.
---@param queue skynet.netpack.queue?
---@param msg lightuserdata
---@param sz integer
---@return skynet.netpack.queue? queue, string? kind, any ...
function netpack.filter(queue, msg, sz) end

---The oldest queued frame (the caller owns ptr), or nothing. Works as an iterator.
---@param queue skynet.netpack.queue
---@return integer? fd, lightuserdata? ptr, integer? sz
function netpack.pop(queue) end

---A new buffer holding the 2-byte header and the payload (the caller owns it); raises for
---payloads of 65536 bytes or more.
---@param data string|lightuserdata
---@param sz? integer with a lightuserdata
---@return lightuserdata ptr, integer sz
function netpack.pack(data, sz) end

---Copies a buffer into a string and frees it.
---@param ptr lightuserdata
---@param sz integer
---@return string
function netpack.tostring(ptr, sz) end

---Frees every queued and partial frame; the queue stays usable.
---@param queue skynet.netpack.queue
function netpack.clear(queue) end

return netpack
