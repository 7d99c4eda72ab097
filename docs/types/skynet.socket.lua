---@meta skynet.socket
-- Editor help: `require "skynet.socket"`, the TCP/UDP API of a service.
-- Reads block only the calling coroutine; writes never block.

---A payload to send: a string, a table of strings, or a buffer and its size.
---@alias skynet.socket.payload string|string[]|lightuserdata|userdata

local socket = {}

---Connects to host:port (a name is resolved with skynet.dns). Returns the id, or nil and an
---error. Blocks until connected or failed.
---@async
---@param host string host, or "host:port" with port nil
---@param port? integer
---@return integer? id, string? err
function socket.open(host, port) end

---Same as socket.open.
---@async
---@param host string
---@param port? integer
---@return integer? id, string? err
function socket.connect(host, port) end

---Listens on host:port (port 0: any free port). Returns the id and the bound address; raises
---"cannot listen on host:port: reason". Blocks until the socket thread confirms.
---@async
---@param host string host, or "host:port" with port nil
---@param port? integer
---@param backlog? integer
---@return integer id, string addr, integer port
function socket.listen(host, port, backlog) end

---Starts a socket: a listener begins accepting (accept_cb(id, "ip:port") per client), an
---accepted or transferred id begins reading. Returns the id, or nil and an error. Blocks.
---@async
---@param id integer
---@param accept_cb? fun(id: integer, addr: string)
---@return integer? id, string? err
function socket.start(id, accept_cb) end

---Wraps an OS file descriptor. Returns the id, or nil and an error. Blocks.
---@async
---@param os_fd integer
---@return integer? id, string? err
function socket.bind(os_fd) end

---socket.bind(0): standard input.
---@async
---@return integer? id, string? err
function socket.stdin() end

---Reads exactly n bytes, or (n nil) whatever is buffered. On close: false and the rest.
---Blocks.
---@async
---@param id integer
---@param n? integer
---@return string|false data, string? rest
function socket.read(id, n) end

---Reads until the peer closes; false when nothing was left. Blocks.
---@async
---@param id integer
---@return string|false
function socket.readall(id) end

---Reads a line without its separator (default "\n"); on close false and the rest. Blocks.
---@async
---@param id integer
---@param sep? string
---@return string|false line, string? rest
function socket.readline(id, sep) end

---Waits until data is buffered or the socket closes; returns whether it is still open.
---Blocks.
---@async
---@param id integer
---@return boolean
function socket.block(id) end

---Queues data for sending; false when id is not an open socket. Never blocks.
---@param id integer
---@param data skynet.socket.payload
---@param sz? integer
---@return boolean
function socket.write(id, data, sz) end

---Like write, at low priority (after the normal queue).
---@param id integer
---@param data skynet.socket.payload
---@param sz? integer
---@return boolean
function socket.lwrite(id, data, sz) end

---Closes once queued output is sent; waits until the close is complete. Blocks.
---@async
---@param id integer
function socket.close(id) end

---Closes now, dropping queued output.
---@param id integer
function socket.shutdown(id) end

---Closes an id this service has not started (e.g. an accepted id it will not use).
---@param id integer
function socket.close_fd(id) end

---Forgets a socket without closing it (before handing it to another service).
---@param id integer
function socket.abandon(id) end

---Stops reading until the next socket.start or read.
---@param id integer
function socket.pause(id) end

---Closes the socket when more than bytes of input wait unread.
---@param id integer
---@param bytes integer
function socket.limit(id, bytes) end

---Sets the callback told how many KB of output wait (0: drained).
---@param id integer
---@param cb fun(id: integer, kb: integer)
function socket.warning(id, cb) end

---Sets the callback run when the socket closes.
---@param id integer
---@param cb fun(id: integer)
function socket.onclose(id, cb) end

---True when this service has no such socket.
---@param id integer
---@return boolean
function socket.invalid(id) end

---True when the socket is known and no longer connected (nil when unknown).
---@param id integer
---@return boolean?
function socket.disconnected(id) end

---A big-endian unsigned integer of a 1..4 byte string (a length header).
---@param str string
---@return integer
function socket.header(str) end

---Sets TCP_NODELAY.
---@param id integer
function socket.nodelay(id) end

---One record per socket of the node (see skynet.socketdriver.info).
---@return table[]
function socket.netstat() end

---The IP addresses of a host name (getaddrinfo; blocks the worker thread).
---@param host string
---@return string[]
function socket.resolve(host) end

---A UDP socket, bound to host:port when given; cb(data, from) receives datagrams.
---@param cb fun(data: string, from: string)
---@param host? string
---@param port? integer
---@return integer id
function socket.udp(cb, host, port) end

---Sets the default destination of a UDP socket (and its callback when given).
---@param id integer
---@param host string
---@param port integer
---@param cb? fun(data: string, from: string)
function socket.udp_connect(id, host, port, cb) end

---A UDP socket bound to host:port.
---@param host string
---@param port integer
---@param cb? fun(data: string, from: string)
---@return integer id
function socket.udp_listen(host, port, cb) end

---A UDP socket connected to host:port.
---@param host string
---@param port integer
---@param cb? fun(data: string, from: string)
---@return integer id
function socket.udp_dial(host, port, cb) end

---Sends a datagram to from (an address as the receive callback got it).
---@param id integer
---@param from string
---@param data skynet.socket.payload
---@param sz? integer
---@return boolean
function socket.sendto(id, from, data, sz) end

---Decodes a UDP sender address.
---@param from string
---@return string ip, integer port
function socket.udp_address(from) end

return socket
