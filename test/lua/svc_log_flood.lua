-- The node of test/node/test_log_flood.sh (its `start` service, real time,
-- log in a file): outsiders flood the node's surfaces with bytes that are
-- refused one event at a time, and the shell counts the log lines each
-- flood wrote, between marker lines this service logs:
--
--   cluster  a raw client sends FRAMES malformed 3-byte frames (1 MiB; less
--            under TSan) to the cluster port (cluster.open on 127.0.0.1);
--            then a name query on the same connection must be answered
--            (the agent got through them all) and a cluster.call through
--            the node's own sender must work.
--   gate     CLIENTS clients of a snax.gateserver gate that kicks a client
--            on its first frame (test/lua/svc_kick_gate.lua) each send
--            256 KiB of 3-byte frames, so the gate drops the frames it had
--            queued. Then a new client must be served.
--
-- Markers (skynet.error): "log_flood: <name> begin", "log_flood: <name> end
-- frames=<n>" (after 1.5 s, so the count lines of a 1 s limiter are in).
-- Results on stdout: "log_flood: <name> healthy=<true|false>"; then the
-- node stops (skynet.abort).
local skynet = require "skynet"
require "skynet.manager"
local socket = require "skynet.socket"
local cluster = require "skynet.cluster"
local core = require "skynet.cluster.core"
local t = require "testlib"

-- Each bad frame raises a Lua error in the decoder; under ThreadSanitizer
-- every error's longjmp leaves frames on TSan's shadow stack (it overflows
-- past ~65,000), so the flood is 30,000 frames there.
local FRAMES <const> = os.getenv "SKYNET_SAN" == "thread" and 30000 or 1024 * 1024 // 3
local CLIENTS <const> = 4
local CLIENT_BYTES <const> = 256 * 1024
local BAD_FRAME <const> = "\0\1\255" -- body: one byte, an unknown request type

local function say(line)
	io.stdout:write(line .. "\n")
	io.stdout:flush()
end

local function free_port()
	local id, _, port = socket.listen("127.0.0.1", 0)
	socket.close(id)
	return port
end

-- One 2-byte-framed message from fd, or nil.
local function read_frame(fd)
	local h = socket.read(fd, 2)
	if not h then
		return nil
	end
	return socket.read(fd, string.unpack(">I2", h))
end

local port -- of the cluster listener (cluster_flood sets it)

local function cluster_flood()
	port = free_port()
	cluster.reload { me = "127.0.0.1:" .. port }
	cluster.open "me"
	cluster.register("lf", skynet.self())
	skynet.error("log_flood: cluster begin")
	local fd = assert(socket.open("127.0.0.1", port))
	socket.write(fd, string.rep(BAD_FRAME, FRAMES))
	socket.write(fd, (core.packrequest(0, 1, skynet.packstring "lf")))
	local answer = read_frame(fd)
	local healthy = false
	if answer then
		local session, ok, data = core.unpackresponse(answer)
		healthy = session == 1 and ok and skynet.unpack(data) == skynet.self()
	end
	socket.close(fd)
	local okc, pong = pcall(cluster.call, "me", "@lf", "ping")
	healthy = healthy and okc and pong == "pong"
	skynet.sleep(150)
	skynet.error(string.format("log_flood: cluster end frames=%d", FRAMES))
	say("log_flood: cluster healthy=" .. tostring(healthy))
end

local function flooder(gate_port, done)
	local fd = assert(socket.open("127.0.0.1", gate_port))
	socket.write(fd, string.rep("\0\1x", CLIENT_BYTES // 3))
	while socket.read(fd) do -- until the kick closes it
	end
	socket.close(fd)
	done[#done + 1] = fd
end

local function gate_flood()
	local gate = skynet.newservice("svc_kick_gate")
	local _, gate_port = skynet.call(gate, "lua", "open", { address = "127.0.0.1", port = 0 })
	skynet.error("log_flood: gate begin")
	local done = {}
	for _ = 1, CLIENTS do
		skynet.fork(flooder, gate_port, done)
	end
	local all_closed = t.wait_until(function()
		return #done == CLIENTS
	end, 3000)
	-- health: a new client is served
	local fd = assert(socket.open("127.0.0.1", gate_port))
	socket.write(fd, string.pack(">s2", "hello"))
	local got = read_frame(fd)
	socket.close(fd)
	skynet.sleep(150)
	skynet.error(string.format("log_flood: gate end frames=%d", CLIENTS * (CLIENT_BYTES // 3)))
	say(string.format("log_flood: gate healthy=%s", tostring(all_closed and got == "hello")))
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		assert(cmd == "ping", "unknown command")
		skynet.retpack "pong"
	end)
	skynet.fork(function()
		local ok, err = pcall(cluster_flood)
		if not ok then
			say("log_flood: cluster failed: " .. tostring(err))
		end
		ok, err = pcall(gate_flood)
		if not ok then
			say("log_flood: gate failed: " .. tostring(err))
		end
		skynet.abort(0)
	end)
end)
