-- test: real time
-- skynet.cluster inside one node, against scripted peers and a raw client:
-- the bytes the sender writes for the captured calls, the sender's
-- tolerance of odd answers, liveness (a silent peer fails the calls, a
-- slow one does not), deadlines, unreachable / absent / false nodes, the
-- agent's answers to the captured edge cases and its bounds, the registry,
-- proxies and snax. The node reaches itself over TCP as node "me".
local skynet = require "skynet"
require "skynet.manager"
local socket = require "skynet.socket"
local cluster = require "skynet.cluster"
local snax = require "skynet.snax"
local core = require "skynet.cluster.core"
local t = require "testlib"

local free_port, wait_until, elapsed = t.free_port, t.wait_until, t.elapsed

local pack, unpack = skynet.packstring, skynet.unpack
local unhex = t.unhex

local function H(s)
	return unhex((s:gsub("|", "")))
end

local function same(got, want, what)
	if got ~= want then
		error(string.format("%s:\n got  %s\n want %s", what, t.hex(got or "", " "):sub(1, 300),
			t.hex(want, " "):sub(1, 300)), 2)
	end
end

local target -- svc_cluster_target, registered as "sdb" and named ".sdbl"
local me -- "127.0.0.1:<port>" of this node's cluster port

---------------------------------------------------------------- scripted peers

