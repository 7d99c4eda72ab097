-- snax.gateserver: a reusable TCP gate for 2-byte-framed clients.
--
-- The library owns the service's `socket` protocol and decodes every event
-- with netpack.filter, so a service using it cannot use skynet.socket too.
-- `handler` supplies the policy:
--   connect(fd, "ip:port")    required; fd is not reading until openclient
--   message(fd, ptr, sz)      required; one frame, ptr owned by the handler
--   disconnect(fd), error(fd, text), warning(fd, kb), open(source, conf),
--   command(cmd, source, ...) optional
--   embed                     true: do not call skynet.start nor install
--                             the `lua` dispatcher; gateserver.start then
--                             returns the command function f(cmd, source,
--                             ...) for the host service to call
--
-- Clients: connection[fd] is true from accept until the close/error event
-- (frames are delivered), or "kicked" after closeclient (frames are
-- dropped, the close event still reports disconnect). client_number counts
-- the true ones; at maxclient or more a new connection is shut down at
-- once, without a connect callback.
--
-- Flow control: the framework stops reading a connection while the
-- service that consumes its data is behind (its mailbox at the
-- socket_flow_high_msgs / socket_flow_high_bytes mark), and resumes when it
-- caught up. That service is the gate itself until the gate names another:
-- a gate that hands fd's frames to an agent calls
-- gateserver.consumer(fd, agent) (and gateserver.consumer(fd) to take them
-- back), so the agent's backlog, not only the gate's, holds the client back.
--
-- Log: the lines clients can cause once per event (a frame dropped after
-- its client was kicked, an accept error) go through one skynet.loglimit
-- limiter per gate: at most 10 a second, then one line with the count.
--
-- Tracing: with config trace_sample > 0, that share of the frames begins a
-- new trace around handler.message (skynet.tracing), so the redirect or
-- send that passes the frame on carries it.
--
-- Frames: when netpack.filter queues several frames ("more"), they are
-- popped in one coroutine; a fork is scheduled first so that, if
-- handler.message blocks, the fork takes over the rest of the queue and
-- the gate keeps serving other clients.
local skynet = require "skynet"
local netpack = require "skynet.netpack"
local driver = require "skynet.socketdriver"
local loglimit = require "skynet.loglimit"
local tracing = require "skynet.tracing"

local sformat = string.format

local gateserver = {}

local DEFAULT_MAXCLIENT <const> = 1024

local queue -- netpack queue (the current one: filter may replace it)
local listen_id -- listening socket id
local listen_token -- open() waits on it for the listen confirmation
local listen_ok -- the confirmation arrived
local maxclient = DEFAULT_MAXCLIENT
local client_number = 0
local nodelay = false
local connection = {} -- fd -> true | "kicked"
local log = loglimit.new() -- lines that clients can cause once per event

function gateserver.openclient(fd)
	if connection[fd] == true then
		driver.start(fd)
	end
end

-- Name the service (a handle, or a ".name" / ":hex" address) whose mailbox
-- receives fd's frames, for flow control; nil: the gate itself. Call it
-- before or after openclient; closing fd forgets it.
function gateserver.consumer(fd, handle)
	if connection[fd] == nil then
		return
	end
	if type(handle) == "string" then
		local h = skynet.localname(handle)
		if h == nil then
			error(sformat("gateserver.consumer: unknown service (%s)", handle), 2)
		end
		handle = h
	end
	if handle ~= nil and math.type(handle) ~= "integer" then
		error(sformat("gateserver.consumer: bad service handle (%s)", tostring(handle)), 2)
	end
	driver.consumer(fd, handle or 0)
end

function gateserver.closeclient(fd)
	if connection[fd] == true then
		connection[fd] = "kicked"
		client_number = client_number - 1
		driver.close(fd)
	end
end

