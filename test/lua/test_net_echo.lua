-- An echo server on skynet.socket (svc_net_echo) and clients in this
-- service: one round trip, many concurrent clients, 2000 connections open
-- at once, a 4 MB payload, a refused connect, the server's view of the
-- closes, a listen on a used port, resolve and netstat.
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"
local util = require "svc_net_util"

local echo, port

-- Runs n forks of f(i) and waits for all; returns the errors (a table).
local function parallel(n, f)
	local done, errors = 0, {}
	local token = {}
	local waiting = false
	for i = 1, n do
		skynet.fork(function()
			local ok, err = pcall(f, i)
			if not ok then
				errors[#errors + 1] = tostring(err)
			end
			done = done + 1
			if done == n and waiting then
				skynet.wakeup(token)
			end
		end)
	end
	if done < n then
		waiting = true
		skynet.wait(token)
	end
	return errors
end

t.case("one client round trip", function()
	local c = assert(socket.open("127.0.0.1", port))
	t.eq(socket.write(c, "hello"), true, "write")
	t.eq(socket.read(c, 5), "hello", "echo")
	socket.close(c)
	c = assert(socket.open("127.0.0.1:" .. port))
	socket.write(c, "again")
	t.eq(socket.read(c, 5), "again", "echo over host:port")
	socket.close(c)
end)

t.case("100 concurrent clients, 50 messages each", function()
	local errors = parallel(100, function(i)
		local c = assert(socket.open("127.0.0.1", port))
		for k = 1, 50 do
			local msg = string.rep(string.char(65 + (i + k) % 26), 1 + (i * k) % 700)
			socket.write(c, msg)
			local got = socket.read(c, #msg)
			assert(got == msg, string.format("client %d message %d", i, k))
		end
		socket.close(c)
	end)
	t.eq(#errors, 0, "errors: " .. table.concat(errors, "; "))
end)

t.case("2000 connections open at once", function()
	local N <const> = 2000
	local ids = {}
	for i = 1, N do
		ids[i] = assert(socket.open("127.0.0.1", port))
	end
	for i = 1, N do
		socket.write(ids[i], string.format("%d\n", i))
	end
	local errors = parallel(N, function(i)
		local line = socket.readline(ids[i])
		assert(line == tostring(i), "connection " .. i)
		socket.close(ids[i])
	end)
	t.eq(#errors, 0, "errors: " .. table.concat(errors, "; ", 1, math.min(#errors, 5)))
end)

t.case("a 4 MB payload comes back intact", function()
	local data = util.bytes(4 * 1024 * 1024, 11)
	local c = assert(socket.open("127.0.0.1", port))
	for i = 1, #data, 65536 do
		socket.write(c, data:sub(i, i + 65535))
	end
	local got = socket.read(c, #data)
	t.eq(#got, #data, "size")
	t.ok(got == data, "content")
	socket.close(c)
end)

t.case("connect to a closed port returns nil and an error", function()
	local lid, _, p = socket.listen("127.0.0.1", 0)
	socket.close(lid)
	local id, err = socket.open("127.0.0.1", p)
	t.eq(id, nil, "id")
	t.eq(type(err), "string", "error text type")
	t.ok(#err > 0, "error text")
end)

t.case("the server saw every connection close", function()
	t.ok(util.wait_for(function()
		local a, c = skynet.call(echo, "lua", "stats")
		return a == c
	end), "accepted == closed")
	local accepted = skynet.call(echo, "lua", "stats")
	t.eq(accepted, 2 + 100 + 2000 + 1, "accepted")
end)

t.case("listen on a used port raises why, with no position", function()
	local err = t.raises("cannot listen on", socket.listen, "127.0.0.1", port)
	t.eq(err, string.format("cannot listen on 127.0.0.1:%d: address already in use (is another node running?)", port),
		"error text")
end)

t.case("resolve and netstat", function()
	local ips = socket.resolve("127.0.0.1")
	t.eq(type(ips), "table", "resolve result")
	t.eq(ips[1], "127.0.0.1", "numeric host")
	local found = false
	for _, v in ipairs(socket.netstat()) do
		if v.type == "LISTEN" and v.sock == "127.0.0.1:" .. port then
			found = true
			t.eq(v.address, echo, "owner")
		end
	end
	t.ok(found, "the echo listener is in netstat")
end)

t.start(nil, function()
	echo = skynet.newservice("svc_net_echo")
	port = skynet.call(echo, "lua", "listen")
end)
