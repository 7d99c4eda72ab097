-- A multicast publisher for test_multicast. Commands (lua, call):
--   burst(channel, tag, n)   publish (tag, 1) .. (tag, n) in order
--   publish_exit(channel)    publish "last" and exit while the publish is in
--                            flight (no reply: the caller's call fails)
local skynet = require "skynet"
local mc = require "skynet.multicast"

local CMD = {}

function CMD.burst(c, tag, n)
	local obj = mc.new { channel = c }
	for i = 1, n do
		obj:publish(tag, i)
	end
	skynet.retpack(n)
end

function CMD.publish_exit(c)
	local obj = mc.new { channel = c }
	skynet.fork(skynet.exit) -- runs once the publish below waits for its reply
	obj:publish "last"
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		CMD[cmd](...)
	end)
end)
