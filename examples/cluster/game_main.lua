-- Node "game": calls the kv service of node "db" by its cluster name, by
-- its local name and through a proxy, pushes a value without waiting, then
-- stops (the db node keeps running).
local skynet = require "skynet"
require "skynet.manager"
local cluster = require "skynet.cluster"

skynet.start(function()
	cluster.open "game"
	print("SET a ->", cluster.call("db", "@kv", "SET", "a", "hello"))
	print("GET a ->", cluster.call("db", "@kv", "GET", "a"))
	print("GET a via .kv ->", cluster.call("db", ".kv", "GET", "a"))
	local kv = cluster.proxy "db@kv"
	print("GET a via proxy ->", skynet.call(kv, "lua", "GET", "a"))
	cluster.send("db", "@kv", "SET", "b", "pushed")
	print("timeout_call GET b ->", cluster.timeout_call(100, "db", "@kv", "GET", "b"))
	print("handle of kv ->", skynet.address(cluster.query("db", "kv")))
	cluster.reload { nowhere = false } -- a node known to be down: calls fail at once
	print("call to a down node ->", pcall(cluster.call, "nowhere", "@kv", "GET", "a"))
	skynet.abort()
end)
