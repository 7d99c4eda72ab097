---@meta skynet.cluster
-- Editor help: `require "skynet.cluster"`, calls and sends to services of
-- other nodes over TCP (node table: config key `cluster`, or reload).

local cluster = {}

---Calls a service of another node and returns its reply; raises an error ending in
---"call failed". Blocks.
---@async
---@param node string node name
---@param address string|integer "@name" (a registered name), ".name" or a handle
---@param ... any
---@return ...
function cluster.call(node, address, ...) end

---cluster.call with a deadline: true and the reply, or false, "timeout". Blocks.
---@async
---@param ti integer centiseconds
---@param node string
---@param address string|integer
---@param ... any
---@return boolean ok, any ...
function cluster.timeout_call(ti, node, address, ...) end

---Sends to a service of another node. Never blocks.
---@param node string
---@param address string|integer
---@param ... any
function cluster.send(node, address, ...) end

---Listens for other nodes: on a port (0.0.0.0), or on this node's address in the node table.
---Returns the bound host and port. Blocks.
---@async
---@param port integer|string a port, or this node's name
---@param maxclient? integer
---@return string host, integer port
function cluster.open(port, maxclient) end

---Replaces the node table (name -> "host:port", options __waittime, __heartbeat, __deadtime);
---without config, reads the config key `cluster` file again. Blocks.
---@async
---@param config? table<string, string|number|false>
function cluster.reload(config) end

---A local service forwarding to a remote one: proxy(node, address) or proxy("node@name").
---Blocks.
---@async
---@param node string
---@param name? string|integer
---@return integer
function cluster.proxy(node, name) end

---A snax object for a remote snax service. Blocks.
---@async
---@param node string
---@param name string snax service name
---@param address? string|integer (default: queried from the remote .service)
---@return skynet.snax.object
function cluster.snax(node, name, address) end

---Registers addr (default: this service) under name, for "@name" addresses. Blocks.
---@async
---@param name string
---@param addr? integer
function cluster.register(name, addr) end

---Removes a registered name. Blocks.
---@async
---@param name string
function cluster.unregister(name) end

---The handle registered under name on node. Blocks.
---@async
---@param node string
---@param name string
---@return integer
function cluster.query(node, name) end

---The sender service of node (made on first use). Blocks.
---@async
---@param node string
---@return integer
function cluster.get_sender(node) end

return cluster
