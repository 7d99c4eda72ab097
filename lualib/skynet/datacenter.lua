-- skynet.datacenter: the client of datacenterd, reached through the global
-- name DATACENTER (one per standalone node). Every call blocks; values are
-- copied through skynet.pack both ways.
--
--   get(k1, ...)        -> value at the path, nil when a key is missing
--   set(k1, ..., kn, v) -> stores v (nil deletes); returns the previous value
--   wait(k1, ...)       -> value at the path, blocking until a set fills it
local skynet = require "skynet"

local datacenter = {}

function datacenter.get(...)
	return skynet.call("DATACENTER", "lua", "QUERY", ...)
end

function datacenter.set(...)
	return skynet.call("DATACENTER", "lua", "UPDATE", ...)
end

function datacenter.wait(...)
	return skynet.call("DATACENTER", "lua", "WAIT", ...)
end

return datacenter
