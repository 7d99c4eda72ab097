-- The client of test/node/test_client_socket.sh: skynet's client.socket in
-- a plain lua5.4 (luaclib/client.so on LUA_CPATH), against the gate of
-- test/lua/svc_flow_node.lua, whose agent answers the frame "ping" with
-- "pong" (frames: 2-byte big-endian length, then the bytes).
--   lua5.4 socket_client.lua PORT ping
--       checks that recv gives nothing (nil) before any byte came, sends
--       one frame split over two sends and two frames in one (send writes
--       raw bytes), then reads until three "pong" frames came; prints
--       "pongs=<n> idle=<count of results of the first recv>"
--   lua5.4 socket_client.lua PORT wait_close
--       prints "waiting", then reads until recv gives "" (the node is
--       gone); prints "closed bytes=<n>" or "no close" after 10 s
-- Every loop is bounded by a count.
local socket = require "client.socket"

local port = assert(tonumber(arg[1]), "port")
local mode = arg[2]
local fd = socket.connect("127.0.0.1", port)

local function frame(text)
	return string.pack(">s2", text)
end

if mode == "ping" then
	local idle = select("#", socket.recv(fd))
	local ping = frame("ping")
	socket.send(fd, ping:sub(1, 3))
	socket.usleep(20000)
	socket.send(fd, ping:sub(4))
	socket.send(fd, ping .. ping)
	local buf, pongs = "", 0
	for _ = 1, 500 do -- at most 5 s
		local r = socket.recv(fd)
		if r == "" then
			break
		elseif r then
			buf = buf .. r
			while #buf >= 2 and #buf >= 2 + string.unpack(">I2", buf) do
				local text, next_at = string.unpack(">s2", buf)
				pongs = pongs + (text == "pong" and 1 or 0)
				buf = buf:sub(next_at)
			end
		else
			socket.usleep(10000)
		end
		if pongs == 3 then
			break
		end
	end
	print(string.format("pongs=%d idle=%d", pongs, idle))
elseif mode == "wait_close" then
	print("waiting")
	io.stdout:flush()
	local bytes = 0
	for _ = 1, 1000 do -- at most 10 s
		local r = socket.recv(fd)
		if r == "" then
			print(string.format("closed bytes=%d", bytes))
			socket.close(fd)
			return
		end
		bytes = bytes + (r and #r or 0)
		socket.usleep(10000)
	end
	print("no close")
end
socket.close(fd)
