-- test: real time
-- The listen backlog: a burst of connects to a port the node has not yet
-- accepted from completes at once up to the backlog (the kernel queues the
-- handshakes); beyond it, SYNs are dropped and the clients retry a second
-- later. The default (the config key socket_backlog, 511) takes a burst of
-- 200; an explicit small backlog still applies.
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"

local BURST <const> = 200

-- Opens BURST connections at once to a listening socket that accepts none;
-- returns how many completed within half a second.
local function burst(backlog)
	local lid, _, port = socket.listen("127.0.0.1", 0, backlog)
	local done, fds = 0, {}
	for i = 1, BURST do
		skynet.fork(function()
			fds[i] = socket.open("127.0.0.1", port)
			if fds[i] then
				done = done + 1
			end
		end)
	end
	skynet.sleep(50)
	local n = done
	socket.close(lid) -- the connects still waiting fail now
	for i = 1, BURST do
		if fds[i] then
			socket.close(fds[i])
		end
	end
	return n
end

t.case("the default backlog takes a burst of connects", function()
	local n = burst()
	t.eq(n, BURST, "connects completed at once")
end)

t.case("an explicit backlog still applies", function()
	local n = burst(8)
	t.ok(n < BURST // 2, "a backlog of 8 takes " .. n .. " of " .. BURST)
end)

t.start()
