-- skynet.socket UDP: udp with a receive callback, sendto back to
-- the sender, udp_address, udp_dial / udp_connect + write, udp_listen, and
-- IPv6 loopback when the host has it.
local socket = require "skynet.socket"
local t = require "testlib"
local util = require "svc_net_util"

-- A port number free for TCP right now (taken from an ephemeral listener);
-- used for UDP, whose ports are a separate space.
local function some_port(host)
	local lid, _, port = socket.listen(host or "127.0.0.1", 0)
	socket.close(lid)
	return port
end

-- An echo server answering "echo:<data>"; returns id, port, the list of
-- senders seen.
local function echo_server(host, make)
	local seen = {}
	local id
	local port = some_port(host)
	local function cb(data, from)
		seen[#seen + 1] = from
		socket.sendto(id, from, "echo:" .. data)
	end
	id = make(cb, host, port)
	return id, port, seen
end

local function inbox()
	local got = {}
	return got, function(data)
		got[#got + 1] = data
	end
end

t.case("udp_dial + write, and the server answers with sendto", function()
	local server, port, seen = echo_server("127.0.0.1", socket.udp)
	local got, cb = inbox()
	local c = socket.udp_dial("127.0.0.1", port, cb)
	t.eq(socket.write(c, "hi"), true, "write")
	t.ok(util.wait_for(function()
		return #got == 1
	end), "reply arrived")
	t.eq(got[1], "echo:hi", "reply")
	local ip, p = socket.udp_address(seen[1])
	t.eq(ip, "127.0.0.1", "sender ip")
	t.ok(math.type(p) == "integer" and p > 0 and p ~= port, "sender port")
	socket.close(c)
	socket.close(server)
end)

t.case("udp + udp_connect, several datagrams keep their boundaries", function()
	local server, port = echo_server("127.0.0.1", function(cb, host, p)
		return socket.udp_listen(host, p, cb)
	end)
	local got, cb = inbox()
	local c = socket.udp(cb)
	socket.udp_connect(c, "127.0.0.1", port)
	for i = 1, 20 do
		socket.write(c, string.rep("d", i))
	end
	t.ok(util.wait_for(function()
		return #got == 20
	end), "all replies: " .. #got)
	table.sort(got)
	for i = 1, 20 do
		t.eq(#got[i], 5 + i, "datagram size " .. i)
	end
	socket.close(c)
	socket.close(server)
end)

t.case("sendto a closed port does not break the socket", function()
	local got = {}
	local last_from
	local u_port = some_port()
	local u = socket.udp(function(data, from)
		got[#got + 1] = data
		last_from = from
	end, "127.0.0.1", u_port)
	-- learn the address of a socket, then close it: nobody listens there
	local gone = socket.udp_dial("127.0.0.1", u_port, function() end)
	socket.write(gone, "hello")
	t.ok(util.wait_for(function()
		return #got == 1
	end), "first datagram")
	local dead = last_from
	socket.close(gone)
	for _ = 1, 3 do
		t.eq(socket.sendto(u, dead, "into the void"), true, "sendto a closed port")
	end
	t.quiesce()
	local other = socket.udp_dial("127.0.0.1", u_port, function() end)
	socket.write(other, "still there")
	t.ok(util.wait_for(function()
		return #got == 2
	end), "u still receives")
	t.eq(got[2], "still there", "second datagram")
	t.raises("", socket.udp_address, "junk")
	socket.close(other)
	socket.close(u)
end)

t.case("IPv6 loopback (skipped when ::1 is unavailable)", function()
	local ok, server, port = pcall(echo_server, "::1", socket.udp)
	if not ok then
		print("  net_udp: IPv6 case skipped: " .. tostring(server))
		return
	end
	local got, cb = inbox()
	local c = socket.udp_dial("::1", port, cb)
	socket.write(c, "six")
	t.ok(util.wait_for(function()
		return #got == 1
	end), "reply over ::1")
	t.eq(got[1], "echo:six", "reply")
	socket.close(c)
	socket.close(server)
end)

t.start()
