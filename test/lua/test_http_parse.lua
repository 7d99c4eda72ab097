-- http.internal, http.httpd and http.url on scripted input (no sockets):
-- header limits counted across reads and in one read, header line rules,
-- request line and version checks, content-length and chunked bodies
-- (extensions, bad sizes, limits, trailers), pushback of pipelined bytes,
-- write_response bytes, url decoding, and a seeded random-input run that
-- must never raise out of read_request.
local t = require "testlib"
local internal = require "http.internal"
local httpd = require "http.httpd"
local url = require "http.url"
local sh = require "http.sockethelper"

-- A read function over a list of pieces; raises socket_error at the end.
local function feeder(pieces)
	local buf = ""
	local i = 0
	local reads = 0
	local function read(n)
		reads = reads + 1
		while (n == nil and buf == "") or (n and #buf < n) do
			i = i + 1
			if pieces[i] == nil then
				error(sh.socket_error("read failed fd = test"))
			end
			buf = buf .. pieces[i]
			if n == nil then
				break
			end
		end
		local k = n or #buf
		local r = buf:sub(1, k)
		buf = buf:sub(k + 1)
		return r
	end
	sh.register_unread(read, function(s)
		buf = s .. buf
	end)
	return read, function()
		return reads
	end
end

local function feed(pieces)
	return (feeder(pieces))
end

-- The same without pushback (a script's own read function).
local function plain(pieces)
	local r = feeder(pieces)
	return function(n)
		return r(n)
	end
end

local function req(s, limit)
	return httpd.read_request(feed { s }, limit)
end

t.case("recvheader: lines, rest, the limit counted in one read and across reads", function()
	local lines = {}
	local rest = internal.recvheader(feed { "GET / HTTP/1.1\r\nA: b\r\n\r\nBODY" }, lines, "")
	t.eq(rest, "BODY")
	t.same(lines, { "GET / HTTP/1.1", "A: b" })
	local big = "GET / HTTP/1.1\r\nX: " .. string.rep("a", 9000) .. "\r\n\r\n"
	t.eq(internal.recvheader(feed { big }, {}, ""), nil, "9 KB in one read")
	local pieces = {}
	for i = 1, #big, 100 do
		pieces[#pieces + 1] = big:sub(i, i + 99)
	end
	t.eq(internal.recvheader(feed(pieces), {}, ""), nil, "9 KB in pieces")
	-- exactly at the limit passes
	local fill = 8192 - #"GET / HTTP/1.1\r\nX: \r\n\r\n"
	local exact = "GET / HTTP/1.1\r\nX: " .. string.rep("b", fill) .. "\r\n\r\n"
	t.eq(#exact, 8192)
	t.eq(internal.recvheader(feed { exact }, {}, ""), "")
	t.eq(internal.recvheader(feed { exact:sub(1, -2) .. "b\n" }, {}, ""), nil)
	local l2 = {}
	t.eq(internal.recvheader(feed { "\r\nrest" }, l2, ""), "rest", "starts with CRLF")
	t.eq(#l2, 0)
end)

t.case("parseheader: case, repeats, TAB continuation, bad lines", function()
	local h = internal.parseheader({ "Host: x", "X-A:  b c ", "\tcont", "x-a: 2", "Empty:" }, 1, {})
	t.eq(h.host, "x")
	t.same(h["x-a"], { "b c cont", "2" })
	t.eq(h.empty, "")
	t.eq(internal.parseheader({ "\tcont" }, 1, {}), nil, "TAB first")
	t.eq(internal.parseheader({ "no colon" }, 1, {}), nil, "no colon")
	local h2 = internal.parseheader({ "a: 1", "A: 2", "a: 3" }, 1, {})
	t.same(h2.a, { "1", "2", "3" })
end)

t.case("read_request: codes of the reference table", function()
	local code, u, m, h, body, v = req "GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"
	t.eq(code, 200)
	t.eq(u, "/a?x=1")
	t.eq(m, "GET")
	t.eq(h.host, "h")
	t.eq(body, "")
	t.eq(v, 1.1)
	t.eq(req "GET / HTTP/0.9\r\n\r\n", 505)
	t.eq(req "GET / HTTP/2.0\r\n\r\n", 505)
	t.eq(req "GET / HTTP/1.0\r\nbad line\r\n\r\n", 400)
	t.eq(req "POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n", 501)
	t.eq(req "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ntransfer-encoding: chunked\r\n\r\n",
		501, "repeated transfer-encoding")
	t.eq(req("POST / HTTP/1.1\r\ncontent-length: 11\r\n\r\nhello world", 10), 413)
	t.eq(req "POST / HTTP/1.1\r\ncontent-length: -1\r\n\r\n", 400)
	t.eq(req "POST / HTTP/1.1\r\ncontent-length: 1e3\r\n\r\n", 400)
	t.eq(req "POST / HTTP/1.1\r\ncontent-length: 99999999999999999999\r\n\r\n", 400)
	t.eq(req("GET /" .. string.rep("a", 9000) .. " HTTP/1.1\r\n\r\n"), 413, "long request line")
	for _, bad in ipairs { "GET  / HTTP/1.1\r\n\r\n", "G3T / HTTP/1.1\r\n\r\n", "GET /\r\n\r\n",
		"GET / HTTP/1.1 x\r\n\r\n", "\r\n\r\n", "GET / FTP/1.1\r\n\r\n" } do
		local c, err = req(bad)
		t.eq(c, nil, bad)
		t.ok(tostring(err):find("assertion failed!", 1, true), tostring(err))
	end
	local c, err = req "GET / HTTP/1.1\r\nHost: h\r\n"
	t.eq(c, nil, "never finished")
	t.eq(err, sh.socket_error)
end)

t.case("read_request: bodies by length, chunked, limits and trailers", function()
	local code, _, _, h, body = req "POST / HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello"
	t.eq(h["content-length"], "5")
	t.eq(code, 200)
	t.eq(body, "hello")
	local e2
	code, e2, _, _, body = httpd.read_request(feed { "POST / HTTP/1.1\r\ncontent-length: 10\r\n\r\nhel",
		"lo", " world" })
	t.eq(code, 200, tostring(e2))
	t.eq(body, "hello worl")
	local chunked = "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n"
	code, _, _, h, body = req(chunked .. "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n")
	t.eq(code, 200)
	t.eq(body, "hello world")
	t.eq(h["x-t"], "1", "trailer merged")
	t.eq(req(chunked .. "5\r\nhello\r\n0\r\n\r\n", 4), 413, "chunked over the limit")
	t.eq(req(chunked .. "zz\r\nhello\r\n0\r\n\r\n"), 413, "bad hex")
	t.eq(req(chunked .. "-5\r\nhello\r\n0\r\n\r\n"), 413, "negative size")
	t.eq(req(chunked .. "fffffffffffffffffff\r\n"), 413, "huge size")
	t.eq(req(chunked .. string.rep("0", 200)), 413, "size line without end")
	t.eq(req(chunked .. "3\r\nhello\r\n0\r\n\r\n"), 413, "data longer than the chunk size")
	local c, err = req(chunked .. "5\r\nhel")
	t.eq(c, nil, "truncated chunk")
	t.eq(err, sh.socket_error)
	-- a big chunk announced over the limit fails before it is read
	local read, reads = feeder { chunked .. "100000\r\n" }
	t.eq(httpd.read_request(read, 1000), 413)
	t.ok(reads() <= 2, "read " .. reads())
end)

t.case("read_request: pipelined requests and a body longer than declared", function()
	local read = feed { "GET /1 HTTP/1.1\r\n\r\nPOST /2 HTTP/1.1\r\ncontent-length: 3\r\n\r\nabcGET /3 HT",
		"TP/1.1\r\n\r\n" }
	local c1, u1 = httpd.read_request(read)
	local c2, u2, _, _, b2 = httpd.read_request(read)
	local c3, u3 = httpd.read_request(read)
	t.eq(c1, 200)
	t.eq(u1, "/1")
	t.eq(c2, 200)
	t.eq(u2, "/2")
	t.eq(b2, "abc")
	t.eq(c3, 200)
	t.eq(u3, "/3")
	-- body longer than declared: the extra bytes are the next "request"
	local r2 = feed { "POST / HTTP/1.1\r\ncontent-length: 2\r\n\r\nabcdef\r\n\r\n" }
	local c, _, _, _, b = httpd.read_request(r2)
	t.eq(c, 200)
	t.eq(b, "ab")
	local cn, err = httpd.read_request(r2)
	t.eq(cn, nil, "garbage after the body is a bad request line")
	t.ok(tostring(err):find "assertion", tostring(err))
	-- without pushback the reference behaviour: the rest is the body
	local c4, _, _, _, b4 = httpd.read_request(plain { "GET / HTTP/1.1\r\n\r\nxyz" })
	t.eq(c4, 200)
	t.eq(b4, "xyz")
end)

t.case("write_response: bytes, reasons, streaming, bad values", function()
	local out = {}
	local function w(s)
		out[#out + 1] = s
	end
	local pieces = { "ab", "", "cde" }
	local i = 0
	t.eq(httpd.write_response(w, 200, function()
		i = i + 1
		return pieces[i]
	end, { ["x-a"] = { "1", "2" } }), true)
	t.eq(table.concat(out), "HTTP/1.1 200 OK\r\nx-a: 1\r\nx-a: 2\r\ntransfer-encoding: chunked\r\n\r\n"
		.. "2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n")
	out = {}
	httpd.write_response(w, 299, "hi")
	t.eq(table.concat(out), "HTTP/1.1 299 \r\ncontent-length: 2\r\n\r\nhi")
	out = {}
	httpd.write_response(w, 404)
	t.eq(table.concat(out), "HTTP/1.1 404 Not Found\r\n\r\n")
	out = {}
	local ok, err = httpd.write_response(w, 200, 42)
	t.eq(ok, false)
	t.ok(err:find "assertion failed!", err)
	t.eq(table.concat(out), "HTTP/1.1 200 OK\r\n")
	ok = httpd.write_response(w, 200, "x", { ["x-bad"] = "a\r\nset-cookie: evil" })
	t.eq(ok, false, "header injection refused")
	local ok2, err2 = httpd.write_response(function()
		error(sh.socket_error("write failed fd = 1"))
	end, 200, "x")
	t.eq(ok2, false)
	t.eq(err2, sh.socket_error)
	t.eq(httpd.status_message[505], "HTTP Version not supported")
	t.eq(httpd.status_message[408], "Request Time-out")
end)

t.case("url.parse and parse_query", function()
	local p, q = url.parse "/a%20b+c/d?x=1&y=%41+b"
	t.eq(p, "/a b c/d")
	t.eq(q, "x=1&y=%41+b")
	p, q = url.parse "http://h/p?q"
	t.eq(p, "http://h/p")
	t.eq(q, "q")
	p, q = url.parse "/nothing"
	t.eq(p, "/nothing")
	t.eq(q, "")
	t.raises("bad argument #1 to 'char'", url.parse, "/%zz")
	t.same(url.parse_query "x=1&x=2&y=&z=%41+b", { x = { "1", "2" }, y = "", z = "A b" })
	t.same(url.parse_query "w&x=3", { ["w&x"] = "3" })
	t.same(url.parse_query "", {})
end)

t.case("sockethelper.socket_error: shared, text once", function()
	local e = sh.socket_error("boom")
	t.eq(e, sh.socket_error)
	t.eq(tostring(e), "[Socket Error] : boom")
	t.eq(tostring(e), "[Socket Error]")
end)

-- Seeded random inputs: mutations of valid requests, cut into random
-- pieces. read_request must return a code or nil, err, never raise, and
-- never hold more than the limits.
t.case("read_request never raises on random input (seeded)", function()
	local seeds = {
		"GET /a?b=c HTTP/1.1\r\nHost: x\r\nA: b\r\n\r\n",
		"POST /p HTTP/1.1\r\ncontent-length: 4\r\n\r\nbody",
		"POST /p HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n4;a=b\r\nbody\r\n0\r\nT: 1\r\n\r\n",
	}
	local rnd = 0x2545F491
	local function rand(n)
		rnd = (rnd * 1103515245 + 12345) & 0x7fffffff
		return rnd % n + 1
	end
	local alphabet = "\r\n :;0123456789abcdefHTP/.\t-"
	local n = t.under_tsan and 400 or 3000
	for _ = 1, n do
		local s = seeds[rand(#seeds)]
		for _ = 1, rand(6) do
			local at = rand(#s)
			local op = rand(3)
			local k = rand(#alphabet)
			local c = alphabet:sub(k, k)
			if op == 1 then
				s = s:sub(1, at - 1) .. c .. s:sub(at + 1)
			elseif op == 2 then
				s = s:sub(1, at) .. c .. s:sub(at + 1)
			else
				s = s:sub(1, at - 1) .. s:sub(at + 1)
			end
		end
		local pieces = {}
		local pos = 1
		while pos <= #s do
			local k = rand(12)
			pieces[#pieces + 1] = s:sub(pos, pos + k - 1)
			pos = pos + k
		end
		local ok, code, err = pcall(httpd.read_request, feeder(pieces), 64)
		t.ok(ok, "raised on " .. string.format("%q", s))
		t.ok(code == nil or math.type(code) == "integer", "code")
		if code == nil then
			t.ok(err ~= nil, "nil without an error")
		end
	end
end)

-- The WebSocket decoder on seeded random frames: it returns a message, a
-- close, or raises socket_error (input ran out) or a protocol error with a
-- close code, never anything else, and never accepts more than max_size.
t.case("websocket decoder on random frames (seeded)", function()
	local websocket = require "http.websocket"
	local rnd = 0x1234567
	local function rand(n)
		rnd = (rnd * 1103515245 + 12345) & 0x7fffffff
		return (rnd >> 12) % n + 1 -- the high bits: the low ones of this LCG cycle fast
	end
	local codes = { [1002] = true, [1007] = true, [1009] = true }
	local n = t.under_tsan and 300 or 3000
	local outcomes = {}
	for _ = 1, n do
		local bytes = {}
		local frames = rand(3)
		for _ = 1, frames do
			local len = ({ 0, 5, 125, 126, 300, 70000 })[rand(6)]
			local f = websocket.encode_frame(rand(16) - 1, string.rep("a", len), rand(3) > 1 and rnd or nil)
			if rand(4) == 1 then
				f = string.char(f:byte(1) ~ (1 << (rand(8) - 1))) .. f:sub(2) -- flip a header bit
			end
			if rand(5) == 1 then
				f = f:sub(1, rand(#f)) -- truncate
			end
			bytes[#bytes + 1] = f
		end
		local next_message = websocket.decoder(feed { table.concat(bytes) }, "server",
			{ max_size = 1000, strict = rand(2) == 1 })
		local ok, data, op = pcall(next_message)
		if ok then
			t.ok(data == nil or #data <= 1000, "over max_size")
			outcomes[data and op or "close"] = true
		elseif data == sh.socket_error then
			outcomes.eof = true
		else
			t.ok(type(data) == "table" and codes[data.ws_code], "unexpected error " .. tostring(data))
			outcomes[data.ws_code] = true
		end
	end
	for _, k in ipairs { "text", "binary", "close", "eof", 1002, 1009 } do
		t.ok(outcomes[k], "outcome never seen: " .. tostring(k))
	end
end)

t.start()
