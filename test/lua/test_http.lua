-- test: real time (clients and servers wait on real sockets and timeouts)
-- http.httpc, http.server/httpd and http.sockethelper over loopback
-- sockets: request bytes and Host rules, status and body forms (length,
-- chunked, close-delimited, 204), post forms, head, request_stream,
-- timeouts, connect failures; the server's keep-alive, pipelining,
-- slowloris deadline, oversized header and body, connection limit.
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"
local httpc = require "http.httpc"
local server = require "http.server"
local sh = require "http.sockethelper"
local url = require "http.url"

local port -- of the http.server under test
local lid

local function handler(req)
	local path = req.path
	if path == "/hello" then
		return 200, "hello", { ["content-type"] = "text/plain" }
	elseif path == "/echo" then
		return 200, req.method .. " " .. req.url .. " " .. req.body
	elseif path == "/query" then
		local q = url.parse_query(req.query)
		return 200, tostring(q.a) .. "," .. tostring(q.b)
	elseif path == "/chunked" then
		local parts = { "one", "", "two", "three" }
		local i = 0
		return 200, function()
			i = i + 1
			return parts[i]
		end, { ["x-t"] = "c" }
	elseif path == "/nocontent" then
		return 204
	elseif path == "/slow" then
		skynet.sleep(300)
		return 200, "late"
	elseif path == "/fail" then
		error("handler bug")
	elseif path == "/header" then
		return 200, tostring(req.header["x-a"])
	end
	return 404, "no such page"
end

-- A raw listener: accepts one connection, records what the client sends
-- until the header ends, answers with `answer` and closes.
local function raw_server(answer, hold)
	local id, _, p = socket.listen("127.0.0.1", 0)
	local got = { }
	local token = {}
	socket.start(id, function(fd)
		socket.start(fd)
		local data = ""
		while not data:find("\r\n\r\n", 1, true) do
			local s = socket.read(fd)
			if not s then
				break
			end
			data = data .. s
		end
		got.data = data
		if hold then
			skynet.sleep(hold)
		end
		if answer then
			socket.write(fd, answer)
		end
		socket.close(fd)
		got.done = true
		skynet.wakeup(token)
	end)
	return p, got, function()
		if not got.done then
			skynet.wait(token)
		end
		socket.close(id)
	end
end

