---@meta client.socket
-- Editor help: `require "client.socket"` (luaclib/client.so), for client
-- scripts and test bots run by a plain lua5.4, never in a service: every
-- call blocks the program. Socket ids are file descriptors.

local socket = {}

---Opens a TCP connection to host:port (waits), then makes it non-blocking.
---Raises "Connect <host> <port> failed".
---@param host string
---@param port integer
---@return integer fd
function socket.connect(host, port) end

---Writes all the bytes, unchanged (no framing). Raises "socket error: ...".
---@param fd integer
---@param bytes string
function socket.send(fd, bytes) end

---What has arrived (at most 64 KiB), "" once the peer has closed, nil when
---nothing has arrived yet. Never waits.
---@param fd integer
---@return string?
function socket.recv(fd) end

---Closes the connection.
---@param fd integer
function socket.close(fd) end

---Sleeps us microseconds.
---@param us integer
function socket.usleep(us) end

---The next line of standard input without its newline, or nil while no whole
---line has come; nil, "eof" once the input has ended. Never waits.
---@return string? line
---@return string? eof
function socket.readstdin() end

return socket
