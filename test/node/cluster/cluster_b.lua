-- A peer node of test/node/test_cluster.sh: serves svc_cluster_target as
-- cluster name "t" and local name ".t" on the port of cluster node
-- $CLUSTER_OPEN, then writes $CLUSTER_TMP/$CLUSTER_ID.ready. It stops by
-- itself after two minutes, in case the driver could not stop it.
local skynet = require "skynet"
require "skynet.manager"
local cluster = require "skynet.cluster"

skynet.start(function()
	local id = os.getenv "CLUSTER_ID"
	local t = skynet.newservice("svc_cluster_target", id)
	skynet.name(".t", t)
	cluster.register("t", t)
	cluster.open(os.getenv "CLUSTER_OPEN")
	local f = assert(io.open(os.getenv "CLUSTER_TMP" .. "/" .. id .. ".ready", "w"))
	f:write(tostring(t))
	f:close()
	skynet.timeout(12000, function()
		skynet.error("cluster_b: still running after 120 s, stopping")
		skynet.abort(1)
	end)
end)
