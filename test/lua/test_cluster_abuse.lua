-- test: real time
-- skynet.cluster against peers that misbehave on purpose: a connect/close
-- loop on the cluster port, a peer that starts large replies and never
-- finishes them, a peer that answers heartbeats but never the call. Each
-- case is a bound the node keeps, with loads sized for a 2-core machine.
local skynet = require "skynet"
local socket = require "skynet.socket"
local cluster = require "skynet.cluster"
local core = require "skynet.cluster.core"
local t = require "testlib"

local free_port, wait_until, elapsed = t.free_port, t.wait_until, t.elapsed

local pack = skynet.packstring

local CYCLES <const> = 10000 -- about 4 s here, 14 s under ASan, 18 s under TSan

-- A TCP server that calls answer(srv, fd, body) for each request frame.
local function fake_peer(answer)
	local lid, _, port = socket.listen("127.0.0.1", 0)
	local srv = { addr = "127.0.0.1:" .. port, lid = lid, requests = 0 }
	socket.start(lid, function(fd)
		socket.start(fd)
		skynet.fork(function()
			while true do
				local h = socket.read(fd, 2)
				local body = h and socket.read(fd, string.unpack(">I2", h))
				if not body then
					break
				end
				local addr, session = core.unpackrequest(body)
				if session then
					srv.requests = srv.requests + 1
					answer(fd, addr, session)
				end
			end
			socket.close(fd)
		end)
	end)
	return srv
end

local function respond(fd, session, ok, data)
	local r = core.packresponse(session, ok, data)
	socket.write(fd, type(r) == "table" and table.concat(r) or r)
end

-- One name query on a new raw connection to addr: true when answered.
local function served(host, port)
	local fd = socket.open(host, port)
	if not fd then
		return false
	end
	socket.write(fd, (core.packrequest(0, 1, pack "sdb")))
	local h = socket.read(fd, 2)
	local body = h and socket.read(fd, string.unpack(">I2", h))
	socket.close(fd)
	if not body then -- refused (closed at once) or cut
		return false
	end
	return select(2, core.unpackresponse(body)) == true
end

t.case("connect/close cycles leave the cluster port open", function()
	local port = free_port()
	local MAX <const> = 16
	cluster.reload { cycles = "127.0.0.1:" .. port }
	cluster.open("cycles", MAX)
	for i = 1, CYCLES do
		local fd = socket.open("127.0.0.1", port)
		if fd then
			socket.close(fd)
		end
		if i % 64 == 0 then
			skynet.yield() -- let clusterd keep up, as a real client's round trips would
		end
	end
	-- every agent exits; then MAX connections at once are all served
	t.ok(wait_until(function()
		return served("127.0.0.1", port)
	end, 500), "the port serves again after the loop")
	local answered, done = 0, 0
	local fds = {}
	for i = 1, MAX do
		fds[i] = socket.open("127.0.0.1", port)
	end
	for i = 1, MAX do
		skynet.fork(function()
			local fd = fds[i]
			socket.write(fd, (core.packrequest(0, 1, pack "sdb")))
			local h = socket.read(fd, 2)
			if h and socket.read(fd, string.unpack(">I2", h)) then
				answered = answered + 1
			end
			done = done + 1
		end)
	end
	t.ok(wait_until(function()
		return done == MAX
	end, 500), "every connection answered or closed")
	t.eq(answered, MAX, "connections served at once after " .. CYCLES .. " cycles")
	for i = 1, MAX do
		socket.close(fds[i])
	end
end)

t.case("a peer that never finishes its replies costs at most __maxmessage", function()
	local MAXMSG <const> = 256 * 1024
	cluster.reload { __maxmessage = MAXMSG, __heartbeat = 0.1, __calltimeout = 3 }
	-- each call gets the first 192 KiB of a 200,000-byte reply, never the rest;
	-- an answered probe keeps the connection alive
	local srv = fake_peer(function(fd, addr, session)
		if addr == 0 then
			return respond(fd, session, false, "name not found")
		end
		local frames = core.packresponse(session, true, pack(string.rep("r", 200000)))
		socket.write(fd, table.concat(frames, "", 1, 7))
	end)
	cluster.reload { hoarder = srv.addr }
	local CALLS <const> = 40
	local results = {}
	for i = 1, CALLS do
		skynet.fork(function()
			results[i] = table.pack(elapsed(cluster.call, "hoarder", "@x", "GET"))
		end)
	end
	t.ok(wait_until(function()
		return #results == CALLS
	end, 250), "every call returned before its deadline: " .. #results .. " of " .. CALLS)
	for i = 1, CALLS do
		local _, ok, err = table.unpack(results[i])
		t.eq(ok, false, "call " .. i .. " failed")
		t.ok(tostring(err):find("call failed$"), tostring(err))
	end
	local sender = cluster.get_sender "hoarder"
	skynet.send(sender, "debug", "GC") -- no answer; MEM comes after it
	local kb = skynet.call(sender, "debug", "MEM")
	t.ok(kb < 2 * MAXMSG / 1024, "the sender holds " .. kb .. " KiB")
	t.ok(srv.requests >= CALLS, "the calls went out: " .. srv.requests)
	socket.close(srv.lid)
	cluster.reload { __maxmessage = 16 * 1024 * 1024, __heartbeat = 1, __calltimeout = 10 }
end)

t.case("a peer that answers heartbeats but never the call: __calltimeout", function()
	cluster.reload { __heartbeat = 0.1, __deadtime = 0.5, __calltimeout = 1 }
	local srv = fake_peer(function(fd, addr, session)
		if addr == 0 then -- probes only
			respond(fd, session, false, "name not found")
		end
	end)
	cluster.reload { deaf = srv.addr }
	local results = {}
	for i = 1, 3 do
		skynet.fork(function()
			results[i] = table.pack(elapsed(cluster.call, "deaf", "@x", "GET", i))
		end)
		skynet.sleep(20)
	end
	t.ok(wait_until(function()
		return #results == 3
	end, 500), "all three calls returned")
	for i = 1, 3 do
		local dt, ok, err = table.unpack(results[i])
		t.eq(ok, false, "call " .. i .. " failed")
		t.ok(tostring(err):find("call failed$"), tostring(err))
		t.ok(dt >= 95 and dt <= 150, "call " .. i .. " failed at its deadline: " .. dt .. " cs")
	end
	-- the connection stayed up: a call with its own longer deadline waits it out
	local dt, ok, r1, r2 = elapsed(cluster.timeout_call, 150, "deaf", "@x", "GET")
	t.ok(ok and r1 == false and r2 == "timeout", "timeout_call: " .. tostring(r2))
	t.ok(dt >= 145, "timeout_call's own deadline replaces __calltimeout: " .. dt .. " cs")
	-- false: no limit (the call waits until the peer goes away)
	cluster.reload { __calltimeout = false }
	local got
	skynet.fork(function()
		got = table.pack(elapsed(cluster.call, "deaf", "@x", "GET"))
	end)
	skynet.sleep(150)
	t.eq(got, nil, "still waiting with no limit")
	socket.close(srv.lid)
	cluster.reload { deaf = false }
	t.ok(wait_until(function()
		return got ~= nil
	end, 300), "failed when the node went down")
	t.eq(got[2], false, "failed")
	cluster.reload { __heartbeat = 1, __deadtime = 10, __calltimeout = 10 }
end)

t.start(nil, function()
	local target = skynet.newservice("svc_cluster_target", "target")
	cluster.register("sdb", target)
end)
