-- Node "b" of test/node/test_trace.sh: an echo HTTP server and the hop
-- "back" (registered as cluster name "back"), listening as cluster node b
-- on a free port that it writes into the node table; then it writes
-- $TRACE_TMP/b.ready. It stops by itself after two minutes.
local skynet = require "skynet"
local socket = require "skynet.socket"
local cluster = require "skynet.cluster"

skynet.start(function()
	local tmp = os.getenv "TRACE_TMP"
	local echo = skynet.newservice("trace_hop", "echo")
	local echo_addr = "127.0.0.1:" .. skynet.call(echo, "lua", "ADDRESS")
	local back = skynet.newservice("trace_hop", "back", echo_addr)
	cluster.register("back", back)
	local id, _, port = socket.listen("127.0.0.1", 0)
	socket.close(id)
	local f = assert(io.open(tmp .. "/clustername.lua", "w"))
	f:write(string.format('b = "127.0.0.1:%d"\n__heartbeat = false\n', port))
	f:close()
	cluster.reload()
	cluster.open "b"
	f = assert(io.open(tmp .. "/b.ready", "w"))
	f:close()
	skynet.timeout(12000, function()
		skynet.error("trace_b: still running after 120 s, stopping")
		skynet.abort(1)
	end)
end)
