-- Network benchmarks (bench/config.net: real time, two workers). Prints
--   BENCH name=net.echo_100conn_frames_per_s   100 connections, each sending
--                                              a 64-byte frame and waiting
--                                              for its echo (closed loop)
--   BENCH name=net.echo_100conn_rtt_p99_ms     p99 round trip of those frames
--   BENCH name=net.stream_1gb_mb_per_s         one connection streaming
--                                              STREAM_BYTES, the writer
--                                              pausing on socket.warning
--   BENCH name=net.accept_per_s                ACCEPT_COUNT connections
--                                              opened by 8 concurrent
--                                              clients, accepted and closed
-- then aborts the node. Everything binds 127.0.0.1 on ephemeral ports.
--
-- One file, several roles: launched without arguments it is the driver;
-- the other roles are services it starts with a role name argument:
-- "gate" (a gateserver echoing every frame), "echo_clients" (the 100
-- clients), "sink" (stream receiver) and "acceptor". A gateserver owns its
-- service's socket protocol, so the gate role must not load skynet.socket:
-- the requires depend on the role.
local skynet = require "skynet"
local report = require "bench_report"
require "skynet.manager"

local role = ...

local ECHO_CONNS <const> = 100
local ECHO_SECONDS <const> = 3
local FRAME_BYTES <const> = 64
local STREAM_BYTES <const> = 1024 * 1024 * 1024
local STREAM_CHUNK <const> = 64 * 1024
local ACCEPT_COUNT <const> = 10000
local ACCEPT_CLIENTS <const> = 8
local WATCHDOG_CS <const> = 12000

local function serve(cmd)
	skynet.start(function()
		skynet.dispatch("lua", function(_, _, name, ...)
			skynet.retpack(cmd[name](...))
		end)
	end)
end

---------------------------------------------------------------- gate role

local function gate_role()
	local gateserver = require "snax.gateserver"
	local netpack = require "skynet.netpack"
	local driver = require "skynet.socketdriver"
	local handler = {}
	function handler.connect(fd)
		gateserver.openclient(fd)
	end
	function handler.message(fd, msg, sz)
		driver.send(fd, netpack.pack(msg, sz))
		skynet.trash(msg, sz)
	end
	function handler.open(_, conf)
		return conf.port
	end
	gateserver.start(handler)
end

---------------------------------------------------------------- client roles

local function echo_clients_role()
	local socket = require "skynet.socket"
	local hpc = skynet.hpc
	local cmd = {}
	-- Runs n closed-loop connections for `seconds`; returns frames, sorted rtts (ns).
	function cmd.run(port, n, seconds)
		local ids = {}
		for i = 1, n do
			ids[i] = assert(socket.open("127.0.0.1", port))
		end
		local payload = string.pack(">s2", string.rep("e", FRAME_BYTES))
		local want = #payload
		local rtts, count = {}, 0
		local stop = hpc() + seconds * 1e9
		local done, token = 0, {}
		for i = 1, n do
			skynet.fork(function()
				local id = ids[i]
				while true do
					local t0 = hpc()
					if t0 >= stop then
						break
					end
					socket.write(id, payload)
					local r = socket.read(id, want)
					assert(r == payload, "bad echo")
					count = count + 1
					rtts[count] = hpc() - t0
				end
				socket.close(id)
				done = done + 1
				if done == n then
					skynet.wakeup(token)
				end
			end)
		end
		skynet.wait(token)
		table.sort(rtts)
		return count, rtts[math.max(1, math.ceil(count * 0.99))]
	end
	-- Streams `total` bytes to port; returns when the sink has them.
	function cmd.stream(port, total)
		local id = assert(socket.open("127.0.0.1", port))
		local blocked, token = false, {}
		socket.warning(id, function(_, kb)
			blocked = kb > 0
			if not blocked then
				skynet.wakeup(token)
			end
		end)
		local chunk = string.rep("s", STREAM_CHUNK)
		local sent, n = 0, 0
		while sent < total do
			if blocked then
				skynet.wait(token)
			end
			socket.write(id, chunk)
			sent = sent + STREAM_CHUNK
			n = n + 1
			if n % 8 == 0 then
				skynet.yield() -- let a warning in
			end
		end
		return id
	end
	function cmd.close(id)
		socket.close(id)
	end
	-- Opens and closes `count` connections, `clients` at a time; returns
	-- how many opened.
	function cmd.connect_loop(port, count, clients)
		local left, done, token = count, 0, {}
		local opened = 0
		for _ = 1, clients do
			skynet.fork(function()
				while left > 0 do
					left = left - 1
					local id = socket.open("127.0.0.1", port)
					if id then
						opened = opened + 1
						socket.close(id)
					end
				end
				done = done + 1
				if done == clients then
					skynet.wakeup(token)
				end
			end)
		end
		skynet.wait(token)
		return opened
	end
	serve(cmd)
