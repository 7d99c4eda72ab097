-- test: real time (TLS handshakes over real sockets)
-- ltls.c, http.tlshelper, https (http.server + httpc) and wss
-- (websocket) with a self-signed certificate made by openssl for this
-- run: the init requirement, every ltls error text, bad certificate and
-- key files, peer verification against the system store (fails) and
-- against the test's own CA file (passes, then a wrong host name fails),
-- a plain client against a TLS server and the reverse.
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"
local sh = require "http.sockethelper"

local dir, cert, key, other_key

local function sh_run(cmd)
	local ok = os.execute(cmd .. " >/dev/null 2>&1")
	assert(ok, "command failed: " .. cmd)
end

t.case("require ltls.c before the init fails with the reference text", function()
	local ok, err = pcall(require, "ltls.c")
	t.eq(ok, false)
	t.ok(tostring(err):find("ltls need init, Put enablessl = true in you config file.", 1, true),
		tostring(err))
	require("ltls.init.c").constructor()
	t.ok(require "ltls.c", "loads after the constructor")
end)

t.case("ltls error texts", function()
	local c = require "ltls.c"
	local ctx = c.newctx()
	t.raises("need certfile", ctx.set_cert, ctx)
	t.raises("need private key", ctx.set_cert, ctx, cert)
	t.raises("SSL_CTX_use_certificate_chain_file error:0", ctx.set_cert, ctx, dir .. "/missing.pem", key)
	t.raises("SSL_CTX_use_certificate_chain_file error:0", ctx.set_cert, ctx, key, key)
	t.raises("SSL_CTX_use_PrivateKey_file error:0", ctx.set_cert, ctx, cert, cert)
	-- OpenSSL 3 finds the mismatch while loading the key already
	t.raises("key values mismatch", ctx.set_cert, ctx, cert, other_key)
	ctx:set_cert(cert, key)
	t.raises("need cipher list", ctx.set_ciphers, ctx)
	t.raises("no usable cipher", ctx.set_ciphers, ctx, "NOT-A-CIPHER")
	ctx:set_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256")
	ctx:set_ciphers("TLS_AES_128_GCM_SHA256")
	t.raises("invalid method:bogus e.g[server, client]", c.newtls, "bogus", ctx)
	t.raises("need sslctx", c.newtls, "client", {})
	local tls = c.newtls("client", ctx, "localhost")
	t.eq(tls:set_ext_host_name("example"), 1)
	t.eq(tls:finished(), false)
	t.raises("need tls context", tls.read, {})
	tls:close()
	t.raises("context is closed", tls.read, tls)
	t.raises("context is closed", tls.handshake, tls)
	tls:close() -- twice is fine
	-- a full handshake between two objects in memory
	local cctx = c.newctx()
	local client, server = c.newtls("client", cctx), c.newtls("server", ctx)
	local out = client:handshake() -- ClientHello
	out = server:handshake(out) -- ServerHello .. server Finished
	out = client:handshake(out) -- client Finished
	t.eq(client:finished(), true)
	local tickets = server:handshake(out)
	t.eq(server:finished(), true)
	t.eq(client:read(tickets), "", "session tickets decrypt to nothing")
	t.raises("handshake is finished", client.handshake, client)
	local rec = client:write("secret")
	t.ok(#rec > 6 and not rec:find("secret", 1, true), "ciphertext")
	t.eq(server:read(rec), "secret")
	t.eq(client:read(server:write("reply")), "reply")
	t.eq(client:write(), "", "nothing pending")
	t.raises("SSL_read error", server.read, server, "garbage that is not a TLS record")
end)

local function hello(req)
	if req.path == "/stream" then
		local i = 0
		return 200, function()
			i = i + 1
			return i <= 3 and ("part" .. i) or nil
		end
	end
	return 200, "hello over tls " .. req.method .. " " .. req.body
end

t.case("https: http.server with a certificate, httpc get/post/stream", function()
	local server = require "http.server"
	local httpc = require "http.httpc"
	local id, _, p = server.listen { port = 0, handler = hello, protocol = "https", certfile = cert,
		keyfile = key, timeout = 300 }
	local code, body = httpc.get("https://127.0.0.1:" .. p, "/x")
	t.eq(code, 200)
	t.eq(body, "hello over tls GET ")
	code, body = httpc.request("POST", "HTTPS://localhost:" .. p, "/y", nil, nil, "data")
	t.eq(code, 200)
	t.eq(body, "hello over tls POST data", "SNI host name, upper-case scheme")
	local parts = {}
	for piece in httpc.request_stream("GET", "https://127.0.0.1:" .. p, "/stream") do
		parts[#parts + 1] = piece
	end
	t.eq(table.concat(parts), "part1part2part3")
	-- a plain client against the TLS server: no answer, the connection closes
	local ok = pcall(httpc.get, "127.0.0.1:" .. p, "/x")
	t.eq(ok, false, "plain http to an https server")
	server.close(id)
	-- TLS client against a plain server: a clear handshake error
	local pid, _, pp = socket.listen("127.0.0.1", 0)
	socket.start(pid, function(fd)
		socket.start(fd)
		socket.write(fd, "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
		skynet.sleep(100)
		socket.close(fd)
	end)
	local err
	ok, err = pcall(httpc.get, "https://127.0.0.1:" .. pp, "/x")
	t.eq(ok, false)
	t.ok(tostring(err):find("SSL_do_handshake error", 1, true), tostring(err))
	socket.close(pid)
end)

-- A TLS client with its own context: connects, handshakes, returns the
-- handshake error (or nil) and the tls object.
local function client_with(ctx, p, hostname)
	local tlshelper = require "http.tlshelper"
	local fd = sh.connect("127.0.0.1", p)
	local tls = tlshelper.newtls("client", ctx, hostname)
	local ok, err = pcall(tlshelper.init_requestfunc(fd, tls), hostname)
	socket.close(fd)
	return ok, err
end

t.case("certificate verification: system store, own CA file, wrong host", function()
	local c = require "ltls.c"
	local server = require "http.server"
	local id, _, p = server.listen { port = 0, handler = hello, protocol = "https", certfile = cert,
		keyfile = key, timeout = 300 }
	local strict = c.newctx()
	strict:set_verify(true)
	local ok, err = client_with(strict, p, "localhost")
	t.eq(ok, false, "self-signed refused by the system store")
	t.ok(tostring(err):find("certificate verify failed", 1, true), tostring(err))
	t.ok(tostring(err):find("self%-signed certificate"), tostring(err))
	local own = c.newctx()
	own:set_verify(true, cert)
	ok, err = client_with(own, p, "localhost")
	t.eq(ok, true, tostring(err))
	ok, err = client_with(own, p, "wrong.example")
	t.eq(ok, false, "host name mismatch")
	t.ok(tostring(err):find("hostname mismatch", 1, true), tostring(err))
	t.raises("SSL_CTX_load_verify_locations error", own.set_verify, own, true, dir .. "/none.pem")
	-- a server whose certificate file is bad cannot start
	t.raises("SSL_CTX_use_certificate_chain_file", server.listen, { port = 0, handler = hello,
		protocol = "https", certfile = dir .. "/missing.pem", keyfile = key })
	server.close(id)
end)

t.case("wss: websocket server and client over TLS", function()
	local websocket = require "http.websocket"
	skynet.setenv("certfile", cert)
	skynet.setenv("keyfile", key)
	local lid, _, p = socket.listen("127.0.0.1", 0)
	local closed
	socket.start(lid, function(fd, addr)
		websocket.accept(fd, {
			message = function(id, data)
				websocket.write(id, "echo:" .. data)
			end,
			close = function(_, code)
				closed = code
			end,
		}, "wss", addr)
	end)
	local id = websocket.connect("wss://localhost:" .. p .. "/w", nil, 300)
	websocket.write(id, string.rep("z", 70000))
	local got = websocket.read(id)
	t.eq(#got, 70005)
	websocket.write(id, "small")
	t.eq(websocket.read(id), "echo:small")
	websocket.close(id, 1000)
	local deadline = skynet.now() + 200
	while closed == nil and skynet.now() < deadline do
		skynet.sleep(1)
	end
	t.eq(closed, 1000)
	t.raises("invalid websocket protocol:tls", websocket.accept, 1, {}, "tls")
	socket.close(lid)
end)

t.start(nil, function()
	local f = assert(io.popen("mktemp -d"))
	dir = f:read("l")
	f:close()
	cert, key, other_key = dir .. "/cert.pem", dir .. "/key.pem", dir .. "/other.pem"
	sh_run(string.format("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		.. "-keyout %s -out %s -days 2 -subj /CN=localhost "
		.. "-addext subjectAltName=DNS:localhost,IP:127.0.0.1", key, cert))
	sh_run(string.format("openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:prime256v1 -out %s",
		other_key))
	skynet.fork(function()
		-- the runner stops the node after the run; clean the files up early enough
		skynet.sleep(3000)
		os.execute("rm -rf " .. dir)
	end)
end)
