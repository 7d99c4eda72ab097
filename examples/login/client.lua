-- The terminal client of the login example. From the repository root, with
-- both nodes running (examples/README.md):
--
--   LUA_CPATH='luaclib/?.so' lua5.4 examples/login/client.lua [user [password [lport [gport]]]]
--
-- Logs in on the login node (127.0.0.1:8001, or lport) for the game server
-- "sample", connects to the gate node (127.0.0.1:8889, or gport) with the
-- secret, then sends
-- each line typed as a request and prints each response. Commands:
--   reconnect   drop the connection, connect again with the next index and
--               send the last request's session again: the gate answers it
--               from its cache (the handler does not run twice)
--   quit        close and exit
-- At the end of the input it waits for the answers still due, then exits.
local socket = require "client.socket"
local crypt = require "client.crypt"

local LOGIN_HOST, LOGIN_PORT = "127.0.0.1", tonumber(arg[3]) or 8001
local GATE_HOST, GATE_PORT = "127.0.0.1", tonumber(arg[4]) or 8889
local SERVER = "sample"
local user = arg[1] or "alice"
local password = arg[2] or "password"

local b64, unb64 = crypt.base64encode, crypt.base64decode

-- Reads from fd until `cut(buffer)` finds a unit; returns it and the rest.
local function read_until(fd, buf, cut)
	for _ = 1, 1000 do -- 10 s
		local unit, rest = cut(buf)
		if unit then
			return unit, rest
		end
		local r = socket.recv(fd)
		if r == "" then
			error "the server closed the connection"
		elseif r then
			buf = buf .. r
		else
			socket.usleep(10000)
		end
	end
	error "no answer from the server"
end

local function cut_line(buf)
	local i = buf:find("\n", 1, true)
	if i then
		return buf:sub(1, i - 1), buf:sub(i + 1)
	end
end

local function cut_frame(buf)
	if #buf >= 2 then
		local n = string.unpack(">I2", buf)
		if #buf >= 2 + n then
			return buf:sub(3, 2 + n), buf:sub(3 + n)
		end
	end
end

-- The login: returns the subid and the secret.
local function login()
	local fd = socket.connect(LOGIN_HOST, LOGIN_PORT)
	local buf, line = ""
	local function readline()
		line, buf = read_until(fd, buf, cut_line)
		return line
	end
	local challenge = unb64(readline())
	local key = crypt.randomkey()
	socket.send(fd, b64(crypt.dhexchange(key)) .. "\n")
	local secret = crypt.dhsecret(unb64(readline()), key)
	print("secret is " .. crypt.hexencode(secret))
	socket.send(fd, b64(crypt.hmac64(challenge, secret)) .. "\n")
	local token = b64(user) .. "@" .. b64(SERVER) .. ":" .. b64(password)
	socket.send(fd, b64(crypt.desencode(secret, token)) .. "\n")
	local reply = readline()
	socket.close(fd) -- the login server leaves the connection to us
	local code = reply:sub(1, 3)
	if code ~= "200" then
		print("login failed: " .. reply)
		os.exit(1)
	end
	local subid = unb64(reply:sub(5))
	print("login ok, subid " .. subid)
	return subid, secret
end

local subid, secret = login()
local index = 0
local fd
local buf = ""

local function connect()
	index = index + 1
	fd = socket.connect(GATE_HOST, GATE_PORT)
	buf = ""
	local text = b64(user) .. "@" .. b64(SERVER) .. "#" .. b64(subid) .. ":" .. index
	local hmac = crypt.hmac_hash(secret, text)
	socket.send(fd, string.pack(">s2", text .. ":" .. b64(hmac)))
	local reply
	reply, buf = read_until(fd, buf, cut_frame)
	print(string.format("gate handshake (index %d): %s", index, reply))
	if reply:sub(1, 3) ~= "200" then
		os.exit(1)
	end
end

local session = 0
local due = 0 -- requests sent, not answered yet

local function request(text, s)
	socket.send(fd, string.pack(">s2", text .. string.pack(">I4", s)))
	due = due + 1
end

-- Prints the responses that arrived; false once the gate closed.
local function poll()
	local r = socket.recv(fd)
	if r == "" then
		print("the gate closed the connection")
		return false
	elseif r then
		buf = buf .. r
	end
	while true do
		local p, rest = cut_frame(buf)
		if p == nil then
			return true
		end
		buf = rest
		local ok = p:byte(-5) == 1
		local s = string.unpack(">I4", p, #p - 3)
		print(string.format("[%d] %s%s", s, ok and "" or "error", p:sub(1, -6)))
		due = due - 1
	end
end

connect()
print("type a line to send it; reconnect; quit")
while true do
	local line, eof = socket.readstdin()
	if line == "quit" then
		break
	elseif line == "reconnect" then
		socket.close(fd)
		connect()
		if session > 0 then
			print(string.format("sending session %d again", session))
			request("(sent again)", session)
		end
	elseif line then
		session = session + 1
		request(line, session)
	elseif eof then
		for _ = 1, 200 do -- the answers still due, at most 2 s
			if due <= 0 or not poll() then
				break
			end
			socket.usleep(10000)
		end
		break
	end
	if not poll() then
		break
	end
	socket.usleep(10000)
end
socket.close(fd)
