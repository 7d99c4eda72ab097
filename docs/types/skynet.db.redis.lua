---@meta skynet.db.redis
-- Editor help: `require "skynet.db.redis"`, a Redis client (RESP2). Every
-- command blocks the calling coroutine.

---@class skynet.db.redis.conf
---@field host string
---@field port? integer default 6379
---@field auth? string password
---@field username? string
---@field db? integer SELECT after connecting
---@field overload? fun(overload: boolean)
---@field timeout? integer centiseconds

---A connection. Any other method name is sent as that Redis command (db:get(k), db:set(k, v),
---db:hgetall(k), ...) and returns its reply: status and bulk strings as strings, integers as
---integers, arrays as tables, nil for a nil reply; an error reply is raised.
---@class skynet.db.redis.client
---@field [string] async fun(self: skynet.db.redis.client, ...): any
local client = {}

---Closes the connection.
function client:disconnect() end

---True when the key (or any of a list of keys) exists. Blocks.
---@async
---@param key string|string[]
---@return boolean
function client:exists(key) end

---True when member is in the set. Blocks.
---@async
---@param key string
---@param member string
---@return boolean
function client:sismember(key, member) end

---Sends several commands { cmd, args... } at once. With resp, fills it with { ok =, out = }
---per command and returns it; without, returns the last reply. Blocks.
---@async
---@param ops table[]
---@param resp? table
---@return any
function client:pipeline(ops, resp) end

---A subscriber on a connection of its own.
---@class skynet.db.redis.watch
local watch = {}

---Closes the connection.
function watch:disconnect() end

---Subscribes to channels. Blocks.
---@async
---@param ... string
function watch:subscribe(...) end

---Subscribes to patterns. Blocks.
---@async
---@param ... string
function watch:psubscribe(...) end

---Unsubscribes from channels. Blocks.
---@async
---@param ... string
function watch:unsubscribe(...) end

---Unsubscribes from patterns. Blocks.
---@async
---@param ... string
function watch:punsubscribe(...) end

---The next message: data, channel (and the pattern for a pattern message). Blocks.
---@async
---@return string data, string channel, string? pattern
function watch:message() end

local redis = {}

---Connects (and authenticates, selects db). Raises when it cannot. Blocks.
---@async
---@param conf skynet.db.redis.conf
---@return skynet.db.redis.client
function redis.connect(conf) end

---A subscriber connection. Blocks.
---@async
---@param conf skynet.db.redis.conf
---@return skynet.db.redis.watch
function redis.watch(conf) end

---Reads one reply from anything with read(n) and readline(sep): true and the value, or false
---and the error text.
---@param sock skynet.socketchannel.sock
---@return boolean ok, any value
function redis.read_reply(sock) end

return redis
