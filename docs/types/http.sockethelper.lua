---@meta http.sockethelper
-- Editor help: `require "http.sockethelper"`, read/write closures over a
-- socket id and a connect with a timeout. Every failure raises the shared
-- error object socket_error (compare with ==).

local sockethelper = {}

---The error object every failure raises; calling it stores a text for the next tostring.
---@type table|fun(info: any): table
sockethelper.socket_error = {}

---A read closure over fd: read(n) exactly n bytes, read() what is available; pre: bytes to
---return first. Keeps a pushback buffer (see unread). Reads block.
---@param fd integer
---@param pre? string
---@return async fun(n?: integer): string
function sockethelper.readfunc(fd, pre) end

---Puts s back in front of what read returns next; true when read keeps a pushback buffer.
---@param read function
---@param s string
---@return boolean
function sockethelper.unread(read, s) end

---Registers the pushback function of a read closure made elsewhere (e.g. tlshelper).
---@param read function
---@param f fun(s: string)
function sockethelper.register_unread(read, f) end

---A write closure over fd (raises socket_error when the socket is gone).
---@param fd integer
---@return fun(s: string)
function sockethelper.writefunc(fd) end

---Reads until the peer closes. Blocks.
---@async
---@param fd integer
---@return string|false
function sockethelper.readall(fd) end

---skynet.socket.close. Blocks.
---@async
---@param id integer
function sockethelper.close(id) end

---skynet.socket.shutdown.
---@param id integer
function sockethelper.shutdown(id) end

---Connects, giving up after timeout centiseconds (nil: no limit); raises socket_error. Blocks.
---@async
---@param host string
---@param port integer
---@param timeout? integer
---@return integer fd
function sockethelper.connect(host, port, timeout) end

---Closes fd after cs centiseconds unless the returned cancel function is called first (it
---returns true when the deadline had passed); what names the log line.
---@param fd integer
---@param cs integer
---@param what? string
---@return fun(): boolean cancel
function sockethelper.deadline(fd, cs, what) end

return sockethelper
