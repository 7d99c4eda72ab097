-- sproto's RPC layer: host / attach / dispatch, byte-exact with the
-- reference's packed messages, sessions, responses, ud, and its errors.
local t = require "testlib"
local u = require "sproto_util"
local sproto = require "sproto"

local hexeq, unhex = u.hexeq, u.unhex

local C2S = [[
.package { type 0 : integer session 1 : integer }
handshake 1 { response { msg 0 : string } }
get 2 { request { what 0 : string } response { result 0 : string } }
set 3 { request { what 0 : string value 1 : string } }
quit 4 {}
]]

local S2C = [[
.package { type 0 : integer session 1 : integer }
heartbeat 1 {}
]]

-- A client and a server talking as in the reference's demo.
local function pair()
	local c2s, s2c = sproto.parse(C2S), sproto.parse(S2C)
	local client = s2c:host "package"
	local server = c2s:host "package"
	return {
		client = client,
		client_send = client:attach(c2s),
		server = server,
		server_send = server:attach(s2c),
	}
end

t.case("client requests: reference bytes", function()
	local p = pair()
	hexeq(p.client_send("handshake", nil, 1), "15 02 04 04", "handshake")
	hexeq(p.client_send("set", { what = "hello", value = "world" }, 2),
		"55 02 08 06 02 10 05 3f 68 65 6c 6c 6f 05 3e 77 6f 72 6c 64", "set")
	hexeq(p.client_send("get", { what = "hello" }, 3), "55 02 06 08 01 c4 05 68 65 07 6c 6c 6f",
		"get")
	hexeq(p.client_send("quit"), "05 01 0a", "quit without session")
	-- the set request unpacked: header, body, two padding zeros
	hexeq(sproto.unpack(p.client_send("set", { what = "hello", value = "world" }, 2)), [[
		02 00 08 00 06 00
		02 00 00 00 00 00 05 00 00 00 68 65 6c 6c 6f 05 00 00 00 77 6f 72 6c 64
		00 00]], "set unpacked")
end)

t.case("server side: dispatch requests, responders, push", function()
	local p = pair()
	local kind, name, args, resp, ud = p.server:dispatch(p.client_send("handshake", nil, 1))
	t.eq(kind, "REQUEST", "kind")
	t.eq(name, "handshake", "name")
	t.eq(args, nil, "no request type: no args")
	t.eq(type(resp), "function", "responder")
	t.eq(ud, nil, "no ud")
	local reply = resp({ msg = "Welcome" })
	hexeq(reply, "55 02 01 04 01 c4 07 57 65 1f 6c 63 6f 6d 65", "handshake reply")
	hexeq(sproto.unpack(reply):sub(1, 21),
		"02 00 01 00 04 00 01 00 00 00 07 00 00 00 57 65 6c 63 6f 6d 65", "reply unpacked")

	kind, name, args, resp = p.server:dispatch(p.client_send("set",
		{ what = "hello", value = "world" }, 2))
	t.eq(kind, "REQUEST", "set kind")
	t.eq(name, "set", "set")
	t.same(args, { what = "hello", value = "world" }, "set args")
	hexeq(resp(), "15 02 01 06", "set reply (no response type)")

	kind, name, args, resp = p.server:dispatch(p.client_send("get", { what = "hello" }, 3))
	t.eq(kind, "REQUEST", "get kind")
	t.eq(name, "get", "get")
	t.same(args, { what = "hello" }, "get args")
	hexeq(resp({ result = "world" }), "55 02 01 08 01 c4 05 77 6f 07 72 6c 64", "get reply")

	kind, name, args, resp = p.server:dispatch(p.client_send("quit"))
	t.eq(kind, "REQUEST", "quit kind")
	t.eq(name, "quit", "quit")
	t.eq(args, nil, "quit: no args")
	t.eq(resp, nil, "no session: no responder")

	hexeq(p.server_send("heartbeat"), "05 01 04", "heartbeat push")
end)

