---@meta skynet.socketdriver
-- Editor help: `require "skynet.socketdriver"`, the C driver under
-- skynet.socket and the gates. Events come later as PTYPE_SOCKET messages.

---@alias skynet.socketdriver.payload string|string[]|lightuserdata|userdata

local driver = {}

---Starts a connection; CONNECT or ERROR follows.
---@param host string host, or "host:port" with port nil
---@param port? integer
---@return integer? id, string? err
function driver.connect(host, port) end

---Listens; raises "cannot listen on host:port: reason". CONNECT follows.
---@param host string
---@param port? integer
---@param backlog? integer default: the node's socket_backlog (511)
---@return integer id
function driver.listen(host, port, backlog) end

---Starts (or resumes) reading or accepting and takes ownership.
---@param id integer
function driver.start(id) end

---Stops reading until the next start.
---@param id integer
function driver.pause(id) end

---Closes once queued output is sent.
---@param id integer
function driver.close(id) end

---Closes now, dropping queued output.
---@param id integer
function driver.shutdown(id) end

---Sets TCP_NODELAY.
---@param id integer
function driver.nodelay(id) end

---Flow control: names the service that consumes id's data (0 or nil: the owner).
---@param id integer
---@param handle? integer
function driver.consumer(id, handle) end

---Flow control: this service holds n more (negative: fewer) requests outside its mailbox.
---Returns the count.
---@param n integer
---@return integer
function driver.flow_hold(n) end

---Queues a payload; false when id is not an open socket.
---@param id integer
---@param payload skynet.socketdriver.payload
---@param sz? integer
---@return boolean
function driver.send(id, payload, sz) end

---Like send, at low priority.
---@param id integer
---@param payload skynet.socketdriver.payload
---@param sz? integer
---@return boolean
function driver.lsend(id, payload, sz) end

---Wraps an OS file descriptor (0: stdin).
---@param fd integer
---@return integer id
function driver.bind(fd) end

---A UDP socket (bound when host/port are given); raises "udp init failed".
---@param host? string
---@param port? integer
---@return integer id
function driver.udp(host, port) end

---A bound UDP socket.
---@param host string
---@param port integer
---@return integer id
function driver.udp_listen(host, port) end

---A connected UDP socket.
---@param host string
---@param port integer
---@return integer id
function driver.udp_dial(host, port) end

---Sets the default destination; raises "udp connect failed".
---@param id integer
---@param host string
---@param port integer
function driver.udp_connect(id, host, port) end

---Sends a datagram to an address from a UDP event.
---@param id integer
---@param from string
---@param payload skynet.socketdriver.payload
---@param sz? integer
---@return boolean
function driver.udp_send(id, from, payload, sz) end

---Decodes a UDP sender address.
---@param from string
---@return string ip, integer port
function driver.udp_address(from) end

---One record per socket of the node: id, type, address, read, write, peer/sock, ...
---@return table[]
function driver.info() end

---getaddrinfo in the caller (blocks this worker); raises the resolver error.
---@param host string
---@return string[]
function driver.resolve(host) end

---Decodes a PTYPE_SOCKET message: event (1 DATA .. 7 WARNING), id, ud, data[, from].
---@param msg lightuserdata
---@param sz integer
---@return integer event, integer id, integer ud, any data, string? from
function driver.unpack(msg, sz) end

---Frees a DATA/UDP buffer.
---@param msg lightuserdata
---@param sz integer
function driver.drop(msg, sz) end

---Copies a string into a buffer the caller owns.
---@param str string
---@return lightuserdata ptr, integer sz
function driver.str2p(str) end

---Big-endian unsigned integer of a 1..4 byte string.
---@param str string
---@return integer
function driver.header(str) end

return driver