-- A TCP server speaking the response side by hand: every request body is
-- kept in srv.frames; srv.answer(srv, fd, body) may write replies.
local function fake_peer(answer)
	local lid, _, port = socket.listen("127.0.0.1", 0)
	local srv = { frames = {}, port = port, accepted = 0, closed = 0, answer = answer }
	socket.start(lid, function(fd)
		srv.accepted = srv.accepted + 1
		socket.start(fd)
		skynet.fork(function()
			while true do
				local h = socket.read(fd, 2)
				if not h then
					break
				end
				local body = socket.read(fd, string.unpack(">I2", h))
				if not body then
					break
				end
				srv.frames[#srv.frames + 1] = body
				if srv.answer then
					srv.answer(srv, fd, body)
				end
			end
			srv.closed = srv.closed + 1
			socket.close(fd)
		end)
	end)
	srv.addr = "127.0.0.1:" .. port
	srv.lid = lid
	return srv
end

local function close_peer(srv)
	socket.close(srv.lid)
end

local function respond(fd, session, ok, data)
	local r = core.packresponse(session, ok, data)
	socket.write(fd, type(r) == "table" and table.concat(r) or r)
end

-- A minimal serving side: reassembles multi-part requests and calls
-- on_call(addr, session, payload, fd) for each complete call.
local function mini_agent(on_call)
	local parts = {}
	return function(_, fd, body)
		local addr, session, msg, _, padding, push = core.unpackrequest(body)
		if session == nil then
			return
		end
		if addr == false then
			local p = parts[session]
			p[#p + 1] = msg
			if not padding then
				parts[session] = nil
				if not p.push then
					on_call(p.addr, session, table.concat(p), fd)
				end
			end
		elseif padding then
			parts[session] = { addr = addr, push = push }
		elseif not push then
			on_call(addr, session, msg, fd)
		end
	end
end

t.case("the sender writes the captured frames, sessions from 1", function()
	local answers = {}
	local srv = fake_peer(mini_agent(function(addr, session, payload, fd)
		local cmd, n = unpack(payload)
		if addr == 0 then
			respond(fd, session, true, pack(10))
		elseif cmd == "GET" then
			respond(fd, session, true, pack "foobar")
		elseif cmd == "LEN" then
			-- the captured multi-part reply, written frame by frame
			local reply = pack(string.rep("R", n))
			socket.write(fd, H "00 09" .. string.pack("<I4", session) .. H "02 | 43 9c 00 00")
			socket.write(fd, H "80 05" .. string.pack("<I4", session) .. "\3" .. reply:sub(1, 32768))
			socket.write(fd, H "1c 48" .. string.pack("<I4", session) .. "\4" .. reply:sub(32769))
		else
			respond(fd, session, true, pack(nil))
		end
		answers[#answers + 1] = session
	end))
	-- no heartbeat probes while the frames are counted (a slow machine could
	-- see a call take long enough for one); the liveness cases turn them on
	cluster.reload { cap = srv.addr, __heartbeat = false }
	t.eq(cluster.query("cap", "sdb"), 10, "query")
	t.eq(cluster.call("cap", "@sdb", "GET", "a"), "foobar", "by name")
	t.eq(cluster.call("cap", 10, "GET", "a"), "foobar", "by number")
	t.eq(cluster.call("cap", ".sdbl", "GET", "a"), "foobar", "by local name")
	cluster.send("cap", "@sdb", "PING", "hi")
	cluster.send("cap", 10, "PING", "n")
	t.eq(cluster.call("cap", "@sdb", "SET", "big", string.rep("X", 70000)), nil, "multi-part call")
	t.eq(cluster.call("cap", "@sdb", "LEN", 40000), string.rep("R", 40000), "multi-part reply")
	cluster.send("cap", "@sdb", "PING", string.rep("Q", 40000))
	local tag, traced, traced2
	skynet.fork(function() -- a coroutine of its own: the trace ends with it
		skynet.trace "cluster capture"
		tag = skynet.tracetag()
		traced = cluster.call("cap", "@sdb", "GET", "a")
		traced2 = cluster.call("cap", "@sdb", "GET", "a")
	end)
	t.ok(wait_until(function()
		return traced2 ~= nil
	end, 300), "traced calls returned")
	t.eq(traced, "foobar", "traced call")
	local f = srv.frames
	same(f[1], H "00 | 00 00 00 00 | 01 00 00 00 | 1c 73 64 62", "1. query")
	same(f[2], H "80 | 04 | 40 73 64 62 | 02 00 00 00 | 1c 47 45 54 0c 61", "2. @sdb")
	same(f[3], H "00 | 0a 00 00 00 | 03 00 00 00 | 1c 47 45 54 0c 61", "3. numeric")
	same(f[4], H "80 | 05 | 2e 73 64 62 6c | 04 00 00 00 | 1c 47 45 54 0c 61", "3. .sdbl")
	same(f[5], H "80 | 04 | 40 73 64 62 | 00 00 00 00 | 24 50 49 4e 47 14 68 69", "4. push @sdb")
	same(f[6], H "00 | 0a 00 00 00 | 00 00 00 00 | 24 50 49 4e 47 0c 6e", "4. push numeric")
	same(f[7], H "81 | 04 | 40 73 64 62 | 05 00 00 00 | 7d 11 01 00", "6. header")
	same(f[8]:sub(1, 18), H "02 | 05 00 00 00 | 1c 53 45 54 1c 62 69 67 25 70 11 01 00", "6. part 1")
	t.eq(#f[8], 5 + 32768, "6. part 1 size")
	same(f[9]:sub(1, 6), H "02 | 05 00 00 00 | 58", "6. part 2")
	same(f[10]:sub(1, 6), H "03 | 05 00 00 00 | 58", "6. final part")
	t.eq(#f[10], 5 + 4477, "6. final size")
	same(f[11], H "80 | 04 | 40 73 64 62 | 06 00 00 00 | 1c 4c 45 4e 12 40 9c", "7. LEN")
	same(f[12], H "c1 | 04 | 40 73 64 62 | 07 00 00 00 | 48 9c 00 00", "8. push header")
	same(f[13]:sub(1, 13), H "02 | 07 00 00 00 | 24 50 49 4e 47 15 40 9c", "8. push part")
	t.eq(#f[14], 5 + 7240, "8. push final")
	-- the first traced request asks, once per connection, whether the peer
	-- takes spans (a name query with session 0: no session is taken); this
	-- peer does not answer yes, so the trace frames stay skynet's
	same(f[15], H "00 | 00 00 00 00 | 00 00 00 00" .. pack "skywheel:trace/1", "trace question")
	local want_tag = string.format("(%s-cap-9)%s", core.nodename(), tag)
	same(f[16], "\4" .. want_tag, "9. trace frame")
	same(f[17], H "80 | 04 | 40 73 64 62 | 08 00 00 00 | 1c 47 45 54 0c 61", "9. traced call")
	same(f[18], "\4" .. string.format("(%s-cap-10)%s", core.nodename(), tag), "trace frame again")
	same(f[19], H "80 | 04 | 40 73 64 62 | 09 00 00 00 | 1c 47 45 54 0c 61", "second traced call")
	t.eq(#f, 19, "nothing else written")
	close_peer(srv)
end)

t.case("trace frames: a peer that says it takes spans gets trace id and span id", function()
	local hello = pack "skywheel:trace/1"
	local srv = fake_peer(function(_, fd, body)
		local addr, session, msg = core.unpackrequest(body)
		if addr == 0 and session == 0 and msg == hello then
			respond(fd, 0, true, hello) -- what a skywheel agent answers
		elseif session ~= nil and session ~= 0 then
			respond(fd, session, true, pack "done")
		end
	end)
	cluster.reload { spans = srv.addr, __heartbeat = false }
	local tracing = require "skynet.tracing"
	local trace_id
	local done = {}
	skynet.fork(function()
		trace_id = tracing.begin()
		cluster.call("spans", "@x", "ONE") -- asks; the answer comes after this request
		cluster.call("spans", "@x", "TWO")
		cluster.send("spans", "@x", "PUSH")
		skynet.wakeup(done)
	end)
	skynet.wait(done)
	t.ok(wait_until(function()
		return #srv.frames >= 7
	end, 300), "the push arrived")
	local f = srv.frames
	same(f[1], H "00 | 00 00 00 00 | 00 00 00 00" .. hello, "the question")
	t.ok(f[2]:match "^\4%(", "the first traced call: skynet's trace frame")
	t.eq(select(4, core.unpackrequest(f[3])), #pack "ONE", "ONE")
	local id, span = f[4]:match "^\4(%x+) (%x+)$"
	t.eq(id, trace_id, "then the trace id")
	t.eq(#span, 16, "and a span id: " .. f[4])
	t.eq(f[6]:match "^\4(%x+) ", trace_id, "a push gets its trace frame too")
	t.eq(#f, 7, "nothing else")
	close_peer(srv)
end)

t.case("the sender tolerates odd answers and fails bad ones", function()
	local held
	local srv = fake_peer(mini_agent(function(_, session, payload, fd)
		local cmd = unpack(payload)
		if cmd == "STRAY" then
			respond(fd, 999, true, pack "stray")
			respond(fd, 0, false, "session zero")
			respond(fd, session, true, pack "real")
		elseif cmd == "BIG" then
			held = session
		elseif cmd == "SMALL" then
			local frames = core.packresponse(held, true, pack(string.rep("B", 40000)))
			socket.write(fd, frames[1] .. frames[2])
			respond(fd, session, true, pack "small")
			socket.write(fd, frames[3])
		elseif cmd == "BAD" then
			socket.write(fd, H "00 06" .. string.pack("<I4", session) .. H "07 00")
		elseif cmd == "SHORT" then
			socket.write(fd, H "00 09" .. string.pack("<I4", session) .. H "02 | 64 00 00 00")
			socket.write(fd, H "00 09" .. string.pack("<I4", session) .. H "04 | 01 02 03 04")
		else
			respond(fd, session, true, pack(session))
		end
	end))
	cluster.reload { tol = srv.addr }
	t.eq(cluster.call("tol", "@x", "STRAY"), "real", "stray and session-0 answers skipped")
	local big
	skynet.fork(function()
		big = cluster.call("tol", "@x", "BIG")
	end)
	t.ok(wait_until(function()
		return held ~= nil
	end, 300), "BIG arrived")
	t.eq(cluster.call("tol", "@x", "SMALL"), "small", "reply between the pieces of another")
	t.ok(wait_until(function()
		return big ~= nil
	end, 300), "BIG answered")
	t.eq(big, string.rep("B", 40000), "interleaved multi-part reply")
	t.raises("call failed", cluster.call, "tol", "@x", "BAD")
	t.ok(wait_until(function()
		return srv.closed == 1
	end, 300), "status 7 closed the connection")
	t.eq(cluster.call("tol", "@x", "SESSION"), 5, "reconnected, the next session")
	t.eq(srv.accepted, 2, "one reconnect")
	t.raises("call failed", cluster.call, "tol", "@x", "SHORT")
	close_peer(srv)
end)

t.case("a silent peer fails the waiting calls within __deadtime", function()
	cluster.reload { __heartbeat = 0.1, __deadtime = 0.5 }
	local srv = fake_peer() -- reads everything, answers nothing
	cluster.reload { silent = srv.addr }
	local results = {}
	for i = 1, 3 do
		skynet.fork(function()
			results[i] = table.pack(elapsed(cluster.call, "silent", "@x", "GET"))
		end)
	end
	t.ok(wait_until(function()
		return #results == 3
	end, 500), "all three calls returned")
	for i = 1, 3 do
		local dt, ok, err = table.unpack(results[i])
		t.eq(ok, false, "call " .. i .. " failed")
		t.ok(tostring(err):find("call failed$"), "call failed suffix: " .. tostring(err))
		t.ok(dt >= 45 and dt <= 200, "failed after the dead time, not forever: " .. dt .. " cs")
	end
	local probes = 0
	for _, body in ipairs(srv.frames) do
		local addr, _, msg = core.unpackrequest(body)
		if addr == 0 and msg == pack "" then
			probes = probes + 1
		end
	end
	t.ok(probes >= 1, "a heartbeat probe went out")
	-- the next call reconnects (and fails the same way)
	local dt, ok = elapsed(cluster.call, "silent", "@x", "GET")
	t.eq(ok, false, "again")
	t.ok(dt <= 200, "bounded again")
	t.eq(srv.accepted, 2, "reconnected for it")
	close_peer(srv)
end)

t.case("a slow peer that answers probes is not declared dead", function()
	local srv = fake_peer(mini_agent(function(addr, session, _, fd)
		if addr == 0 then
			return respond(fd, session, false, "name not found")
		end
		skynet.fork(function()
			skynet.sleep(120) -- longer than __deadtime (0.5 s)
			respond(fd, session, true, pack "late but fine")
		end)
	end))
	cluster.reload { slow = srv.addr }
	t.eq(cluster.call("slow", "@x", "WORK"), "late but fine", "slow call")
	close_peer(srv)
end)

t.case("timeout_call: a deadline for one call", function()
	local srv = fake_peer()
	cluster.reload { mute = srv.addr }
	local dt, ok, r1, r2 = elapsed(cluster.timeout_call, 30, "mute", "@x", "GET")
	t.eq(ok, true, "no error")
	t.eq(r1, false, "timed out")
	t.eq(r2, "timeout", "reason")
	t.ok(dt >= 28 and dt <= 150, "after the deadline: " .. dt .. " cs")
	local good, v = cluster.timeout_call(300, "me", "@sdb", "echo", 1, "two")
	t.eq(good, true, "in time")
	t.eq(v, 1, "result")
	t.raises("call failed", cluster.timeout_call, 300, "me", "@sdb", "raise")
	local g2, why = cluster.timeout_call(10, "me", "@sdb", "SLEEP", 100)
	t.eq(g2, false, "remote too slow")
	t.eq(why, "timeout", "slow reason")
	-- an absent node counts against the deadline too
	local dt2, ok2, a, b = elapsed(cluster.timeout_call, 20, "never_defined", "@x", "GET")
	t.eq(ok2 and a, false, "absent: timeout")
	t.eq(b, "timeout", "absent reason")
	t.ok(dt2 <= 150, "absent: bounded " .. dt2)
	close_peer(srv)
end)

t.case("unreachable, absent and false nodes fail instead of hanging", function()
	local port = free_port()
	cluster.reload { closed = "127.0.0.1:" .. port, __waittime = 0.3 }
	local dt, ok, err = elapsed(cluster.call, "closed", "@x", "GET")
	t.eq(ok, false, "refused")
	t.ok(err:find "connect failed" and err:find "call failed$", err)
	t.ok(dt < 100, "refused fast")
	-- within the back-off window (0.1 s, then 0.2, 0.4 ...) a call fails
	-- without a new attempt; several quick calls, so a slow machine still
	-- lands one inside a window
	local backed_off = 0
	for _ = 1, 5 do
		ok, err = select(2, elapsed(cluster.call, "closed", "@x", "GET"))
		t.eq(ok, false, "refused again")
		if err:find "next attempt" then
			backed_off = backed_off + 1
		end
	end
	t.ok(backed_off >= 1, "back-off: " .. err)
	dt, ok, err = elapsed(cluster.call, "nowhere", "@x", "GET")
	t.eq(ok, false, "absent")
	t.ok(err:find "absent" and err:find "call failed$", err)
	t.ok(dt >= 25 and dt < 200, "waited __waittime: " .. dt)
	-- a reload that defines the node wakes the waiting call
	cluster.reload { __waittime = 10 }
	local got
	skynet.fork(function()
		got = table.pack(pcall(cluster.call, "later", "@sdb", "GET"))
	end)
	skynet.sleep(10)
	t.eq(got, nil, "still waiting")
	cluster.reload { later = me }
	t.ok(wait_until(function()
		return got ~= nil
	end, 300), "woken")
	t.eq(got[2], "foobar", "then served")
	-- turning __nowaiting on fails the waiters at once, and later calls too
	local got2
	skynet.fork(function()
		got2 = table.pack(pcall(cluster.call, "limbo", "@sdb", "GET"))
	end)
	skynet.sleep(5)
	cluster.reload { __nowaiting = true }
	t.ok(wait_until(function()
		return got2 ~= nil
	end, 100), "waiter failed")
	t.eq(got2[1], false, "absent with nowaiting")
	dt, ok = elapsed(cluster.call, "limbo", "@sdb", "GET")
	t.eq(ok, false, "nowaiting")
	t.ok(dt < 50, "at once")
	cluster.reload { __nowaiting = false, __waittime = 0.3 }
	-- false: down
	cluster.reload { gone = false }
	dt, ok, err = elapsed(cluster.call, "gone", "@x", "GET")
	t.ok(not ok and err:find "is down", tostring(err))
	t.ok(dt < 50, "down fails at once")
	cluster.send("gone", "@x", "PING", 1) -- dropped, no error, no block
	-- a node whose sender exists, set to false and back
	cluster.reload { flip = me }
	t.eq(cluster.call("flip", "@sdb", "GET"), "foobar", "flip up")
	cluster.reload { flip = false }
	dt, ok = elapsed(cluster.call, "flip", "@sdb", "GET")
	t.eq(ok, false, "flip down")
	t.ok(dt < 50, "flip fails at once")
	cluster.reload { flip = me }
	t.eq(cluster.call("flip", "@sdb", "GET"), "foobar", "flip up again")
	-- a bad entry fails the whole reload, and changes nothing
	t.raises("call failed", cluster.reload, { flip = false, bad = 5 })
	t.raises("call failed", cluster.reload, { flip = false, __nosuchoption = 1 })
	t.raises("call failed", cluster.reload, { flip = "no port" })
	t.eq(cluster.call("flip", "@sdb", "GET"), "foobar", "flip still up")
end)

---------------------------------------------------------------- the agent

local function raw_client()
	local fd = assert(socket.open(me))
	local c = {}
	function c.send(hex_or_bytes)
		socket.write(fd, hex_or_bytes)
	end
	function c.frame(body)
		socket.write(fd, string.pack(">s2", body))
	end
	function c.read()
		local h = socket.read(fd, 2)
		if not h then
			return nil
		end
		return socket.read(fd, string.unpack(">I2", h))
	end
	function c.close()
		socket.close(fd)
	end
	return c
end

t.case("the agent answers the captured edge cases", function()
	local c = raw_client()
	c.send(H "00 14 | 80 | 07 | 40 6e 6f 73 75 63 68 | 00 00 00 00 | 24 50 49 4e 47 0c 78")
	same(c.read(), H "00 00 00 00 | 00" .. "Invalid name", "push to @nosuch")
	c.send(H "00 0d | 00 | 00 00 00 00 | 00 00 00 00 | 1c 73 64 62")
	same(c.read(), H "00 00 00 00 | 01" .. pack(target), "query with session 0")
	c.send(H "00 09 | 03 | 32 00 00 00 | 1c 47 45 54")
	same(c.read(), H "32 00 00 00 | 00" .. "Invalid name", "orphan final part")
	c.send(H "00 0e | 81 | 04 | 40 73 64 62 | 33 00 00 00 | 0a 00 00 00")
	c.send(H "00 0a | 03 | 33 00 00 00 | 1c 47 45 54 04")
	same(c.read(), H "33 00 00 00 | 00" .. "Invalid large req", "total mismatch")
	c.frame(H "80 | 04 | 40 73 64 62 | 05 00 00 00" .. pack "EMPTY")
	same(c.read(), H "05 00 00 00 | 01", "empty reply")
	c.frame(H "80 | 03 | 73 64 62 | 06 00 00 00" .. pack "GET")
	same(c.read(), H "06 00 00 00 | 00" .. "Invalid name", "a global name gets an error, not a hang")
	c.frame(H "05 00 00")
	c.frame("")
	c.frame(H "00 01 02")
	c.frame(H "80 | 04 | 40 73 64 62 | fe ff ff ff" .. pack "GET")
	same(c.read(), H "fe ff ff ff | 01" .. pack "foobar", "bad frames dropped, connection kept")
	c.frame(H "00" .. string.pack("<I4I4", target, 7) .. pack("raise", "boom"))
	local s, ok, text = core.unpackresponse(c.read())
	t.eq(s, 7, "raised: session")
	t.eq(ok, false, "raised: error")
	t.ok(text:find "call failed", "raised: " .. text)
	c.frame(H "00 | ff ff 00 00 | 08 00 00 00" .. pack "GET")
	s, ok, text = core.unpackresponse(c.read())
	t.ok(s == 8 and not ok and text:find "invalid address", "unused handle: " .. tostring(text))
	-- a stale handle may now name an agent: an unknown request fails, never hangs
	local agent
	for addr, desc in pairs(skynet.call(".launcher", "lua", "LIST")) do
		if desc:find "clusteragent" then
			agent = tonumber(addr:sub(2), 16)
		end
	end
	t.ok(agent, "an agent runs")
	c.frame(H "00" .. string.pack("<I4I4", agent, 9) .. pack("GET", "a"))
	s, ok = core.unpackresponse(c.read())
	t.ok(s == 9 and not ok, "a call to an agent fails")
	c.close()
end)

t.case("the agent takes interleaved, oversized and traced frames", function()
	local c = raw_client()
	-- two multi-part calls interleaved with a single one
	local a = pack("echo", string.rep("a", 40000))
	local b = pack("echo", string.rep("b", 50000))
	local ha, _, pa = core.packrequest("@sdb", 20, a)
	local hb, _, pb = core.packrequest(".sdbl", 21, b)
	c.send(ha .. hb .. pa[1] .. pb[1] .. (core.packrequest(target, 22, pack("echo", "mid"))))
	c.send(pb[2] .. pa[2])
	local got = {}
	for _ = 1, 3 do
		local s, ok, data, padding = core.unpackresponse(c.read())
		t.ok(ok, "ok")
		if padding then -- begin: collect the pieces
			local parts = { data }
			repeat
				local _, _, piece, more = core.unpackresponse(c.read())
				parts[#parts + 1] = piece
			until not more
			data = core.concat(parts)
		end
		got[s] = unpack(data)
	end
	t.eq(got[20], string.rep("a", 40000), "first multi-part")
	t.eq(got[21], string.rep("b", 50000), "second multi-part")
	t.eq(got[22], "mid", "single in between")
	-- a single frame above 0x7fff payload bytes (the reference never sends one, but may)
	local big = pack("size", string.rep("z", 40000))
	c.frame(H "80 | 04 | 40 73 64 62 | 09 00 00 00" .. big)
	same(c.read(), H "09 00 00 00 | 01" .. pack(40000), "oversize single frame")
	-- a trace frame attaches to the next call
	c.frame("\4(test-trace)")
	c.frame(H "80 | 04 | 40 73 64 62 | 0a 00 00 00" .. pack "GET")
	same(c.read(), H "0a 00 00 00 | 01" .. pack "foobar", "traced call")
	c.close()
end)

t.case("the agent bounds messages and requests in flight", function()
	cluster.reload { __maxmessage = 65536, __maxpending = 4 }
	local c = raw_client() -- a new agent: it starts with these options
	c.send(H "00 0d | 01" .. string.pack("<I4I4I4", target, 30, 70000))
	same(c.read(), string.pack("<I4", 30) .. "\0Invalid large req", "over __maxmessage: refused")
	local parts = select(3, core.packrequest(target, 30, string.rep("p", 70000)))
	c.send(table.concat(parts)) -- skipped, no answer
	c.frame(H "80 | 04 | 40 73 64 62 | 1f 00 00 00" .. pack "GET")
	same(c.read(), H "1f 00 00 00 | 01" .. pack "foobar", "the connection goes on")
	t.ok(wait_until(function()
		return skynet.call(target, "lua", "active") == 0
	end, 300), "no sleeper left from earlier cases")
	skynet.call(target, "lua", "peak")
	local pipelined = {}
	for i = 1, 20 do
		pipelined[i] = core.packrequest("@sdb", 100 + i, pack("SLEEP", 5))
	end
	c.send(table.concat(pipelined))
	local answered = {}
	for _ = 1, 20 do
		local s, ok = core.unpackresponse(c.read())
		t.ok(ok, "slept")
		answered[#answered + 1] = s
	end
	t.eq(#answered, 20, "all pipelined calls answered")
	local peak = skynet.call(target, "lua", "peak")
	t.ok(peak <= 4, "at most __maxpending in flight at the target: " .. peak)
	c.close()
	-- unfinished multi-part messages may not pile up beyond __maxmessage
	local c2 = raw_client()
	local hdr = H "01" .. string.pack("<I4I4I4", target, 40, 60000)
	local hdr2 = H "01" .. string.pack("<I4I4I4", target, 41, 60000)
	c2.send(string.pack(">s2", hdr) .. string.pack(">s2", hdr2))
	c2.send(string.pack(">s2", H "02" .. string.pack("<I4", 40) .. string.rep("x", 32768)))
	c2.send(string.pack(">s2", H "02" .. string.pack("<I4", 41) .. string.rep("x", 32768)))
	c2.send(string.pack(">s2", H "02" .. string.pack("<I4", 41) .. string.rep("x", 32768)))
	t.eq(c2.read(), nil, "closed past the unfinished-bytes bound")
	c2.close()
	cluster.reload { __maxmessage = 16 * 1024 * 1024, __maxpending = 1024 }
end)

---------------------------------------------------------------- registry, proxy, snax

t.case("register, unregister, query", function()
	local other = skynet.newservice("svc_cluster_target", "other")
	cluster.register("tmp", other)
	t.eq(cluster.query("me", "tmp"), other, "query")
	t.eq(cluster.call("me", "@tmp", "whoami"), "other", "call by the new name")
	t.raises("call failed", cluster.register, "tmp", target)
	cluster.register("tmp2", other) -- the old name goes, the agents forget it
	t.eq(cluster.call("me", "@tmp2", "whoami"), "other", "renamed")
	t.raises("call failed", cluster.call, "me", "@tmp", "whoami")
	cluster.unregister("tmp2")
	t.raises("call failed", cluster.query, "me", "tmp2")
	cluster.unregister("never") -- nothing to do
	cluster.register("dead", other)
	skynet.call(other, "lua", "exit")
	t.raises("call failed", cluster.call, "me", "@dead", "whoami")
	t.eq(type(cluster.get_sender "me"), "number", "get_sender")
end)

t.case("proxy and snax", function()
	local p = cluster.proxy("me", "@sdb")
	t.eq(skynet.call(p, "lua", "GET"), "foobar", "call through the proxy")
	skynet.send(p, "lua", "PING", "via proxy")
	t.eq(cluster.proxy "me@sdb", p, "one proxy per node and address")
	local p2 = cluster.proxy "me.sdbl"
	t.eq(skynet.call(p2, "lua", "echo", 3), 3, "proxy by .name")
	local p3 = cluster.proxy("me", target)
	t.eq(skynet.call(p3, "lua", "echo", 4), 4, "proxy by handle")
	t.ok(wait_until(function()
		local l = skynet.call(target, "lua", "log")
		return l[1] == "via proxy"
	end, 300), "push through the proxy")
	snax.uniqueservice "pingsnax"
	local obj = cluster.snax("me", "pingsnax")
	t.eq(obj.req.ping "x", "pong x", "snax request")
	obj.post.hello "world"
	t.ok(wait_until(function()
		return obj.req.heard()[1] == "world"
	end, 300), "snax post")
end)

t.case("order: pushes and calls keep their order, also before the sender is known", function()
	cluster.reload { order = me }
	for i = 1, 50 do
		cluster.send("order", "@sdb", "PING", i)
	end
	t.eq(cluster.call("order", "@sdb", "GET"), "foobar", "call after the pushes")
	local l = skynet.call(target, "lua", "log")
	t.eq(#l, 50, "all pushes")
	for i = 1, 50 do
		t.eq(l[i], i, "push " .. i .. " in order")
	end
end)

t.start(nil, function()
	target = skynet.newservice("svc_cluster_target", "target")
	skynet.name(".sdbl", target)
	cluster.register("sdb", target)
	me = "127.0.0.1:" .. free_port()
	cluster.reload { me = me }
	cluster.open "me"
end)