end

local function sink_role()
	local socket = require "skynet.socket"
	local cmd = {}
	local lid
	function cmd.listen()
		local id, _, port = socket.listen("127.0.0.1", 0)
		lid = id
		return port
	end
	-- Accepts one connection and reads `total` bytes; returns the seconds taken.
	function cmd.receive(total)
		local token, conn = {}, nil
		socket.start(lid, function(id)
			conn = id
			skynet.wakeup(token)
		end)
		if conn == nil then
			skynet.wait(token)
		end
		socket.start(conn)
		local t0 = skynet.hpc()
		local got = 0
		while got < total do
			local r = socket.read(conn)
			if not r then
				break
			end
			got = got + #r
		end
		local dt = (skynet.hpc() - t0) / 1e9
		socket.close(conn)
		socket.close(lid)
		return got, dt
	end
	serve(cmd)
end

local function acceptor_role()
	local socket = require "skynet.socket"
	local cmd = {}
	local accepted, lid = 0, nil
	function cmd.listen()
		local listen_id, _, port = socket.listen("127.0.0.1", 0, 1024)
		lid = listen_id
		socket.start(lid, function(id)
			accepted = accepted + 1
			socket.close_fd(id)
		end)
		return port
	end
	function cmd.count()
		return accepted
	end
	function cmd.close()
		socket.close(lid)
	end
	serve(cmd)
end

---------------------------------------------------------------- driver

local function bench_echo()
	local gate = skynet.newservice("bench_net", "gate")
	local port = skynet.call(gate, "lua", "open", {
		address = "127.0.0.1", port = 0, maxclient = 1024, nodelay = true,
	})
	local clients = skynet.newservice("bench_net", "echo_clients")
	local count, p99 = skynet.call(clients, "lua", "run", port, ECHO_CONNS, ECHO_SECONDS)
	report("net.echo_100conn_frames_per_s", count / ECHO_SECONDS, "frames/s")
	report("net.echo_100conn_rtt_p99_ms", p99 / 1e6, "ms")
	skynet.kill(clients)
	skynet.kill(gate)
end

local function bench_stream()
	local sink = skynet.newservice("bench_net", "sink")
	local port = skynet.call(sink, "lua", "listen")
	local writer = skynet.newservice("bench_net", "echo_clients")
	local got, dt
	local token = {}
	skynet.fork(function()
		got, dt = skynet.call(sink, "lua", "receive", STREAM_BYTES)
		skynet.wakeup(token)
	end)
	local id = skynet.call(writer, "lua", "stream", port, STREAM_BYTES)
	if got == nil then
		skynet.wait(token)
	end
	skynet.call(writer, "lua", "close", id)
	assert(got == STREAM_BYTES, "stream short: " .. tostring(got))
	report("net.stream_1gb_mb_per_s", got / (1024 * 1024) / dt, "MB/s")
	skynet.kill(writer)
	skynet.kill(sink)
end

local function bench_accept()
	local acceptor = skynet.newservice("bench_net", "acceptor")
	local port = skynet.call(acceptor, "lua", "listen")
	local clients = skynet.newservice("bench_net", "echo_clients")
	local t0 = skynet.hpc()
	local opened = skynet.call(clients, "lua", "connect_loop", port, ACCEPT_COUNT, ACCEPT_CLIENTS)
	while skynet.call(acceptor, "lua", "count") < opened do
		skynet.sleep(1)
	end
	local dt = (skynet.hpc() - t0) / 1e9
	if opened < ACCEPT_COUNT then
		print(string.format("bench_net: only %d of %d connects succeeded", opened, ACCEPT_COUNT))
	end
	report("net.accept_per_s", opened / dt, "conn/s")
	skynet.call(acceptor, "lua", "close")
	skynet.kill(clients)
	skynet.kill(acceptor)
end

local function driver_role()
	skynet.start(function()
		skynet.timeout(WATCHDOG_CS, function()
			print("bench_net: timeout, aborting")
			skynet.abort()
		end)
		bench_echo()
		bench_stream()
		bench_accept()
		skynet.abort()
	end)
end

if role == "gate" then
	gate_role()
elseif role == "echo_clients" then
	echo_clients_role()
elseif role == "sink" then
	sink_role()
elseif role == "acceptor" then
	acceptor_role()
else
	driver_role()
end