-- Sends raw bytes to the server under test and reads until close (or n cs).
local function raw_exchange(pieces, gap, limit)
	local fd = assert(socket.open("127.0.0.1", port))
	for i, p in ipairs(pieces) do
		socket.write(fd, p)
		if gap and i < #pieces then
			skynet.sleep(gap)
		end
	end
	local out = {}
	local deadline = skynet.now() + (limit or 500)
	while skynet.now() < deadline do
		local s = socket.read(fd)
		if not s then
			break
		end
		out[#out + 1] = s
	end
	socket.close(fd)
	return table.concat(out)
end

t.case("httpc.get/request against http.server", function()
	local code, body = httpc.get("127.0.0.1:" .. port, "/hello")
	t.eq(code, 200)
	t.eq(body, "hello")
	local rh = {}
	code, body = httpc.request("PUT", "http://127.0.0.1:" .. port, "/echo?x=1", rh, { ["X-A"] = "b" },
		"DATA")
	t.eq(code, 200)
	t.eq(body, "PUT /echo?x=1 DATA")
	t.eq(rh["content-length"], "18")
	code, body = httpc.get("127.0.0.1:" .. port, "/query?a=1&b=x%20y")
	t.eq(code, 200)
	t.eq(body, "1,x y")
	code, body = httpc.get("127.0.0.1:" .. port, "/chunked")
	t.eq(code, 200)
	t.eq(body, "onetwothree")
	code, body = httpc.get("127.0.0.1:" .. port, "/nocontent")
	t.eq(code, 204)
	t.eq(body, "")
	code, body = httpc.get("127.0.0.1:" .. port, "/missing")
	t.eq(code, 404)
	t.eq(body, "no such page")
	code = httpc.get("127.0.0.1:" .. port, "/fail")
	t.eq(code, 500, "a failing handler answers 500")
	t.eq(httpc.head("127.0.0.1:" .. port, "/hello"), 200)
	code, body = httpc.post("127.0.0.1:" .. port, "/echo", { k = "a b&c" })
	t.eq(code, 200)
	t.eq(body, "POST /echo k=a%20b%26c")
end)

t.case("httpc request bytes, Host rules and response forms", function()
	local p, got, finish = raw_server("HTTP/1.1 200 OK\r\nX-Y: 1\r\n\r\nuntil close")
	local code, body = httpc.request("PUT", "127.0.0.1:" .. p, "/path?q", nil, { ["X-B"] = "2" },
		"BODY")
	finish()
	t.eq(code, 200)
	t.eq(body, "until close", "close-delimited body")
	-- the two header lines come in pairs order
	local a = "PUT /path?q HTTP/1.1\r\nX-B:2\r\nHost:127.0.0.1:" .. p .. "\r\nContent-length:4\r\n\r\nBODY"
	local b = "PUT /path?q HTTP/1.1\r\nHost:127.0.0.1:" .. p .. "\r\nX-B:2\r\nContent-length:4\r\n\r\nBODY"
	t.ok(got.data == a or got.data == b, got.data)
	p, got, finish = raw_server("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
	httpc.get("[::ffff:127.0.0.1]:" .. p, "/x")
	finish()
	t.eq(got.data, "GET /x HTTP/1.1\r\nhost:[::ffff:127.0.0.1]:" .. p .. "\r\nContent-length:0\r\n\r\n")
end)

t.case("httpc response parsing errors", function()
	local cases = {
		{ "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n", "Unsupport transfer-encoding" },
		{ "FOO 200 OK\r\n\r\n", "Invalid HTTP response header" },
		{ "HTTP/1.1 200 OK\r\nbad\r\n\r\n", "Invalid HTTP response header" },
		{ "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "Invalid response body" },
		{ "HTTP/1.1 200 OK\r\nX: " .. string.rep("a", 9000) .. "\r\n\r\n", "Recv header failed" },
	}
	for _, c in ipairs(cases) do
		local p, _, finish = raw_server(c[1])
		t.raises(c[2], httpc.get, "127.0.0.1:" .. p, "/")
		finish()
	end
	local p, _, finish = raw_server("HTTP/1.1 200\r\ncontent-length: 2\r\n\r\nok")
	local code, body = httpc.get("127.0.0.1:" .. p, "/")
	finish()
	t.eq(code, 200, "empty reason accepted")
	t.eq(body, "ok")
	-- truncated length body raises socket_error
	p, _, finish = raw_server("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc")
	local ok, err = pcall(httpc.get, "127.0.0.1:" .. p, "/")
	finish()
	t.eq(ok, false)
	t.eq(err, sh.socket_error)
end)

t.case("httpc host forms and connect failures", function()
	t.raises("Invalid protocol: ftp", httpc.get, "ftp://127.0.0.1", "/")
	t.raises("Invalid host: bare IPv6 address '::1', use '[::1]' instead", httpc.get, "::1", "/")
	-- a closed port
	local id, _, p = socket.listen("127.0.0.1", 0)
	socket.close(id)
	local ok, err = pcall(httpc.get, "127.0.0.1:" .. p, "/")
	t.eq(ok, false)
	t.eq(err, sh.socket_error)
	local text = tostring(err)
	t.ok(text:find("connect failed host = 127.0.0.1 port = " .. p, 1, true), text)
	t.ok(text:find("is_time_out = false", 1, true), text)
end)

t.case("httpc.timeout on a silent server", function()
	local p, _, finish = raw_server(nil, 100)
	httpc.timeout = 20
	local t0 = skynet.now()
	local ok, err = pcall(httpc.get, "127.0.0.1:" .. p, "/")
	local took = skynet.now() - t0
	httpc.timeout = nil
	finish()
	t.eq(ok, false)
	t.eq(err, sh.socket_error)
	t.ok(took >= 20 and took < 90, "took " .. took)
end)

t.case("sockethelper.connect timeout against a full backlog", function()
	local id, _, p = socket.listen("127.0.0.1", 0, 1) -- never started: nothing is accepted
	local fds = {}
	local timed_out
	for _ = 1, 6 do
		local ok, fd = pcall(sh.connect, "127.0.0.1", p, 10)
		if ok then
			fds[#fds + 1] = fd
		else
			t.eq(fd, sh.socket_error)
			timed_out = tostring(fd)
			break
		end
	end
	for _, fd in ipairs(fds) do
		socket.close(fd)
	end
	socket.close(id)
	t.ok(timed_out and timed_out:find("is_time_out = true", 1, true), tostring(timed_out))
end)

t.case("httpc.request_stream: chunked, length, close-delimited, early close", function()
	local pieces = {}
	for piece in httpc.request_stream("GET", "127.0.0.1:" .. port, "/chunked") do
		pieces[#pieces + 1] = piece
	end
	t.eq(table.concat(pieces), "onetwothree")
	local s = httpc.request_stream("GET", "127.0.0.1:" .. port, "/hello")
	t.eq(s.status, 200)
	t.eq(s.header["content-type"], "text/plain")
	local all = {}
	for piece in s do
		all[#all + 1] = piece
	end
	t.eq(table.concat(all), "hello")
	t.eq(s.connected, false, "closed at the end")
	local p, _, finish = raw_server("HTTP/1.1 200 OK\r\n\r\nabc")
	all = {}
	for piece in httpc.request_stream("GET", "127.0.0.1:" .. p, "/") do
		all[#all + 1] = piece
	end
	finish()
	t.eq(table.concat(all), "abc", "a clean close ends the stream with nil")
	do
		local s2 <close> = httpc.request_stream("GET", "127.0.0.1:" .. port, "/hello")
		t.eq(s2.connected, true)
	end
end)

t.case("httpc.request_stream: a chunked body starts with its first chunk, as in skynet", function()
	local p, _, finish = raw_server("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
		.. "6\r\nfirst,\r\n7\r\nsecond,\r\n5\r\nthird\r\n0\r\n\r\n")
	local pieces = {}
	for piece in httpc.request_stream("GET", "127.0.0.1:" .. p, "/") do
		pieces[#pieces + 1] = string.format("%q", piece)
	end
	finish()
	t.eq(table.concat(pieces, " "), '"first," "second," "third" ""', "one piece per chunk, then \"\"")
end)

t.case("server: keep-alive and pipelined requests on one connection", function()
	local out = raw_exchange({ "GET /hello HTTP/1.1\r\n\r\nGET /echo HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc"
		.. "GET /hello HTTP/1.1\r\nconnection: close\r\n\r\n" })
	local n = select(2, out:gsub("HTTP/1.1 200 OK", ""))
	t.eq(n, 3, out)
	t.ok(out:find("GET /echo abc", 1, true), out)
	t.ok(out:find("connection: close", 1, true), out)
end)

t.case("server: oversized header and body, bad lines, malformed request line", function()
	t.ok(raw_exchange({ "GET /" .. string.rep("a", 9000) .. " HTTP/1.1\r\n\r\n" })
		:find("^HTTP/1.1 413 "), "long line")
	t.ok(raw_exchange({ "GET / HTTP/1.1\r\nX: " .. string.rep("a", 9000) .. "\r\n\r\n" })
		:find("^HTTP/1.1 413 "), "long header")
	t.ok(raw_exchange({ "POST /echo HTTP/1.1\r\ncontent-length: 2000000\r\n\r\n" })
		:find("^HTTP/1.1 413 "), "body over the limit")
	t.ok(raw_exchange({ "GET / HTTP/1.1\r\nno colon\r\n\r\n" }):find("^HTTP/1.1 400 "), "bad line")
	t.ok(raw_exchange({ "BAD REQUEST\r\n\r\n" }):find("^HTTP/1.1 400 "), "bad request line")
	t.ok(raw_exchange({ "GET / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nxyz\r\n" })
		:find("^HTTP/1.1 413 "), "bad chunk size")
	t.ok(raw_exchange({ "GET / HTTP/2.0\r\n\r\n" }):find("^HTTP/1.1 505 "), "version")
	-- a header sent in 100 slow pieces over the limit: 413, nothing kept beyond it
	local pieces = {}
	for i = 1, 100 do
		pieces[i] = (i == 1 and "GET / HTTP/1.1\r\n" or "") .. "X" .. i .. ": " .. string.rep("b", 100)
			.. "\r\n"
	end
	t.ok(raw_exchange(pieces):find("^HTTP/1.1 413 "), "long header in pieces")
end)

t.case("server: slowloris is disconnected at the request deadline", function()
	local t0 = skynet.now()
	local out = raw_exchange({ "GET / HTTP/1.1\r\n", "X: 1\r\n", "Y: 2\r\n", "Z: 3\r\n" }, 40, 600)
	local took = skynet.now() - t0
	t.eq(out, "", "closed without an answer")
	t.ok(took >= 90 and took < 400, "closed after " .. took .. " cs")
	t.eq(server.connections(lid), 0)
end)

t.case("server: connection limit", function()
	local id, _, p = server.listen { port = 0, handler = handler, max_connections = 2, timeout = 200 }
	local a = assert(socket.open("127.0.0.1", p))
	local b = assert(socket.open("127.0.0.1", p))
	skynet.sleep(5)
	local c = assert(socket.open("127.0.0.1", p))
	local r = socket.read(c)
	t.eq(r, false, "third connection closed at once")
	socket.write(a, "GET /hello HTTP/1.1\r\n\r\n")
	local r2 = ""
	while not r2:find("hello", 1, true) do
		local more = socket.read(a)
		if not more then
			break
		end
		r2 = r2 .. more
	end
	t.ok(r2:find("hello", 1, true), r2)
	for _, fd in ipairs { a, b, c } do
		socket.close(fd)
	end
	server.close(id)
end)

t.start(nil, function()
	local _
	lid, _, port = server.listen { port = 0, handler = handler, timeout = 100, bodylimit = 1024 * 1024 }
end)
