-- skynet.socketchannel against a line server in this service: order mode,
-- session mode (answers out of order, multi-part answers), auth on every
-- connect, backup hosts, overload notices, and the errors every waiting
-- caller gets when its connection ends (peer close, close, changehost,
-- a response that raises, a failed auth, a request timeout).
local skynet = require "skynet"
local socket = require "skynet.socket"
local sc = require "skynet.socketchannel"
local t = require "testlib"

-- The line server. Commands (one per line; the reply ends with "\n"):
--   echo X       -> X
--   hold         -> nothing (the caller keeps waiting)
--   bye          -> the server closes the connection
--   s <id> X     -> "<id> X", but held until "flush" (session mode)
--   p <id> n     -> n parts "<id>+ i" then "<id> end" (session multi-part)
--   m n          -> n lines "part i" (order-mode multi-part)
--   flush        -> the held session answers in reverse order
--   auth P       -> "ok" when P == server.password, else "no"
--   bad          -> "?!" (a reply the response functions reject)
--   pause        -> the server stops reading this connection
local servers = {}

local function serve(srv, id)
	srv.conns[#srv.conns + 1] = id
	socket.start(id)
	local held = {}
	while true do
		local line = socket.readline(id)
		if not line then
			break
		end
		srv.lines = srv.lines + 1
		local cmd, arg = line:match "^(%S+)%s?(.*)$"
		if cmd == "echo" then
			socket.write(id, arg .. "\n")
		elseif cmd == "bye" then
			socket.close(id)
			break
		elseif cmd == "s" then
			held[#held + 1] = arg
		elseif cmd == "flush" then
			for i = #held, 1, -1 do
				socket.write(id, held[i] .. "\n")
			end
			held = {}
		elseif cmd == "p" then
			local sid, n = arg:match "^(%S+) (%d+)$"
			for i = 1, tonumber(n) do
				socket.write(id, sid .. "+ " .. i .. "\n")
			end
			socket.write(id, sid .. " end\n")
		elseif cmd == "m" then
			for i = 1, tonumber(arg) do
				socket.write(id, "part " .. i .. "\n")
			end
		elseif cmd == "auth" then
			srv.auths = srv.auths + 1
			socket.write(id, arg == srv.password and "ok\n" or "no\n")
		elseif cmd == "bad" then
			socket.write(id, "?!\n")
		elseif cmd == "pause" then
			srv.paused = id
			socket.pause(id)
			return
		end
	end
end

local function new_server(password)
	local lid, _, port = socket.listen("127.0.0.1", 0)
	local srv = { lid = lid, port = port, conns = {}, lines = 0, auths = 0, password = password }
	socket.start(lid, function(id)
		skynet.fork(serve, srv, id)
	end)
	servers[#servers + 1] = srv
	return srv
end

local function stop_server(srv)
	socket.close(srv.lid)
	for _, id in ipairs(srv.conns) do
		socket.close(id)
	end
end

-- A port nothing listens on.
local function dead_port()
	local lid, _, port = socket.listen("127.0.0.1", 0)
	socket.close(lid)
	return port
end

local function line_reply(sock)
	local line = sock:readline "\n"
	if line == "?!" then
		error "bad reply"
	end
	return true, line
end

local function echo(ch, text)
	return ch:request("echo " .. text .. "\n", line_reply)
end

local spawn = t.spawn

t.case("error object identity", function()
	t.eq(tostring(sc.error), "[Error: socket]", "tostring")
	t.raises("assertion failed!", sc.channel, {})
end)

t.case("order mode: answers in request order, concurrent callers", function()
	local srv = new_server()
	local ch = sc.channel { host = "127.0.0.1", port = srv.port, nodelay = true }
	t.eq(ch:connect(true), true, "connect")
	t.eq(echo(ch, "one"), "one", "first")
	local wait = spawn(50, function(i)
		return echo(ch, "n" .. i)
	end)
	local res = wait()
	for i = 1, 50 do
		t.eq(res[i][1], true, "call " .. i)
		t.eq(res[i][2], "n" .. i, "answer " .. i)
	end
	-- no response function: nothing to wait for
	t.eq(ch:request("echo unread\n"), nil, "no-response request")
	t.eq(ch:response(line_reply), "unread", "response() reads the unsolicited answer")
	-- multi-part answer
	local n = 0
	local parts = ch:request("m 3\n", function(sock)
		n = n + 1
		return true, sock:readline "\n", n < 3
	end)
	t.same(parts, { "part 1", "part 2", "part 3" }, "padding parts")
	-- ok = false raises data, the connection stays
	t.raises("refused", ch.request, ch, "echo x\n", function(sock)
		sock:readline "\n"
		return false, "refused"
	end)
	local tab = {}
	local ok, err = pcall(ch.request, ch, "echo x\n", function(sock)
		sock:readline "\n"
		return false, tab
	end)
	t.eq(ok == false and err == tab, true, "a table error is raised as is")
	t.eq(echo(ch, "still"), "still", "connection kept")
	t.eq(#srv.conns, 1, "one connection")
	ch:close()
	stop_server(srv)
end)

t.case("order mode: padding writes low priority, in order", function()
	local srv = new_server()
	local ch = sc.channel { host = "127.0.0.1", port = srv.port }
	local got = ch:request("ec", line_reply, { "ho pad", "ded\n" })
	t.eq(got, "padded", "req then padding pieces")
	ch:close()
	stop_server(srv)
end)

t.case("session mode: out of order answers and multi-part answers", function()
	local srv = new_server()
	local ch = sc.channel {
		host = "127.0.0.1",
		port = srv.port,
		response = function(sock)
			local line = sock:readline "\n"
			local sid, more, text = line:match "^(%d+)(%+?) (.*)$"
			if text == "fail" then
				return tonumber(sid), false, "session failed"
			end
			return tonumber(sid), true, text, more == "+"
		end,
	}
	local wait = spawn(10, function(i)
		return ch:request(string.format("s %d v%d\n", i, i), i)
	end)
	skynet.sleep(10)
	ch:request("flush\n") -- the held answers come back last first
	local res = wait()
	for i = 1, 10 do
		t.eq(res[i][2], "v" .. i, "session " .. i)
	end
	t.same(ch:request("p 77 2\n", 77), { "1", "2", "end" }, "multi-part session")
	t.raises("session failed", ch.request, ch, "s 5 fail\nflush\n", 5)
	-- an answer nobody waits for is dropped; the channel keeps working
	ch:request("s 999 stray\nflush\n")
	t.eq(ch:request("s 6 fine\nflush\n", 6), "fine", "after an unknown session")
	ch:close()
	stop_server(srv)
end)

t.case("every waiting caller gets sc.error when the peer closes", function()
	local srv = new_server()
	local ch = sc.channel { host = "127.0.0.1", port = srv.port }
	ch:connect(true)
	local wait = spawn(20, function()
		return ch:request("hold\n", line_reply)
	end)
	skynet.sleep(10)
	ch:request("bye\n")
	for i, r in ipairs(wait()) do
		t.eq(r[1] == false and r[2] == sc.error, true, "caller " .. i .. " got sc.error")
	end
	-- lazy reconnect on the next request
	t.eq(echo(ch, "back"), "back", "reconnected")
	t.eq(#srv.conns, 2, "a second connection")
	ch:close()
	stop_server(srv)
end)

t.case("close and changehost fail every waiting caller", function()
	local srv1, srv2 = new_server(), new_server()
	local ch = sc.channel { host = "127.0.0.1", port = srv1.port }
	ch:connect(true)
	local wait = spawn(5, function()
		return ch:request("hold\n", line_reply)
	end)
	skynet.sleep(10)
	ch:changehost("127.0.0.1", srv2.port)
	for i, r in ipairs(wait()) do
		t.eq(r[2], sc.error, "changehost: caller " .. i)
	end
	t.eq(echo(ch, "two"), "two", "talks to the new host")
	t.eq(#srv2.conns, 1, "connected to server 2")
	wait = spawn(5, function()
		return ch:request("hold\n", line_reply)
	end)
	skynet.sleep(10)
	ch:close()
	for i, r in ipairs(wait()) do
		t.eq(r[2], sc.error, "close: caller " .. i)
	end
	t.raises("assertion failed!", ch.request, ch, "echo x\n", line_reply)
	t.eq(ch:connect(true), true, "connect clears closed")
	t.eq(echo(ch, "again"), "again", "usable again")
	ch:close()
	stop_server(srv1)
	stop_server(srv2)
end)

t.case("a response that raises fails every caller and drops the connection", function()
	local srv = new_server()
	local ch = sc.channel { host = "127.0.0.1", port = srv.port }
	ch:connect(true)
	local wait = spawn(5, function()
		return ch:request("hold\n", line_reply)
	end)
	skynet.sleep(10)
	t.raises("bad reply", ch.request, ch, "bad\n", line_reply)
	for i, r in ipairs(wait()) do
		t.eq(r[1], false, "caller " .. i .. " failed")
	end
	t.eq(echo(ch, "ok"), "ok", "reconnected after the reader error")
	t.eq(#srv.conns, 2, "new connection")
	ch:close()
	stop_server(srv)
end)

t.case("connect failure raises sc.error; backups are tried in order", function()
	local ch = sc.channel { host = "127.0.0.1", port = dead_port() }
	local ok, err = pcall(ch.connect, ch, true)
	t.eq(ok == false and err == sc.error, true, "connect(true) raises sc.error")
	ok, err = pcall(ch.request, ch, "echo x\n", line_reply)
	t.eq(ok == false and err == sc.error, true, "request raises sc.error")
	local srv = new_server()
	local dead = dead_port()
	ch = sc.channel {
		host = "127.0.0.1",
		port = dead,
		backup = { "127.0.0.1", { host = "127.0.0.1", port = dead }, { host = "127.0.0.1",
			port = srv.port } },
	}
	t.eq(echo(ch, "via backup"), "via backup", "backup used")
	t.eq(ch.port, srv.port, "the backup became the current address")
	ch:close()
	stop_server(srv)
end)

t.case("auth runs on every connect; a failing auth tries the next host", function()
	local good = new_server("pw")
	local picky = new_server("other")
	local ch
	ch = sc.channel {
		host = "127.0.0.1",
		port = picky.port,
		backup = { { host = "127.0.0.1", port = good.port } },
		auth = function(c)
			t.eq(c, ch, "auth gets the channel")
			local r = c:request("auth pw\n", line_reply)
			if r ~= "ok" then
				error("denied")
			end
		end,
	}
	-- concurrent first requests wait for the one connect + auth
	local wait = spawn(10, function(i)
		return echo(ch, "c" .. i)
	end)
	for i, r in ipairs(wait()) do
		t.eq(r[2], "c" .. i, "caller " .. i)
	end
	t.eq(picky.auths, 1, "the first host refused auth")
	t.eq(good.auths, 1, "one auth on the backup")
	ch:request("bye\n")
	skynet.sleep(10) -- the close is seen before the next request
	t.eq(echo(ch, "x"), "x", "reconnect")
	t.eq(good.auths, 2, "auth again after reconnect")
	ch:close()
	-- auth failing everywhere: connect raises sc.error
	local ch2 = sc.channel {
		host = "127.0.0.1",
		port = picky.port,
		auth = function(c)
			assert(c:request("auth pw\n", line_reply) == "ok", "denied")
		end,
	}
	local ok, err = pcall(ch2.connect, ch2, true)
	t.eq(ok == false and err == sc.error, true, "auth failure raises sc.error")
	stop_server(good)
	stop_server(picky)
end)

t.case("endless retry connect: waits for the server, stops on close", function()
	local port = dead_port()
	local ch = sc.channel { host = "127.0.0.1", port = port }
	local result
	skynet.fork(function()
		result = table.pack(pcall(ch.connect, ch))
	end)
	skynet.sleep(250) -- a few failed passes
	t.eq(result, nil, "still retrying")
	local lid = socket.listen("127.0.0.1", port)
	socket.start(lid, function(id)
		socket.start(id)
	end)
	skynet.sleep(2000)
	t.eq(result and result[2], true, "connected once the server is up")
	ch:close()
	socket.close(lid)
	-- close stops the retry: connect returns false
	local ch2 = sc.channel { host = "127.0.0.1", port = dead_port() }
	result = nil
	skynet.fork(function()
		result = table.pack(pcall(ch2.connect, ch2))
	end)
	skynet.sleep(150)
	ch2:close()
	skynet.sleep(2000)
	t.eq(result and result[1], true, "no error")
	t.eq(result and result[2], false, "connect returned false")
end)

t.case("request timeout fails the caller and every other waiter", function()
	local srv = new_server()
	local ch = sc.channel { host = "127.0.0.1", port = srv.port, timeout = 50 }
	t.eq(echo(ch, "quick"), "quick", "answered in time")
	local wait = spawn(3, function()
		return ch:request("hold\n", line_reply)
	end)
	local r = wait()
	for i = 1, 3 do
		t.eq(r[i][2], sc.error, "timed out " .. i)
	end
	t.eq(echo(ch, "after"), "after", "a new connection")
	ch:close()
	stop_server(srv)
end)

t.case("overload: notified past 1 MB unsent, and again when drained", function()
	local srv = new_server()
	local flags = {}
	local ch = sc.channel {
		host = "127.0.0.1",
		port = srv.port,
		overload = function(flag)
			flags[#flags + 1] = flag
		end,
	}
	ch:request("pause\n")
	skynet.sleep(10)
	local big = string.rep("x", 1024 * 1024)
	for _ = 1, 12 do -- past what the kernel buffers, below the 16 MB output limit
		ch:request(big)
	end
	skynet.sleep(10)
	t.eq(flags[1], true, "overloaded")
	socket.start(srv.paused) -- the server reads (and drops) again
	skynet.fork(function()
		while socket.read(srv.paused) do
		end
	end)
	for _ = 1, 500 do
		if flags[2] ~= nil then
			break
		end
		skynet.sleep(1)
	end
	t.eq(flags[2], false, "drained")
	ch:close()
	stop_server(srv)
end)

t.start()
