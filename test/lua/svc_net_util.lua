-- Helpers shared by the network tests (test_net_*.lua). A library, not a
-- service: require "svc_net_util".
local skynet = require "skynet"
local socket = require "skynet.socket"

local M = {}

-- Two connected TCP sockets of this service over 127.0.0.1: the accepted
-- (server) end, started, and the client end.
function M.pair()
	local lid, _, port = socket.listen("127.0.0.1", 0)
	local accepted
	local token = {}
	socket.start(lid, function(id)
		accepted = id
		skynet.wakeup(token)
	end)
	local cid = assert(socket.open("127.0.0.1", port))
	if accepted == nil then
		skynet.wait(token)
	end
	socket.close(lid)
	assert(socket.start(accepted))
	return accepted, cid
end

-- Waits (virtual time, 1 cs steps) until pred() is true, at most limit cs.
function M.wait_for(pred, limit)
	local deadline = skynet.now() + (limit or 1000)
	while not pred() do
		if skynet.now() >= deadline then
			return false
		end
		skynet.sleep(1)
	end
	return true
end

local pid
-- Number of open file descriptors of the node process.
function M.fd_count()
	if pid == nil then
		local f = assert(io.open("/proc/self/stat"))
		pid = f:read("n")
		f:close()
	end
	local p = assert(io.popen("ls /proc/" .. pid .. "/fd | wc -l"))
	local n = p:read("n")
	p:close()
	return n
end

-- The netstat entry of socket id, or nil.
function M.info(id)
	for _, v in ipairs(socket.netstat()) do
		if v.id == id then
			return v
		end
	end
end

-- A deterministic pseudo-random byte string (xorshift, seeded).
function M.bytes(n, seed)
	local x = seed or 0x2545F491
	local out = {}
	local chunk = {}
	for i = 1, n do
		x = x ~ ((x << 13) & 0xffffffff)
		x = x ~ (x >> 17)
		x = x ~ ((x << 5) & 0xffffffff)
		chunk[#chunk + 1] = x & 0xff
		if #chunk == 4096 or i == n then
			out[#out + 1] = string.char(table.unpack(chunk))
			chunk = {}
		end
	end
	return table.concat(out)
end

return M
