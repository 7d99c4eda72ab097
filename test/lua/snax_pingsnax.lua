-- A snax service reachable over the cluster (test_cluster_peer and the
-- two-node test). Method ids: 1-4 system, then ping 5, hello 6, heard 7.
local snax = require "skynet.snax"

local heard = {}

function init()
	snax.enablecluster()
end

function response.ping(x)
	return "pong " .. tostring(x)
end

function accept.hello(who)
	heard[#heard + 1] = who
end

function response.heard()
	return heard
end
