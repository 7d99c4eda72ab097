-- test: real time (clients and servers wait on real sockets)
-- http.websocket: server and client against each other and against raw
-- sockets: echo of text and binary at every length encoding, fragmented
-- messages with pings between fragments, ping/pong, close codes both ways,
-- masking (client frames masked, strict server refuses unmasked ones),
-- limits (oversized frames and messages get 1009), bad opcodes, bad control
-- frames, truncated close (1002), continuation frames with no message and
-- messages inside a fragmented one (1002 in every mode, client side too),
-- handshake refusals with their exact answers (bad keys, request lines that
-- do not parse: 400, never an error without an answer), client handshake
-- errors, upgrade of a request http.server read.
local skynet = require "skynet"
local socket = require "skynet.socket"
local crypt = require "skynet.crypt"
local t = require "testlib"
local websocket = require "http.websocket"
local server = require "http.server"
local sh = require "http.sockethelper"

local events = {} -- server-side callback log
local port, strict_port, small_port, up_port

local function log(...)
	local parts = table.pack(...)
	for i = 1, parts.n do
		parts[i] = tostring(parts[i])
	end
	events[#events + 1] = table.concat(parts, " ")
end

local handle = {
	connect = function()
		log("connect")
	end,
	handshake = function(_, _, url)
		log("handshake", url)
	end,
	message = function(id, data, op)
		log("message", op, #data)
		if data == "close-me" then
			websocket.close(id, 4001, "asked")
			return
		end
		websocket.write(id, data, op == "binary" and "binary" or "text")
	end,
	ping = function()
		log("ping")
	end,
	pong = function()
		log("pong")
	end,
	close = function(_, code, reason)
		log("close", code, reason)
	end,
	error = function(_, err)
		log("error", err == sh.socket_error and "socket_error" or err)
	end,
}

local results = {} -- accept's return values, in order

local function listen(options, protocol)
	local id, _, p = socket.listen("127.0.0.1", 0)
	socket.start(id, function(fd, addr)
		local ok, err = websocket.accept(fd, handle, protocol or "ws", addr, options)
		results[#results + 1] = { ok, err }
	end)
	return p
end

local function wait_events(pred, limit)
	local deadline = skynet.now() + (limit or 200)
	while not pred() and skynet.now() < deadline do
		skynet.sleep(1)
	end
	return pred()
end

local function has(text)
	for _, e in ipairs(events) do
		if e == text then
			return true
		end
	end
	return false
end

-- A raw client: does the handshake by hand, then sends and reads bytes.
local function raw(p, request)
	local fd = assert(socket.open("127.0.0.1", p))
	request = request or ("GET /raw HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		.. "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	socket.write(fd, request)
	return fd
end

local read_until_close = t.read_until_close

local function read_handshake(fd)
	local data = ""
	while not data:find("\r\n\r\n", 1, true) do
		data = data .. assert(socket.read(fd))
	end
	local e = data:find("\r\n\r\n", 1, true)
	return data:sub(1, e + 3), data:sub(e + 4)
end

local frame = websocket.encode_frame

-- A masked frame with FIN cleared (a fragment that is not the last).
local function fragment(op, payload)
	local f = frame(op, payload, 0x0a0b0c0d)
	return string.char(f:byte(1) & 0x7f) .. f:sub(2)
end

t.case("handshake answer bytes (RFC 6455 sample key) and chat echo", function()
	local fd = raw(port, "GET /c HTTP/1.1\r\nHost: x\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n"
		.. "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
		.. "Sec-WebSocket-Protocol: x, chat\r\n\r\n")
	local head = read_handshake(fd)
	t.eq(head, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		.. "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: chat\r\n\r\n")
	socket.write(fd, frame(1, "hi", 0x01020304))
	t.eq(socket.read(fd, 4), "\x81\x02hi", "server frames are not masked")
	socket.write(fd, frame(8, string.pack(">I2", 1000) .. "bye", 7))
	t.eq(socket.read(fd, 2), "\x88\x00", "empty close reply")
	socket.close(fd)
	t.ok(wait_events(function()
		return has "close 1000 bye"
	end), table.concat(events, "|"))
end)

t.case("client: echo of text and binary at every length encoding", function()
	local id = websocket.connect("ws://127.0.0.1:" .. port .. "/echo?x=1")
	for _, n in ipairs { 0, 1, 125, 126, 65535, 65536, 200000 } do
		local data = string.rep("a", n)
		websocket.write(id, data)
		local got, op = websocket.read(id)
		t.eq(#got, n, "text length")
		t.eq(op, "text")
	end
	local bin = string.rep("\0\255", 300)
	websocket.write(id, bin, "binary")
	local got, op = websocket.read(id)
	t.eq(got, bin)
	t.eq(op, "binary")
	t.raises("assertion failed!", websocket.write, id, "x", "bogus")
	t.eq(websocket.addrinfo(id), "127.0.0.1:" .. port)
	t.eq(websocket.is_close(id), false)
	websocket.close(id, 1000, "done")
	t.eq(websocket.is_close(id), true)
	t.ok(wait_events(function()
		return has "close 1000 done"
	end), "server saw the close code")
end)

t.case("frame bytes: client masking, length encodings", function()
	t.eq(frame(1, "hi"), "\x81\x02hi")
	t.eq(frame(2, "hi", 0x01020304), "\x82\x82\x01\x02\x03\x04\x69\x6b")
	t.eq(frame(1, string.rep("a", 126)):sub(1, 4), "\x81\x7e\x00\x7e")
	t.eq(frame(1, string.rep("a", 65535)):sub(1, 4), "\x81\x7e\xff\xff")
	t.eq(frame(1, string.rep("a", 65536)):sub(1, 10), "\x81\x7f\0\0\0\0\0\1\0\0")
	-- what the client puts on the wire is masked (a raw server looks)
	local lid, _, p = socket.listen("127.0.0.1", 0)
	local got
	local token = {}
	socket.start(lid, function(fd)
		socket.start(fd)
		local data = ""
		while not data:find("\r\n\r\n", 1, true) do
			data = data .. socket.read(fd)
		end
		local key = data:match "Sec%-WebSocket%-Key:([^\r]+)"
		socket.write(fd, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n"
			.. "Sec-WebSocket-Accept: " .. crypt.base64encode(crypt.sha1(key .. "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
			.. "\r\n\r\n")
		got = { req = data, frame = socket.read(fd, 8) }
		socket.close(fd)
		skynet.wakeup(token)
	end)
	local id = websocket.connect("ws://127.0.0.1:" .. p .. "/p?q", { ["X-Y"] = "z" })
	websocket.write(id, "hi")
	if not got then
		skynet.wait(token)
	end
	socket.close(lid)
	websocket.close(id)
	t.ok(got.req:find("^GET /p%?q HTTP/1.1\r\n"), got.req)
	t.ok(got.req:find("\r\nHost:127.0.0.1:" .. p .. "\r\n", 1, true), "Host with the port: " .. got.req)
	t.ok(got.req:find("\r\nX-Y:z\r\n", 1, true), got.req)
	t.ok(got.req:find("Content%-length:0\r\n\r\n$"), got.req)
	local b1, b2 = got.frame:byte(1, 2)
	t.eq(b1, 0x81)
	t.eq(b2, 0x82, "mask bit set, length 2")
	local key = got.frame:sub(3, 6)
	t.eq(crypt.xor_str(got.frame:sub(7, 8), key), "hi")
end)

t.case("fragmentation with a ping between fragments; ping/pong", function()
	local before = #events
	local fd = raw(port)
	read_handshake(fd)
	socket.write(fd, "\x01\x83" .. "\0\0\0\0" .. "abc") -- text, FIN=0, masked (zero key)
	socket.write(fd, frame(9, "p1", 5)) -- ping in between
	socket.write(fd, "\x00\x83\0\0\0\0def") -- continuation, FIN=0
	socket.write(fd, "\x80\x81\0\0\0\0g") -- continuation, FIN=1
	t.eq(socket.read(fd, 4), "\x8a\x02p1", "pong with the ping's payload")
	t.eq(socket.read(fd, 9), "\x81\x07abcdefg", "the joined message echoed")
	socket.write(fd, "\x8a\x80\0\0\0\0") -- unsolicited pong
	socket.write(fd, frame(8, "", 1))
	t.eq(socket.read(fd, 2), "\x88\x00")
	socket.close(fd)
	t.ok(wait_events(function()
		return has "close nil nil"
	end))
	local seen = table.concat(events, "|", before + 1)
	t.ok(seen:find("ping|message text 7|pong|close nil nil", 1, true), seen)
end)

t.case("server ends the session with 1009 / 1002 / 1007 and calls handle.error", function()
	local cases = {
		{ small_port, frame(1, string.rep("x", 2000), 1), 1009, "payload_len is too large" },
		{ small_port, fragment(1, "") .. fragment(0, string.rep("y", 1000)) .. frame(0, string.rep("y", 100), 2),
			1009, "payload_len is too large" }, -- fragments over the limit
		{ port, "\x83\x80\0\0\0\0", 1002, "unknown opcode 3" },
		{ port, "\x8b\x80\0\0\0\0", 1002, "unknown opcode 11" },
		{ port, "\x09\x80\0\0\0\0", 1002, "bad control frame" }, -- fragmented ping
		{ port, "\x89\xfe\0\200\0\0\0\0" .. string.rep("z", 200), 1002, "bad control frame" },
		{ port, "\x88\x81\0\0\0\0\3", 1002, "truncated close frame" },
		{ strict_port, "\x81\x02hi", 1002, "unmasked client frame" },
		{ strict_port, "\xc1\x80\0\0\0\0", 1002, "rsv bits set" },
		{ strict_port, "\x81\x82\0\0\0\0\xff\xfe", 1007, "text message is not UTF-8" },
		{ port, "\x81\x7f\x80\0\0\0\0\0\0\0", 1009, "payload_len is too large" }, -- negative 64-bit
		-- RFC 6455 5.4, in every mode: a continuation needs a started message,
		-- and a started message takes continuations only
		{ port, frame(0, "login alice", 3), 1002, "continuation frame without a message" },
		{ strict_port, frame(0, "x", 3), 1002, "continuation frame without a message" },
		{ port, fragment(0, "x") .. frame(0, "y", 3), 1002,
			"continuation frame without a message" },
		{ port, fragment(1, "a") .. frame(1, "b", 3), 1002, "new message inside a fragmented one" },
		{ port, fragment(1, "a") .. fragment(2, "b"), 1002, "new message inside a fragmented one" },
		{ strict_port, fragment(2, "a") .. frame(1, "b", 3), 1002,
			"new message inside a fragmented one" },
	}
	for i, c in ipairs(cases) do
		local nres = #results
		local fd = raw(c[1])
		read_handshake(fd)
		socket.write(fd, c[2])
		local out = read_until_close(fd)
		local want = "\x88" .. string.char(2 + #c[4]) .. string.pack(">I2", c[3]) .. c[4]
		t.eq(out, want, "case " .. i)
		t.ok(wait_events(function()
			return #results > nres
		end), "accept returned")
		t.eq(results[#results][1], false, "case " .. i)
		t.eq(results[#results][2], c[4], "case " .. i)
		t.ok(has("error " .. c[4]), "handle.error for case " .. i)
	end
	-- without strict, an unmasked client frame is served (the reference does)
	local fd = raw(port)
	read_handshake(fd)
	socket.write(fd, "\x81\x02hi")
	t.eq(socket.read(fd, 4), "\x81\x02hi")
	socket.close(fd)
	-- a client reading the server's frames applies the same rules
	local function client_reads(bytes)
		local pos = 1
		local next_message = websocket.decoder(function(n)
			local s = bytes:sub(pos, pos + n - 1)
			pos = pos + n
			return s
		end, "client")
		local ok, err = pcall(next_message)
		t.eq(ok, false, "client decoder")
		return err.ws_code, err.text
	end
	t.eq(select(2, client_reads(frame(0, "x"))), "continuation frame without a message")
	local code, text = client_reads(string.char(0x01, 1) .. "a" .. frame(2, "b"))
	t.eq(code, 1002)
	t.eq(text, "new message inside a fragmented one")
end)

t.case("handshake refusals: status and body", function()
	local base = "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		.. "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
	local cases = {
		{ "POST / HTTP/1.1\r\n" .. base .. "\r\n", "HTTP/1.1 400 Bad Request\r\ncontent-length: 15\r\n\r\nneed GET method" },
		{ "GET / HTTP/1.0\r\n" .. base .. "\r\n", "HTTP/1.1 505 HTTP Version not supported\r\n\r\n" },
		{ "GET / HTTP/1.1\r\nbad\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n\r\n" },
		{ "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 426 \r\ncontent-length: 16\r\n\r\nUpgrade Required" },
		{ "GET / HTTP/1.1\r\n" .. base:gsub("Host: x\r\n", "") .. "\r\n",
			"HTTP/1.1 400 Bad Request\r\ncontent-length: 13\r\n\r\nhost Required" },
		{ "GET / HTTP/1.1\r\n" .. base:gsub("Connection: Upgrade", "Connection: close") .. "\r\n",
			"HTTP/1.1 400 Bad Request\r\ncontent-length: 23\r\n\r\nConnection must Upgrade" },
		{ "GET / HTTP/1.1\r\n" .. base:gsub("Sec%-WebSocket%-Key: [^\r]*\r\n", "") .. "\r\n",
			"HTTP/1.1 400 Bad Request\r\ncontent-length: 26\r\n\r\nSec-WebSocket-Key Required" },
		{ "GET / HTTP/1.1\r\n" .. base:gsub("dGhlIHNhbXBsZSBub25jZQ==", "c2hvcnQ=") .. "\r\n",
			"HTTP/1.1 400 Bad Request\r\ncontent-length: 25\r\n\r\nSec-WebSocket-Key invalid" },
		{ "GET / HTTP/1.1\r\n" .. base:gsub("Version: 13", "Version: 8") .. "\r\n",
			"HTTP/1.1 400 Bad Request\r\ncontent-length: 29\r\n\r\nSec-WebSocket-Version must 13" },
		{ "GET / HTTP/1.1\r\n" .. base .. "Sec-WebSocket-Protocol: soap\r\n\r\n",
			"HTTP/1.1 400 Bad Request\r\ncontent-length: 40\r\n\r\nSec-WebSocket-Protocol need include chat" },
		{ "GET / HTTP/1.1\r\nX: " .. string.rep("a", 9000) .. "\r\n\r\n", "HTTP/1.1 413 Request Entity Too Large\r\n\r\n" },
	}
	-- keys that are not the base64 of 16 bytes (some make the decoder raise),
	-- and a repeated key: 400 each
	local key = "dGhlIHNhbXBsZSBub25jZQ=="
	for _, bad in ipairs { "!!!!", "abc", "", key .. "!!", key:sub(1, 22), "dGhl " .. key:sub(5),
		key .. "\r\nSec-WebSocket-Key: " .. key } do
		cases[#cases + 1] = { "GET / HTTP/1.1\r\n" .. base:gsub(key, bad) .. "\r\n",
			"HTTP/1.1 400 Bad Request\r\ncontent-length: 25\r\n\r\nSec-WebSocket-Key invalid" }
	end
	-- request lines that do not parse, and a request with no line at all
	for _, line in ipairs { "GARBAGE", "GET /\tx HTTP/1.1", "GET / HTTP/x", "" } do
		cases[#cases + 1] = { line .. "\r\n" .. base .. "\r\n", "HTTP/1.1 400 Bad Request\r\n\r\n" }
	end
	cases[#cases + 1] = { "\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n\r\n" }
	for i, c in ipairs(cases) do
		local nres = #results
		local fd = raw(port, c[1])
		t.eq(read_until_close(fd), c[2], "case " .. i)
		t.ok(wait_events(function()
			return #results > nres
		end), "accept returned, case " .. i)
		t.eq(results[#results][1], true, "a refusal is a normal end, case " .. i)
	end
end)

t.case("client handshake errors", function()
	local function answer_with(text)
		local lid, _, p = socket.listen("127.0.0.1", 0)
		socket.start(lid, function(fd)
			socket.start(fd)
			local data = ""
			while not data:find("\r\n\r\n", 1, true) do
				local s = socket.read(fd)
				if not s then
					break
				end
				data = data .. s
			end
			local key = data:match "Sec%-WebSocket%-Key:([^\r]+)" or ""
			local accept = crypt.base64encode(crypt.sha1(key .. "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
			socket.write(fd, (text:gsub("ACCEPT", accept)))
			socket.close(fd)
		end)
		return p, lid
	end
	local cases = {
		{ "HTTP/1.1 403 Forbidden\r\ncontent-length: 2\r\n\r\nno", "websocket handshake error: code[403] info:no" },
		{ "HTTP/1.1 101 S\r\nUpgrade: h2\r\nConnection: upgrade\r\n\r\n", "websocket handshake upgrade must websocket" },
		{ "HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: close\r\n\r\n",
			"websocket handshake connection must upgrade" },
		{ "HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
			"websocket handshake need Sec-WebSocket-Accept" },
		{ "HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n",
			"websocket handshake invalid Sec-WebSocket-Accept" },
	}
	for _, c in ipairs(cases) do
		local p, lid = answer_with(c[1])
		t.raises(c[2], websocket.connect, "ws://127.0.0.1:" .. p .. "/")
		socket.close(lid)
	end
	t.raises("invalid protocol: http", websocket.connect, "http://127.0.0.1/")
	t.raises("invalid protocol: nil", websocket.connect, "127.0.0.1")
	t.raises("Upgrade", websocket.connect, "ws://127.0.0.1:" .. port .. "/", { Upgrade = "x" })
	local ok, err = pcall(websocket.connect, "ws://127.0.0.1:1/")
	t.eq(ok, false)
	t.eq(err, sh.socket_error)
end)

t.case("client read: close frame answered, code kept; server-initiated close", function()
	local id = websocket.connect("ws://127.0.0.1:" .. port .. "/")
	websocket.write(id, "close-me")
	local ok, payload = websocket.read(id)
	t.eq(ok, false)
	t.eq(payload, string.pack(">I2", 4001) .. "asked")
	t.eq(websocket.is_close(id), true)
	t.ok(wait_events(function()
		return has "close nil nil"
	end), "handle.close(id) after the script closed")
	-- the client's ping is answered; a pong is skipped by read
	local id2 = websocket.connect("ws://127.0.0.1:" .. port .. "/")
	websocket.ping(id2)
	websocket.write(id2, "after ping")
	t.eq(websocket.read(id2), "after ping")
	websocket.close(id2)
	t.raises("assertion failed!", websocket.read, id2)
	websocket.close(id2) -- unknown id: nothing
end)

t.case("client max_size and a server that disappears", function()
	local id = websocket.connect("ws://127.0.0.1:" .. port .. "/", nil, 100, { max_size = 100 })
	websocket.write(id, string.rep("q", 200))
	t.raises("payload_len is too large", websocket.read, id)
	t.eq(websocket.is_close(id), true)
	local before = #events
	local id2 = websocket.connect("ws://127.0.0.1:" .. port .. "/")
	skynet.sleep(5)
	socket.close(id2) -- the peer vanishes without a close frame
	t.ok(wait_events(function()
		return has "error socket_error"
	end), table.concat(events, "|", before + 1))
end)

t.case("upgrade of a request http.server read (pipelined frame kept)", function()
	local id = websocket.connect("ws://127.0.0.1:" .. up_port .. "/ws")
	websocket.write(id, "through httpd")
	t.eq(websocket.read(id), "through httpd")
	websocket.close(id)
	-- a frame sent right behind the request, in the same write
	local fd = raw(up_port, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		.. "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
		.. frame(1, "early", 9))
	local _, rest = read_handshake(fd)
	local got = rest .. socket.read(fd, 7 - #rest)
	t.eq(got, "\x81\x05early")
	socket.close(fd)
	local code = require("http.httpc").get("127.0.0.1:" .. up_port, "/plain")
	t.eq(code, 200, "plain requests still served")
end)

t.start(nil, function()
	port = listen()
	strict_port = listen { strict = true }
	small_port = listen { max_size = 1024 }
	local _
	_, _, up_port = server.listen {
		port = 0,
		handler = function(req)
			if req.path == "/ws" then
				websocket.accept(req.id, handle, "ws", req.addr, {
					upgrade = { header = req.header, method = req.method, url = req.url,
						version = req.version, interface = req.interface },
				})
				return
			end
			return 200, "plain"
		end,
	}
end)
