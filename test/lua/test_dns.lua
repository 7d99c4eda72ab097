-- skynet.dns against a DNS server written in this service (UDP on
-- 127.0.0.1): the query bytes, A / AAAA / CNAME chains, NXDOMAIN, the hosts
-- file, IP literals and illegal names, the TTL cache and flush, retransmits
-- and the 30 s timeout of a server that reads and drops every query, a
-- spoofed answer, and socket.open by host name going through skynet.dns.
local skynet = require "skynet"
local socket = require "skynet.socket"
local dns = require "skynet.dns"
local t = require "testlib"

local function some_port()
	local lid, _, port = socket.listen("127.0.0.1", 0)
	socket.close(lid)
	return port
end

local function encode_name(name)
	local out = {}
	for label in name:gmatch "[^%.]+" do
		out[#out + 1] = string.char(#label) .. label
	end
	return table.concat(out) .. "\0"
end

-- The server. zone: name -> {a = {...}, aaaa = {...}, cname = "x", ttl = n,
-- rcode = n, silent = true, spoof = "other.name"}.
local zone = {}
local queries = {} -- every datagram received
local server_id, server_port

local function rr(name_bytes, rtype, ttl, rdata)
	return name_bytes .. string.pack(">I2I2I4s2", rtype, 1, ttl, rdata)
end

local function answer(msg, from)
	queries[#queries + 1] = msg
	local id = string.unpack(">I2", msg)
	local pos, labels = 13, {}
	while msg:byte(pos) ~= 0 do
		local len = msg:byte(pos)
		labels[#labels + 1] = msg:sub(pos + 1, pos + len)
		pos = pos + len + 1
	end
	local qname = table.concat(labels, ".")
	local qtype = string.unpack(">I2", msg, pos + 1)
	local question = msg:sub(13, pos + 4)
	local z = zone[qname]
	if z == nil then
		z = { rcode = 3 }
	end
	if z.silent then
		return
	end
	local records = {}
	local owner = "\xc0\x0c" -- a pointer to the question name
	local ttl = z.ttl or 60
	if z.cname then
		records[#records + 1] = rr(owner, 5, ttl, encode_name(z.cname))
		owner = encode_name(z.cname)
		z = zone[z.cname]
	end
	if qtype == 1 then
		for _, ip in ipairs(z.a or {}) do
			local a, b, c, d = ip:match "(%d+)%.(%d+)%.(%d+)%.(%d+)"
			records[#records + 1] = rr(owner, 1, z.ttl or ttl, string.char(a, b, c, d))
		end
	elseif qtype == 28 then
		for _, raw in ipairs(z.aaaa or {}) do
			records[#records + 1] = rr(owner, 28, z.ttl or ttl, raw)
		end
	end
	if z.spoof then
		question = encode_name(z.spoof) .. question:sub(-4)
	end
	local header = string.pack(">I2I2I2I2I2I2", id, 0x8180 | (z.rcode or 0), 1, #records, 0, 0)
	socket.sendto(server_id, from, header .. question .. table.concat(records))
end

local function start_server()
	server_port = some_port()
	server_id = socket.udp(answer, "127.0.0.1", server_port)
	dns.server("127.0.0.1", server_port)
end

local V6 = string.char(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)

zone["one.test"] = { a = { "10.0.0.1" } }
zone["multi.test"] = { a = { "10.0.0.2", "10.0.0.3" }, aaaa = { V6 }, ttl = 5 }
zone["alias.test"] = { cname = "target.test" }
zone["target.test"] = { a = { "10.0.0.9" } }
zone["silent.test"] = { silent = true }
zone["broken.test"] = { rcode = 2 }
zone["spoofed.test"] = { a = { "6.6.6.6" }, spoof = "evil.test" }
zone["local.test"] = { a = { "127.0.0.1" } }

t.case("query bytes, A, AAAA, CNAME chain", function()
	dns.DEFAULT_HOSTS = nil
	start_server()
	local ip, ips = dns.resolve("One.Test")
	t.eq(ip, "10.0.0.1", "A")
	t.same(ips, { "10.0.0.1" }, "ips")
	local q = queries[1]
	t.eq(t.hex(q:sub(3)), "01000001000000000000036f6e65047465737400" .. "00010001",
		"query bytes after the id")
	t.eq(string.unpack(">I2", q), 1, "ids start at 1")
	ip, ips = dns.resolve("multi.test")
	t.eq(ip, "10.0.0.2", "the first of two")
	t.same(ips, { "10.0.0.2", "10.0.0.3" }, "two addresses")
	t.eq(string.unpack(">I2", queries[2]), 2, "ids increase")
	ip = dns.resolve("multi.test", true)
	t.eq(ip, "2001:db8:0:0:0:0:0:1", "AAAA text without compression")
	t.eq(#queries[3], #q + 2, "AAAA query")
	t.eq(dns.resolve("alias.test"), "10.0.0.9", "CNAME chain")
end)

t.case("literals, illegal names, NXDOMAIN and SERVFAIL fail fast", function()
	t.eq(select("#", dns.resolve("1.2.3.4")), 1, "IPv4 literal: one value")
	t.eq(dns.resolve("1.2.3.4", true), "1.2.3.4", "literal whatever the flag")
	t.eq(dns.resolve("::1"), "::1", "IPv6 literal")
	local ip, err = dns.resolve("bad name!")
	t.eq(ip, nil, "illegal")
	t.eq(err, "illegal name", "illegal text")
	t.eq(select(2, dns.resolve(string.rep("a", 64) .. ".test")), "illegal name", "label > 63")
	t.eq(select(2, dns.resolve(string.rep("a.", 600))), "illegal name", "name > 1024")
	local before = skynet.now()
	t.raises("timeout or no answer", dns.resolve, "nosuch.test")
	t.raises("timeout or no answer", dns.resolve, "broken.test")
	t.ok(skynet.now() - before < 100, "no waiting for a timeout")
end)

t.case("TTL cache, flush, expired entry as fallback", function()
	local n = #queries
	dns.resolve("multi.test")
	t.eq(#queries, n, "cached: no query")
	skynet.sleep(600) -- past the 5 s TTL
	dns.resolve("multi.test")
	t.eq(#queries, n + 1, "expired: a new query")
	dns.flush()
	dns.resolve("multi.test")
	t.eq(#queries, n + 2, "flushed: a new query")
	skynet.sleep(600)
	zone["multi.test"].silent = true
	local before = skynet.now()
	t.eq(dns.resolve("multi.test"), "10.0.0.2", "the expired entry when the server is silent")
	t.ok(skynet.now() - before >= 3000, "after the timeout")
	zone["multi.test"].silent = nil
end)

t.case("a server that never answers: retransmits, then a timeout error", function()
	local n = #queries
	local before = skynet.now()
	t.raises("timeout or no answer", dns.resolve, "silent.test")
	local waited = skynet.now() - before
	t.ok(waited >= 3000 and waited < 3100, "about 30 s: " .. waited)
	t.eq(#queries - n, 4, "sent at 0, 2, 6 and 14 s")
	local id = string.unpack(">I2", queries[n + 1])
	for i = n + 2, #queries do
		t.eq(string.unpack(">I2", queries[i]), id, "a retransmit keeps the id")
	end
end)

t.case("concurrent resolves, a spoofed answer is not taken", function()
	local results, token, done = {}, {}, 0
	for i = 1, 20 do
		skynet.fork(function()
			results[i] = dns.resolve(i % 2 == 0 and "one.test" or "target.test")
			done = done + 1
			if done == 20 then
				skynet.wakeup(token)
			end
		end)
	end
	dns.flush()
	if done < 20 then
		skynet.wait(token)
	end
	for i = 1, 20 do
		t.eq(results[i], i % 2 == 0 and "10.0.0.1" or "10.0.0.9", "resolve " .. i)
	end
	t.raises("timeout or no answer", dns.resolve, "spoofed.test")
end)

t.case("hosts file first, parsed once", function()
	local path = os.tmpname()
	local f = assert(io.open(path, "w"))
	f:write("# comment\n10.1.1.1 Host.Test alias.example ; trailing\n10.1.1.2 host.test\n",
		"::1 host.test\n")
	f:close()
	package.loaded["skynet.dns"] = nil -- a fresh module: hosts are read on first use
	local fresh = require "skynet.dns"
	fresh.DEFAULT_HOSTS = path
	fresh.server("127.0.0.1", server_port)
	local ip, ips = fresh.resolve("host.test")
	t.eq(ip, "10.1.1.1", "hosts A")
	t.same(ips, { "10.1.1.1", "10.1.1.2" }, "hosts: every address in order")
	t.eq(fresh.resolve("alias.example"), "10.1.1.1", "alias")
	t.eq(fresh.resolve("host.test", true), "::1", "hosts AAAA")
	t.eq(fresh.resolve("one.test"), "10.0.0.1", "not in hosts: DNS")
	os.remove(path)
	package.loaded["skynet.dns"] = dns
end)

t.case("socket.open by host name goes through skynet.dns", function()
	local lid, _, port = socket.listen("127.0.0.1", 0)
	socket.start(lid, function(id)
		socket.close_fd(id)
	end)
	local before = #queries
	local id, err = socket.open("local.test", port)
	t.ok(id, "connected: " .. tostring(err))
	t.eq(#queries, before + 1, "one DNS query")
	socket.close(id)
	id = socket.open("local.test:" .. port)
	t.ok(id, "host:port form")
	socket.close(id)
	local start = skynet.now()
	id, err = socket.open("silent.test", port)
	t.eq(id, nil, "no address")
	t.ok(tostring(err):find("timeout or no answer", 1, true), tostring(err))
	t.ok(skynet.now() - start < 3200, "one timeout, IPv6 is not tried after it")
	id, err = socket.open("nosuch.test", port)
	t.eq(id, nil, "NXDOMAIN")
	t.ok(tostring(err):find("resolve nosuch.test", 1, true), tostring(err))
	socket.close(lid)
end)

t.start()