function gateserver.start(handler)
	assert(handler.connect and handler.message,
		"gateserver.start: handler.connect and handler.message are required")

	local CMD = {}

	function CMD.open(source, conf)
		assert(listen_id == nil, "gateserver.open: already listening")
		local address = conf.address or "0.0.0.0"
		local port = assert(tonumber(conf.port), "gateserver.open: no port")
		maxclient = conf.maxclient or DEFAULT_MAXCLIENT
		nodelay = conf.nodelay and true or false
		local id = driver.listen(address, port, conf.backlog)
		if not id then
			error(sformat("gateserver.open: listen failed (%s:%s)", address, port))
		end
		listen_id = id
		listen_ok = false
		listen_token = {}
		skynet.wait(listen_token)
		listen_token = nil
		if not listen_ok then
			listen_id = nil
			error(sformat("gateserver.open: listen failed (%s:%s)", address, port))
		end
		conf.address, conf.port = listen_ok.ip, listen_ok.port
		driver.start(id)
		if handler.open then
			return handler.open(source, conf)
		end
	end

	function CMD.close()
		assert(listen_id, "gateserver.close: not listening")
		driver.close(listen_id)
		listen_id = nil
	end

	local MSG = {}

	-- config trace_sample > 0: a share of the messages begins a trace,
	-- which the handler's redirect or send carries to the agent
	local sampling = (tonumber(skynet.getenv "trace_sample") or 0) > 0

	local function deliver(fd, msg, sz)
		if connection[fd] ~= true then
			log("Drop message from fd (%d) : %d bytes", fd, sz)
			skynet.trash(msg, sz)
		elseif sampling and tracing.enter "client" then
			handler.message(fd, msg, sz)
			tracing.finish()
		else
			handler.message(fd, msg, sz)
		end
	end

	MSG.data = deliver

	local function drain()
		local fd, msg, sz = netpack.pop(queue)
		if fd == nil then
			return
		end
		skynet.fork(drain) -- takes over if handler.message blocks
		repeat
			deliver(fd, msg, sz)
			fd, msg, sz = netpack.pop(queue)
		until fd == nil
	end

	MSG.more = drain

	function MSG.open(fd, addr)
		if client_number >= maxclient then
			driver.shutdown(fd)
			return
		end
		if nodelay then
			driver.nodelay(fd)
		end
		connection[fd] = true
		client_number = client_number + 1
		handler.connect(fd, addr)
	end

	-- fd is gone: forget it and tell the handler (f: disconnect or error).
	local function gone(fd, f, ...)
		local c = connection[fd]
		if c == nil then
			return
		end
		connection[fd] = nil
		if c == true then
			client_number = client_number - 1
		end
		if f then
			f(fd, ...)
		end
	end

	function MSG.close(fd)
		if fd == listen_id then
			listen_id = nil
			return
		end
		gone(fd, handler.disconnect)
	end

	function MSG.error(fd, text)
		if fd == listen_id then
			if listen_token and not listen_ok then
				skynet.wakeup(listen_token)
			else
				log("gateserver: accept error (%s)", tostring(text))
			end
			return
		end
		gone(fd, handler.error or handler.disconnect, text)
	end

	function MSG.warning(fd, kb)
		if handler.warning then
			handler.warning(fd, kb)
		end
	end

	function MSG.init(id, ip, port)
		if id == listen_id and listen_token and not listen_ok then
			listen_ok = { ip = ip, port = port }
			skynet.wakeup(listen_token)
		end
	end

	skynet.register_protocol {
		name = "socket",
		id = skynet.PTYPE_SOCKET,
		unpack = function(msg, sz)
			return netpack.filter(queue, msg, sz)
		end,
		dispatch = function(_, _, q, kind, ...)
			queue = q
			if kind then
				local f = MSG[kind]
				if f then
					f(...)
				end
			end
		end,
	}

	local function command(cmd, source, ...)
		local f = CMD[cmd]
		if f then
			return f(source, ...)
		end
		local h = handler.command
		if h == nil then
			error(sformat("gateserver: unknown command (%s)", tostring(cmd)))
		end
		return h(cmd, source, ...)
	end

	if handler.embed then
		return command
	end
	skynet.start(function()
		skynet.dispatch("lua", function(_, source, cmd, ...)
			skynet.ret(skynet.pack(command(cmd, source, ...)))
		end)
	end)
	return command
end

return gateserver
