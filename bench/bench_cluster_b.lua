-- The serving node of bench/bench_cluster.sh: this service is cluster name
-- "e" (ping -> "pong", size(s) -> #s, count() -> pushes received since the
-- last count, stop() stops the node); it writes $BENCH_DIR/b.ready once
-- its cluster port listens.
local skynet = require "skynet"
require "skynet.manager"
local cluster = require "skynet.cluster"

local pushes = 0

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, arg)
		if session == 0 then
			pushes = pushes + 1
		elseif cmd == "ping" then
			skynet.ret(skynet.pack "pong")
		elseif cmd == "size" then
			skynet.ret(skynet.pack(#arg))
		elseif cmd == "count" then
			skynet.ret(skynet.pack(pushes))
			pushes = 0
		elseif cmd == "stop" then
			skynet.abort()
		end
	end)
	cluster.register "e"
	cluster.open "b"
	local f = assert(io.open(os.getenv "BENCH_DIR" .. "/b.ready", "w"))
	f:close()
end)
