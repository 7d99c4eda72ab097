-- Helper service for the network tests: a TCP echo server on skynet.socket.
-- Commands: listen() -> port (127.0.0.1, ephemeral; one coroutine per
-- connection echoes whatever it reads); serve(id) starts an id handed over
-- with socket.abandon (before it answers) and echoes it; stats() ->
-- accepted, closed, bytes; wait_idle() returns once every connection is
-- closed; close() stops listening.
local skynet = require "skynet"
local socket = require "skynet.socket"

local CMD = {}
local listen_id
local accepted, closed, bytes = 0, 0, 0
local idle_waiters = {}

local function check_idle()
	if accepted == closed then
		for i = 1, #idle_waiters do
			skynet.wakeup(idle_waiters[i])
		end
		idle_waiters = {}
	end
end

local function echo(id)
	while true do
		local data = socket.read(id)
		if not data then
			break
		end
		bytes = bytes + #data
		socket.write(id, data)
	end
	socket.close(id)
	closed = closed + 1
	check_idle()
end

local function serve(id)
	if socket.start(id) then
		echo(id)
	else
		closed = closed + 1
		check_idle()
	end
end

function CMD.listen()
	local id, _, port = socket.listen("127.0.0.1", 0, 128)
	listen_id = id
	socket.start(id, function(fd)
		accepted = accepted + 1
		skynet.fork(serve, fd)
	end)
	return port
end

function CMD.serve(id)
	accepted = accepted + 1
	-- Own the socket before answering: what the caller sends next must
	-- reach this service, not the one that abandoned it.
	if socket.start(id) then
		skynet.fork(echo, id)
	else
		closed = closed + 1
		check_idle()
	end
end

function CMD.stats()
	return accepted, closed, bytes
end

function CMD.wait_idle()
	if accepted ~= closed then
		local token = {}
		idle_waiters[#idle_waiters + 1] = token
		skynet.wait(token)
	end
end

function CMD.close()
	if listen_id then
		socket.close(listen_id)
		listen_id = nil
	end
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
end)
