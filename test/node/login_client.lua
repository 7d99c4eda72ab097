-- The scripted client of test/node/test_login.sh: skynet's client.socket and
-- client.crypt in a plain lua5.4, speaking the login pair's bytes against
-- the node of test/lua/svc_login_node.lua.
--
--   lua5.4 login_client.lua LOGIN_PORT STRICT_PORT GATE_PORT NODE_LOG
--
-- Prints one "ok   <name>" or "FAIL <name> (<detail>)" line per check and
-- the closing "N passed, N failed". The order matters: alice's first login
-- is the node's first (subid "1", as in the worked example), and the checks
-- share her gate state (index, sessions, counter). Every wait is bounded.
local socket = require "client.socket"
local crypt = require "client.crypt"

local LOGIN_PORT = assert(tonumber(arg[1]), "login port")
local STRICT_PORT = assert(tonumber(arg[2]), "strict port")
local GATE_PORT = assert(tonumber(arg[3]), "gate port")
local NODE_LOG = assert(arg[4], "node log")

local b64 = crypt.base64encode
local unb64 = crypt.base64decode
local hex = crypt.hexencode
local spack = string.pack
local sunpack = string.unpack

local passed, failed = 0, 0

local function check(name, cond, detail)
	if cond then
		print("ok   " .. name)
		passed = passed + 1
	else
		print("FAIL " .. name .. (detail and (" (" .. tostring(detail) .. ")") or ""))
		failed = failed + 1
	end
	return cond
end

-- Hex with spaces, as the worked example writes bytes.
local function bytes(s)
	return (hex(s):gsub("..", "%0 "):gsub(" $", ""))
end

---------------------------------------------------------------- connections

local Conn = {}
Conn.__index = Conn

local function connect(port)
	return setmetatable({ fd = socket.connect("127.0.0.1", port), buf = "", closed = false,
		got = "" }, Conn)
end

