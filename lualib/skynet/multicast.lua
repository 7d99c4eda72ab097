-- skynet.multicast: publish/subscribe channels served by multicastd.
--
-- A channel object is { channel = id, __pack, __unpack, __dispatch,
-- __subscribe }. Subscriptions are per service and channel: dispatch[id] is
-- the object whose handler gets that channel's messages (weak, so an object
-- the script drops is collected, and its __gc unsubscribes).
--
-- A publish packs its arguments once into a shared package
-- (skynet.multicast.core) and calls multicastd, which hands one reference to
-- each subscriber. Each delivery is a PTYPE_MULTICAST request whose session
-- is the channel id; its handler runs in its own coroutine, owns the
-- delivery's reference from the unpack on (the core drops the references of
-- deliveries never unpacked, e.g. still queued when the service dies), and
-- releases it once the handler has finished, before its error (if any) is
-- logged. held counts the references of handlers still running, so that the
-- ones that never finish (blocked when the service exits) are released when
-- the service's Lua state closes.
local skynet = require "skynet"
local mc = require "skynet.multicast.core"

local sformat = string.format

local multicastd -- set by the init function

local multicast = {}
local meta = { __index = multicast }
local dispatch = setmetatable({}, { __mode = "v" })
local held = setmetatable({}, {
	__gc = function(h)
		for pkg, n in pairs(h) do
			for _ = 1, n do
				mc.close(pkg)
			end
		end
	end,
})

function multicast.new(conf)
	assert(multicastd, "Init first")
	conf = conf or {}
	local c = conf.channel
	if c == nil then
		c = skynet.call(multicastd, "lua", "NEW")
	elseif math.type(c) ~= "integer" then
		error(sformat("multicast.new: channel must be an integer (%s)", tostring(c)), 2)
	end
	local self = {
		channel = c,
		__pack = conf.pack or skynet.pack,
		__unpack = conf.unpack or skynet.unpack,
		__dispatch = conf.dispatch,
	}
	return setmetatable(self, meta)
end

-- Returns once multicastd has handed the message to every subscriber.
function multicast:publish(...)
	local c = assert(self.channel)
	skynet.call(multicastd, "lua", "PUB", c, mc.pack(self.__pack(...)))
end

function multicast:subscribe()
	local c = assert(self.channel)
	if self.__subscribe then
		return
	end
	skynet.call(multicastd, "lua", "SUB", c)
	self.__subscribe = true
	dispatch[c] = self
end

-- Also the object's finalizer: it only sends.
function multicast:unsubscribe()
	if not self.__subscribe then
		return
	end
	local c = self.channel
	self.__subscribe = nil
	dispatch[c] = nil -- messages still queued for c are dropped
	skynet.send(multicastd, "lua", "USUB", c)
end

function multicast:delete()
	local c = assert(self.channel)
	skynet.send(multicastd, "lua", "DEL", c)
	self.channel = nil
	self.__subscribe = nil
end

meta.__gc = multicast.unsubscribe

function meta.__tostring(self)
	local c = self.channel
	return c and sformat("[Multicast:%x]", c) or "[Multicast:deleted]"
end

local function run_handler(self, source, msg, sz)
	self.__dispatch(self, source, self.__unpack(msg, sz))
end

local function dispatch_subscribe(channel, source, pkg, msg, sz)
	skynet.ignoreret() -- the session is the channel id: nothing to answer
	local self = dispatch[channel]
	if self == nil then
		mc.close(pkg) -- unsubscribed meanwhile: dropped unprocessed
		return
	end
	held[pkg] = (held[pkg] or 0) + 1
	local ok, err = pcall(run_handler, self, source, msg, sz)
	local n = held[pkg]
	held[pkg] = n > 1 and n - 1 or nil
	mc.close(pkg)
	if not ok then
		error(err, 0)
	end
end

skynet.register_protocol {
	name = "multicast",
	id = skynet.PTYPE_MULTICAST,
	unpack = mc.unpack,
	dispatch = dispatch_subscribe,
}

skynet.init(function()
	multicastd = skynet.uniqueservice "multicastd"
end)

return multicast