t.case("client side: responses by session, pushes", function()
	local p = pair()
	p.client_send("handshake", nil, 1)
	p.client_send("set", { what = "hello", value = "world" }, 2)
	p.client_send("get", { what = "hello" }, 3)
	local kind, session, result, ud = p.client:dispatch(
		unhex "55 02 01 04 01 c4 07 57 65 1f 6c 63 6f 6d 65")
	t.eq(kind, "RESPONSE", "kind")
	t.eq(session, 1, "session")
	t.same(result, { msg = "Welcome" }, "result")
	t.eq(ud, nil, "ud")
	kind, session, result = p.client:dispatch(unhex "15 02 01 06")
	t.eq(kind, "RESPONSE", "set kind")
	t.eq(session, 2, "set session")
	t.eq(result, nil, "no body expected")
	kind, session, result = p.client:dispatch(unhex "55 02 01 08 01 c4 05 77 6f 07 72 6c 64")
	t.eq(kind, "RESPONSE", "get kind")
	t.eq(session, 3, "get session")
	t.same(result, { result = "world" }, "get result")
	-- each session is answered once
	t.raises("Unknown session", p.client.dispatch, p.client, unhex "15 02 01 06")
	local k, name, args, resp, pud = p.client:dispatch(unhex "05 01 04")
	t.eq(k, "REQUEST", "push")
	t.eq(name, "heartbeat", "heartbeat")
	t.eq(args, nil, "args")
	t.eq(resp, nil, "resp")
	t.eq(pud, nil, "ud")
end)

t.case("large sessions and ud in the header", function()
	local sp = sproto.parse([[
.package { type 0 : integer session 1 : integer }
foo 5 { request { x 0 : integer } }
]])
	local h = sp:host()
	local send = h:attach(sp)
	hexeq(send("foo", { x = 1 }, 100000), "45 02 0c 04 5c a0 86 01 01 01 04", "session 100000")
	local _, name, args, resp = h:dispatch(send("foo", { x = 1 }, 100000))
	t.eq(name, "foo", "foo")
	t.same(args, { x = 1 }, "args")
	local kind, session = h:dispatch(resp())
	t.eq(kind, "RESPONSE", "response")
	t.eq(session, 100000, "session")

	local ud = sproto.parse([[
.package { type 0 : integer session 1 : integer ud 2 : string }
ping 1 { response nil }
]])
	local uh = ud:host "package"
	local usend = uh:attach(ud)
	local msg = usend("ping", nil, 5, "hello-ud")
	hexeq(msg, "15 03 04 0c f1 08 68 65 6c 6c 0f 6f 2d 75 64", "ping with ud")
	local k, pname, pargs, presp, pud = uh:dispatch(msg)
	t.eq(k, "REQUEST", "request")
	t.eq(pname, "ping", "ping")
	t.eq(pargs, nil, "no args")
	t.eq(pud, "hello-ud", "ud")
	local reply = presp(nil, "ud2")
	hexeq(reply, "15 03 01 0c 71 03 75 64 32", "reply with ud")
	t.raises("nil expected, got table", presp, {}, "x")
	local rk, rsession, rresult, rud = uh:dispatch(reply)
	t.eq(rk, "RESPONSE", "response")
	t.eq(rsession, 5, "session 5")
	t.eq(rresult, nil, "response nil: no result")
	t.eq(rud, "ud2", "ud2")
end)

t.case("errors", function()
	local p = pair()
	-- unknown protocol on either side
	t.raises("nope not found", p.client_send, "nope")
	t.raises("9 not found", p.server.dispatch, p.server, sproto.pack("\2\0\20\0\4\0"))
	-- a response without a session, and one nobody waits for
	t.raises("session not found", p.client.dispatch, p.client, sproto.pack("\0\0"))
	t.raises("Unknown session", p.client.dispatch, p.client, sproto.pack("\2\0\1\0\100\0"))
	-- no package type
	local bare = sproto.parse(".X { a 0 : integer }")
	t.raises("type package not found", bare.host, bare)
	t.raises("type package not found", bare.host, bare, "other")
	-- a header of exactly 8 bytes leaves an empty body: decode error with a request type
	local set_header = string.pack("<I2I2I2I2", 3, 8, 6, 0) -- type 3, session 2, skip
	t.raises("decode error", p.server.dispatch, p.server, sproto.pack(set_header))
	-- a bad packed stream, a bad body
	t.raises("Invalid unpack stream", p.server.dispatch, p.server, "\255")
	t.raises("decode error", p.server.dispatch, p.server, sproto.pack("\1\0\0\0\9\0\0\0"))
	-- request args of the wrong type
	t.raises("set.request.what[0] is not a string (Is a number)", p.client_send, "set",
		{ what = 1 }, 1)
end)

t.start()
