---@meta skynet.multicast
-- Editor help: `require "skynet.multicast"`, publish/subscribe channels
-- served by multicastd. A channel object has the methods below.

---@class skynet.multicast.conf
---@field channel? integer an existing channel id (default: a new channel)
---@field pack? fun(...): lightuserdata, integer default skynet.pack
---@field unpack? fun(msg: lightuserdata, sz: integer): ... default skynet.unpack
---@field dispatch? fun(channel: skynet.multicast, source: integer, ...) message handler

---@class skynet.multicast
---@field channel integer? the channel id (nil once deleted)
local multicast = {}

---A channel object: a new channel, or conf.channel. Blocks when it makes a new one.
---@async
---@param conf? skynet.multicast.conf
---@return skynet.multicast
function multicast.new(conf) end

---Publishes a message; returns once every subscriber has it queued. Blocks.
---@async
---@param ... any
function multicast:publish(...) end

---Subscribes this service: conf.dispatch gets the channel's messages. Blocks.
---@async
function multicast:subscribe() end

---Unsubscribes this service. Never blocks.
function multicast:unsubscribe() end

---Deletes the channel. Never blocks.
function multicast:delete() end

return multicast