-- Waits up to ms for bytes; false once the peer closed or nothing came.
function Conn:fill(ms)
	for _ = 1, math.max(1, ms // 5) do
		local r = socket.recv(self.fd)
		if r == "" then
			self.closed = true
			return false
		elseif r then
			self.buf = self.buf .. r
			self.got = self.got .. r
			return true
		end
		socket.usleep(5000)
	end
	return false
end

function Conn:send(data)
	return pcall(socket.send, self.fd, data)
end

function Conn:close()
	if not self.shut then
		self.shut = true
		socket.close(self.fd)
	end
end

-- One line without its LF; nil, "closed" | "timeout".
function Conn:line(ms)
	local left = ms or 5000
	while true do
		local i = self.buf:find("\n", 1, true)
		if i then
			local l = self.buf:sub(1, i - 1)
			self.buf = self.buf:sub(i + 1)
			return l
		end
		if self.closed then
			return nil, "closed"
		elseif left <= 0 then
			return nil, "timeout"
		end
		self:fill(50)
		left = left - 50
	end
end

-- One frame's payload; nil, "closed" | "timeout".
function Conn:frame(ms)
	local left = ms or 5000
	while true do
		if #self.buf >= 2 then
			local n = sunpack(">I2", self.buf)
			if #self.buf >= 2 + n then
				local p = self.buf:sub(3, 2 + n)
				self.buf = self.buf:sub(3 + n)
				return p
			end
		end
		if self.closed then
			return nil, "closed"
		elseif left <= 0 then
			return nil, "timeout"
		end
		self:fill(50)
		left = left - 50
	end
end

-- True once the peer closed within ms (bytes that come meanwhile are kept).
function Conn:closes_within(ms)
	local left = ms
	while not self.closed and left > 0 do
		self:fill(50)
		left = left - 50
	end
	return self.closed
end

---------------------------------------------------------------- login

local function token(user, server, password)
	return b64(user) .. "@" .. b64(server) .. ":" .. b64(password)
end

-- Runs the login exchange up to the token line (sent unless opt.no_token).
-- Returns the connection and the secret.
local function login_start(port, user, server, password, opt)
	opt = opt or {}
	local c = connect(port)
	local challenge = unb64(assert(c:line()))
	local key = opt.key or crypt.randomkey()
	c:send(b64(crypt.dhexchange(key)) .. "\n")
	local secret = crypt.dhsecret(unb64(assert(c:line())), key)
	if not opt.no_token then
		c:send(b64(crypt.hmac64(challenge, secret)) .. "\n")
		c:send(b64(crypt.desencode(secret, token(user, server, password))) .. "\n")
	end
	return c, secret
end

-- A whole login: the reply line, the secret, the connection (left open).
local function login(port, user, server, password, opt)
	local c, secret = login_start(port, user, server, password, opt)
	return c:line(), secret, c
end

-- A whole login's reply line; the connection is closed.
local function login_reply(port, user, server, password)
	local reply, _, c = login(port, user, server, password)
	c:close()
	return reply
end

---------------------------------------------------------------- message server

local function handshake_text(uid, server, subid, index, secret)
	local text = b64(uid) .. "@" .. b64(server) .. "#" .. b64(subid) .. ":" .. index
	return text .. ":" .. b64(crypt.hmac_hash(secret, text))
end

local function frame(payload)
	return spack(">s2", payload)
end

local function request(c, content, session)
	c:send(frame(content .. spack(">I4", session)))
end

-- content, ok, session of a response payload.
local function response(p)
	if p == nil or #p < 5 then
		return nil
	end
	return p:sub(1, -6), p:byte(-5), sunpack(">I4", p, #p - 3)
end

local function gate(hs)
	local c = connect(GATE_PORT)
	c:send(frame(hs))
	return c, c:frame()
end

-- Sends a request and returns the response's content (nil if none came).
local function ask(c, content, session)
	request(c, content, session)
	return (response(c:frame()))
end

local meta_session = 1000 -- sessions of the checks' own questions, never used twice

local function meta(c, what)
	meta_session = meta_session + 1
	return ask(c, what, meta_session)
end

-- Waits (up to 5 s) until the gate has counted n disconnects of the user of
-- c; returns the count.
local function disconnects(c, n)
	local got
	for _ = 1, 50 do
		got = tonumber(meta(c, "disconnects"))
		if got and got >= n then
			break
		end
		socket.usleep(100000)
	end
	return got
end

---------------------------------------------------------------- the checks

local function worked_example()
	local key = "12345678"
	local pub = crypt.dhexchange(key)
	local ok = hex(pub) == "a18e89af97222f0e" and b64(pub) == "oY6Jr5ciLw4="
	local secret = crypt.dhsecret(unb64("CLxnJ0w6WgI="), key)
	ok = ok and hex(secret) == "1b5130651703bb08"
	ok = ok and hex(unb64("OgWoXDX9AdQ=")) == "3a05a85c35fd01d4"
	local answer = crypt.hmac64(unb64("OgWoXDX9AdQ="), secret)
	ok = ok and hex(answer) == "cb457bb9c4962dc7" and b64(answer) == "y0V7ucSWLcc="
	local t = token("alice", "sample", "password")
	ok = ok and t == "YWxpY2U=@c2FtcGxl:cGFzc3dvcmQ=" and #t == 30
	local cipher = crypt.desencode(secret, t)
	ok = ok and hex(cipher) == "81f3dd7d116a9fa3b2927e32c975cd6be57411c8ba151c60d1a898462db45521"
	ok = ok and b64(cipher) == "gfPdfRFqn6Oykn4yyXXNa+V0Eci6FRxg0aiYRi20VSE="
	local text = "YWxpY2U=@c2FtcGxl#MQ==:1"
	ok = ok and hex(crypt.hashkey(text)) == "7dd1f1f80ce68080"
	ok = ok and hex(crypt.hmac_hash(secret, text)) == "536fad4f00c41fe1"
	ok = ok and handshake_text("alice", "sample", "1", 1, secret) == text .. ":U2+tTwDEH+E="
	check("worked_example_crypto_bytes", ok)
end

local alice = { name = "alice" } -- and secret, subid, conn, index

local function first_login()
	local reply, secret, c = login(LOGIN_PORT, "alice", "sample", "password",
		{ key = "12345678" })
	local lines = {}
	for l in c.got:gmatch "([^\n]*)\n" do
		lines[#lines + 1] = l
	end
	check("login_server_lines_are_12_base64_chars",
		#lines == 3 and #lines[1] == 12 and #lines[2] == 12 and lines[1]:match "^[%w+/]+=$"
		and lines[2]:match "^[%w+/]+=$", c.got)
	check("login_200_bytes", bytes(c.got:sub(-9)) == "32 30 30 20 4d 51 3d 3d 0a", bytes(c.got))
	check("login_200_subid_1", reply == "200 MQ==", reply)
	-- the server never closes after its reply (the client does)
	check("login_connection_stays_open_after_reply", not c:closes_within(1000))
	c:close()
	alice.secret, alice.subid = secret, unb64(reply:sub(5))
end

local function first_handshake()
	local hs = handshake_text("alice", "sample", alice.subid, 1, alice.secret)
	local c = connect(GATE_PORT)
	-- the handshake and a request in one send: no need to wait for 200 OK
	c:send(frame(hs) .. frame("echo" .. spack(">I4", 1)))
	check("handshake_frame_length", bytes(frame(hs):sub(1, 2)) == "00 25")
	local p1, p2 = c:frame(), c:frame()
	check("handshake_200_ok_bytes", p1 and bytes(frame(p1)) == "00 06 32 30 30 20 4f 4b",
		p1)
	check("echo_response_bytes",
		p2 and bytes(frame(p2)) == "00 09 65 63 68 6f 01 00 00 00 01", p2 and bytes(p2))
	c:send(frame("ping" .. spack(">I4", 0x01020304)))
	local p3 = c:frame()
	check("ping_response_bytes",
		p3 and bytes(frame(p3)) == "00 09 70 69 6e 67 01 01 02 03 04", p3 and bytes(p3))
	request(c, "fail", 2)
	local p4 = c:frame()
	check("error_response_bytes", p4 and bytes(frame(p4)) == "00 05 00 00 00 00 02",
		p4 and bytes(p4))
	local r1 = ask(c, "count", 10)
	local r2 = ask(c, "count", 10)
	check("session_used_again_runs_handler_again", r1 == "count 1" and r2 == "count 2",
		tostring(r1) .. "/" .. tostring(r2))
	alice.conn, alice.index = c, 1
	alice.last10 = frame("count 2\1" .. spack(">I4", 10))
end

-- A new connection of user u (alice by default) with the next index.
local function next_conn(u)
	u = u or alice
	u.index = u.index + 1
	local c, reply = gate(handshake_text(u.name, "sample", u.subid, u.index, u.secret))
	assert(reply == "200 OK", reply)
	u.conn = c
	return c
end

-- Closes u's connection and opens the next one, which is u's current one
-- once the gate has handled the close: a close handled after the new
-- handshake forgets the new connection too (skynet's rule), so then one
-- more is opened (the spare stays open: closing it would do the same).
local function replace_conn(u)
	u = u or alice
	local n = tonumber(meta(u.conn, "disconnects")) + 1
	u.conn:close()
	local c = next_conn(u)
	local got = disconnects(c, n)
	if meta(c, "ip") == "nil" then
		u.spare = c
		c = next_conn(u)
	end
	return c, got
end

local function reconnect()
	alice.conn:close()
	local c = next_conn() -- index 2 (next_conn checks the 200 OK)
	-- a re-sent session gets the stored bytes; its new content is ignored.
	-- (First thing: with expired_number 2, a few more answers retire it.)
	request(c, "something else", 10)
	local p = c:frame()
	check("repeated_session_answered_from_cache", p and frame(p) == alice.last10,
		p and bytes(p))
	check("cached_answer_did_not_run_handler", ask(c, "count", 11) == "count 3")
	local got = disconnects(c, 1)
	check("disconnect_handler_ran_once", got == 1, got)
	if meta(c, "ip") == "nil" then -- the close came after the handshake (see replace_conn)
		alice.spare = c
		c = next_conn()
	end
	local ip = ask(c, "ip", 21)
	check("ip_is_ip_port", ip and ip:match "^127%.0%.0%.1:%d+$", ip)
end

-- Expects the reply payload `want` and then the server's close.
local function refused(name, hs, want, want_len)
	local c, reply = gate(hs)
	local closed = c:closes_within(2000)
	c:close()
	check(name, reply == want and closed and (not want_len or bytes(frame(reply):sub(1, 2))
		== want_len), tostring(reply) .. (closed and "" or " (not closed)"))
end

local function gate_refusals()
	local s = alice.secret
	local name = b64("alice") .. "@" .. b64("sample") .. "#" .. b64(alice.subid)
	refused("handshake_without_colons_404", "hello", "404 User Not Found", "00 12")
	refused("handshake_unknown_user_404",
		handshake_text("bob", "sample", "1", 9, s), "404 User Not Found")
	refused("handshake_bad_index_400", name .. ":abc:" .. b64(crypt.hmac_hash(s, name .. ":abc")),
		"400 Bad Request", "00 0f")
	refused("handshake_bad_hmac_base64_400", name .. ":7:AAAA=", "400 Bad Request")
	refused("handshake_index_expired_403",
		handshake_text("alice", "sample", alice.subid, 2, s), "403 Index Expired", "00 11")
	refused("handshake_wrong_hmac_401", name .. ":9:" .. b64(crypt.hmac_hash("wrongkey", name
		.. ":9")), "401 Unauthorized", "00 10")
	-- refusals change nothing: index 5 is still above the last accepted (2)
	local c, reply = gate(handshake_text("alice", "sample", alice.subid, 5, s))
	check("refusals_leave_user_state", reply == "200 OK", reply)
	-- a new handshake leaves the older connection served; closing the older
	-- one forgets the user's address although the newer one still works
	check("older_connection_still_served", ask(alice.conn, "echo", 22) == "echo")
	alice.conn:close()
	local ip
	for _ = 1, 50 do
		ip = meta(c, "ip")
		if ip == "nil" then
			break
		end
		socket.usleep(100000)
	end
	check("closing_older_connection_clears_ip", ip == "nil", ip)
	alice.conn, alice.index = c, 5
end

local function login_refused(name, port, line_or_fn, want)
	local c = connect(port)
	c:line()
	local ok = true
	if type(line_or_fn) == "function" then
		ok = line_or_fn(c)
	else
		c:send(line_or_fn)
	end
	local reply = c:line(3000)
	local extra = c:line(300)
	c:close()
	check(name, ok and reply == want and extra == nil, tostring(reply))
end

local function login_refusals()
	login_refused("login_bad_key_base64_401", LOGIN_PORT, "!!!!\n", "401 Unauthorized")
	login_refused("login_short_key_401", LOGIN_PORT, b64("1234567") .. "\n", "401 Unauthorized")
	login_refused("login_crlf_401", LOGIN_PORT, b64(crypt.dhexchange("12345678")) .. "\r\n",
		"401 Unauthorized")
	-- a zero public value fails after the server's line 3
	login_refused("login_zero_key_401_after_line_3", LOGIN_PORT, function(c)
		c:send(b64(("\0"):rep(8)) .. "\n")
		local l3 = c:line()
		return l3 and #l3 == 12
	end, "401 Unauthorized")
	login_refused("login_wrong_challenge_answer_401", LOGIN_PORT, function(c)
		local key = crypt.randomkey()
		c:send(b64(crypt.dhexchange(key)) .. "\n")
		c:line()
		c:send(b64("88888888") .. "\n")
		return true
	end, "401 Unauthorized")
	local function full(port, make_cipher)
		local c = connect(port)
		local challenge = unb64(c:line())
		local key = crypt.randomkey()
		c:send(b64(crypt.dhexchange(key)) .. "\n")
		local secret = crypt.dhsecret(unb64(c:line()), key)
		c:send(b64(crypt.hmac64(challenge, secret)) .. "\n")
		c:send(make_cipher(secret) .. "\n")
		local reply = c:line(3000)
		c:close()
		return reply
	end
	check("login_bad_des_length_401", full(LOGIN_PORT, function()
		return b64("1234567890")
	end) == "401 Unauthorized")
	check("login_wrong_password_401", full(LOGIN_PORT, function(secret)
		return b64(crypt.desencode(secret, token("dave", "sample", "secret")))
	end) == "401 Unauthorized")
	local reply = login_reply(LOGIN_PORT, "dave", "nowhere", "password")
	check("login_unknown_server_403", reply == "403 Forbidden", reply)
	-- the subid's text: nil gives the empty encoding, a number its decimal text
	reply = login_reply(LOGIN_PORT, "nil-subid", "sample", "password")
	check("login_nil_subid_is_200_space", reply == "200 ", reply)
	reply = login_reply(LOGIN_PORT, "number-subid", "sample", "password")
	check("login_number_subid_is_its_text", reply == "200 NDI=", reply)
	-- a second login of a uid whose login_handler still runs: 406
	local first = login_start(LOGIN_PORT, "slow", "sample", "password")
	socket.usleep(100000)
	local second = login_reply(LOGIN_PORT, "slow", "sample", "password")
	local first_reply = first:line(6000)
	first:close()
	check("login_concurrent_same_uid_406", second == "406 Not Acceptable", second)
	check("login_first_of_concurrent_200", first_reply and first_reply:match "^200 ",
		first_reply)
end

local function kick()
	local c = replace_conn()
	alice.conn = c
	local reply, secret = login(LOGIN_PORT, "alice", "sample", "password")
	local subid = reply and unb64(reply:sub(5))
	check("second_login_gets_new_subid", reply and reply:match "^200 " and subid ~= alice.subid,
		reply)
	-- the first login's connection is closed, with no message
	local closed = c:closes_within(2000)
	check("second_login_kicks_first", closed and c.buf == "", bytes(c.buf))
	c:close()
	refused("kicked_subid_404", handshake_text("alice", "sample", alice.subid, 9,
		alice.secret), "404 User Not Found")
	local c2, r2 = gate(handshake_text("alice", "sample", subid, 1, secret))
	check("new_subid_handshake_200", r2 == "200 OK", r2)
	alice.conn, alice.secret, alice.subid, alice.index = c2, secret, subid, 1
end

local function input_limit()
	local c = connect(LOGIN_PORT)
	c:line()
	c:send(("a"):rep(8193))
	local closed = c:closes_within(2000)
	check("login_8193_unread_bytes_closed_without_reply", closed and c.buf == "", c.buf)
	c:close()
	c = connect(LOGIN_PORT)
	c:line()
	c:send(("a"):rep(8192))
	check("login_8192_unread_bytes_kept_open", not c:closes_within(500))
	c:close()
end

local function strict_limits()
	local c = connect(STRICT_PORT)
	local challenge = c:line()
	local closed = c:closes_within(2500)
	check("login_timeout_closes_without_reply", challenge and closed and c.buf == "", c.buf)
	c:close()
	local reply, _, carol = login(STRICT_PORT, "carol", "sample", "password")
	c = carol
	check("login_strict_200", reply and reply:match "^200 ", reply)
	local open_now = not c:closes_within(300)
	check("login_linger_closes_after_reply", open_now and c:closes_within(2500))
	c:close()
	c = connect(GATE_PORT)
	check("handshake_timeout_closes", c:closes_within(2500) and c.buf == "")
	c:close()
end

local function sessions()
	local c = alice.conn
	-- a pending session sent twice: one response only
	request(c, "slow:30", 30)
	request(c, "slow:30", 30)
	local p1, p2 = c:frame(), c:frame(600)
	check("pending_session_second_copy_absorbed",
		response(p1) == "slow 30" and p2 == nil, tostring(p2))
	-- a third copy while pending closes the connection
	request(c, "slow:30", 31)
	request(c, "slow:30", 31)
	request(c, "slow:30", 31)
	check("pending_session_third_copy_closes", c:closes_within(2000))
	c:close()
	local reply
	alice.index = alice.index + 1
	c, reply = gate(handshake_text("alice", "sample", alice.subid, alice.index, alice.secret))
	local ok = reply == "200 OK"
	-- short request: closed
	c:send(frame("abc"))
	check("short_request_closes", ok and c:closes_within(2000))
	c:close()
end

-- A new user's cache (expired_number 2), as in the worked example: six
-- sessions answered, a reconnect re-sends 6 and 5 (cached), 4 and 3 (run
-- again); then the byte cap and a response too long for a frame.
local function cache_bounds()
	local erin = { name = "erin", index = 0 }
	local reply, secret, l = login(LOGIN_PORT, "erin", "sample", "password")
	l:close()
	erin.secret, erin.subid = secret, reply and unb64(reply:sub(5))
	local c = next_conn(erin)
	local answers = {}
	for s = 1, 6 do
		request(c, "count", s)
		answers[s] = c:frame()
	end
	c:close()
	c = next_conn(erin)
	request(c, "x", 6)
	request(c, "x", 5)
	local r6, r5 = c:frame(), c:frame()
	check("cache_keeps_recent_responses", r6 == answers[6] and r5 == answers[5],
		tostring(r6) .. "/" .. tostring(r5))
	local r44, r43 = ask(c, "count", 4), ask(c, "count", 3)
	check("cache_drops_older_responses", r44 == "count 7" and r43 == "count 8",
		tostring(r44) .. "/" .. tostring(r43))
	-- cache_bytes 100000: two 60000-byte responses do not both stay
	local b51, b52 = ask(c, "big:60000", 51), ask(c, "big:60000", 52)
	c:close()
	c = next_conn(erin)
	local a52, a51 = ask(c, "x", 52), ask(c, "big:60000", 51)
	check("cache_bytes_keeps_newest", a52 and a52 == b52, a52 and #a52)
	check("cache_bytes_drops_oldest", a51 and b51 and a51 ~= b51 and a51:match "^11:",
		a51 and a51:sub(1, 8))
	-- a response too long for a frame closes the connection; the session is
	-- not left pending (the handler runs again after a reconnect)
	request(c, "big:65531", 60)
	check("response_too_long_closes", c:closes_within(2000) and c.buf == "")
	c:close()
	c = next_conn(erin)
	local again = ask(c, "big:100", 60)
	check("too_long_session_not_stuck", again and #again == 100, again and #again)
	c:close()
end

local function log_lines()
	local f = io.open(NODE_LOG)
	local n = 0
	for _ in f:lines() do
		n = n + 1
	end
	f:close()
	return n
end

-- n rounds of three bad handshakes (a login line that is not base64, a
-- gate handshake for no user, one with a bad index): returns how many were
-- answered as expected (401; 404 then close; 400 then close).
local function bad_handshakes(n)
	local answered = 0
	local name = b64("alice") .. "@" .. b64("sample") .. "#" .. b64(alice.subid)
	for _ = 1, n do
		local l = connect(LOGIN_PORT)
		l:line()
		l:send("garbage\n")
		if l:line() == "401 Unauthorized" then
			answered = answered + 1
		end
		l:close()
		local g = connect(GATE_PORT)
		g:send(frame("x:abc:"))
		if g:frame() == "404 User Not Found" and g:closes_within(2000) then
			answered = answered + 1
		end
		g:close()
		g = connect(GATE_PORT)
		g:send(frame(name .. ":z:"))
		if g:frame() == "400 Bad Request" and g:closes_within(2000) then
			answered = answered + 1
		end
		g:close()
	end
	return answered
end

-- The node's Lua heap (KiB, after a full collection) once the last closes
-- have reached it.
local function heap_kb(c, session)
	socket.usleep(300000)
	return tonumber(ask(c, "mem", session))
end

local function flood()
	local c = next_conn()
	local N = tonumber(os.getenv "LOGIN_FLOOD") or 400
	-- a first round brings the tables and buffers to their working size
	bad_handshakes(N // 4)
	local kb0 = heap_kb(c, 70)
	local lines0 = log_lines()
	local t0 = os.time()
	local answered = bad_handshakes(N)
	local secs = os.time() - t0 + 1
	local kb1 = heap_kb(c, 71)
	local lines = log_lines() - lines0
	print(string.format("flood: %d bad handshakes in ~%d s: Lua heap %s -> %s KiB, %d log lines",
		3 * N, secs, kb0, kb1, lines))
	check("flood_every_bad_handshake_answered", answered == 3 * N, answered)
	-- the heap steps up by up to ~16 KiB as tables resize, whatever N is; a
	-- small table kept per connection of one kind is N times ~120 bytes
	check("flood_heap_bounded", kb0 and kb1 and kb1 - kb0 < 48 * N / 400,
		kb1 and kb0 and (kb1 - kb0))
	-- each limiter writes at most 11 lines a second; four log here (the login
	-- master, its two slaves, the gate), five for slack, and the ~20 lines of
	-- the heap measure. One line per event would be about 3 * N.
	check("flood_log_bounded", lines <= 5 * 11 * (secs + 1) + 30, lines)
end

local function disconnect()
	local c = alice.conn
	local before = tonumber(meta(c, "disconnects"))
	c:close()
	c = next_conn()
	local after = disconnects(c, before + 1)
	check("disconnect_calls_handler", tonumber(after) == tonumber(before) + 1,
		tostring(before) .. "->" .. tostring(after))
	c:close()
end

worked_example()
first_login()
first_handshake()
reconnect()
gate_refusals()
login_refusals()
kick()
input_limit()
strict_limits()
sessions()
cache_bounds()
flood()
disconnect()
print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
