-- clusteragent <clusterd> <fd> <peer>: serves one incoming cluster connection
-- (started by clusterd on accept; it owns the socket and exits when the
-- connection closes, telling clusterd, unless it never got going).
--
-- A read loop takes one frame at a time (2-byte big-endian length, body)
-- and handles it before reading the next, so requests reach their targets
-- in the order they came. A call is sent to its target at once and answered
-- from a reply handler, without a coroutine of its own; replies leave in the
-- order they complete. The target sees the agent as the source.
--
-- Bounds, so that one peer cannot exhaust the node:
--   * at most __maxpending calls in flight: the loop stops reading until
--     a quarter of them are answered (skynet.socket then pauses the socket,
--     and TCP slows the peer down). The agent owns the socket, so it is the
--     connection's flow-control consumer, and it declares its calls in
--     flight with socketdriver.flow_hold: a backlog in its mailbox plus its
--     parked calls pauses the socket at the node-wide high-water mark too;
--   * multi-part messages: an announced total over __maxmessage is refused
--     with "Invalid large req" and its parts are skipped; the bytes of all
--     unfinished messages together may not pass __maxmessage, nor their
--     number __maxpending, or the connection is closed;
--   * a frame the decoder rejects is logged and dropped; the connection
--     stays open (as the reference does);
--   * the log lines a frame can cause (a rejected frame, a part of an
--     unknown session, a refused message, a failed name lookup) go through
--     one skynet.loglimit limiter per agent, i.e. per connection: at most 10
--     a second, then one line with the count of the rest. Trace lines of
--     traced calls are not limited: tracing is what the calling node asked
--     for, not an error (and a peer that reaches the port can call any
--     service anyway).
--
-- State:
--   inflight   reply-handler session -> wire session of the call (for a
--              name query or a traced call, a coroutine holds it instead);
--              ninflight counts every call being served.
--   partial    wire session -> { addr, push, total, got, tag, slices... } of
--              an unfinished multi-part message, or SKIP (refused).
--   names      "@name" -> handle, the cluster registry cache; emptied when
--              clusterd says the registry changed (namechange). lookups:
--              "@name" -> the lookup in progress, which later frames for the
--              same name wait for (so they keep their order).
--   tag        a trace tag received for the next call.
--
-- Tracing. A trace frame's tag is kept for the next call, as skynet does
-- (skynet.tracecall: the target's trace lines show it). A skywheel sender
-- asks first, with a name query for TRACE_HELLO (answered here with
-- TRACE_HELLO, also with session 0; a skynet peer answers "name not found"),
-- and after the yes its tags read "<trace id> <span id>": the call or push
-- that follows is then served in a span of that trace, child of the
-- sender's span (skynet.tracing), so the target's span has the agent's as
-- parent.
local skynet = require "skynet"
local socket = require "skynet.socket"
local core = require "skynet.cluster.core"
local S = require "skynet.private"
local driver = require "skynet.socketdriver"
local loglimit = require "skynet.loglimit"
local tracing = require "skynet.tracing"

local sformat = string.format
local tconcat = table.concat
local unpackrequest = core.unpackrequest
local packresponse = core.packresponse
local socket_write = socket.write
local flow_hold = driver.flow_hold
local call_handler = S.call_handler

local PTYPE_LUA <const> = skynet.PTYPE_LUA
local SKIP <const> = {}
local TRACE_HELLO <const> = "skywheel:trace/1"

local clusterd, fd, peer = ...
clusterd = math.tointeger(tonumber(clusterd))
fd = math.tointeger(tonumber(fd))

local opts
local inflight = {}
local ninflight = 0
local reader_waits = false
local reader_token = {}
local partial = {}
local npartial, partial_bytes = 0, 0
local names = {}
local names_version = 0
local lookups = {}
local tag
local closing = false
local log = loglimit.new() -- the lines a peer can cause once per frame

local function reply(session, ok, msg, sz)
	local r = packresponse(session, ok, msg, sz)
	if type(r) == "table" then
		r = tconcat(r)
	end
	socket_write(fd, r)
end

-- A call starts or ends being served. Calls in flight weigh on the
-- connection's flow control like waiting mail (they left the mailbox).
local function call_begun()
	ninflight = ninflight + 1
	flow_hold(1)
end

local function call_done()
	ninflight = ninflight - 1
	flow_hold(-1)
	if reader_waits and ninflight * 4 <= opts.maxpending * 3 then
		reader_waits = false
		skynet.wakeup(reader_token)
	end
end

local function describe_target(addr)
	if type(addr) == "number" then
		return skynet.address(addr)
	end
	return tostring(addr)
end

-- Reply handler of the calls sent without a coroutine (see skynet.request).
local handler = {
	function(_, s, ok, msg, sz)
		local wire = inflight[s]
		inflight[s] = nil
		if wire == nil then
			return
		end
		if ok then
			reply(wire.session, true, msg, sz)
		else
			reply(wire.session, false, describe_target(wire.addr) .. ": call failed")
		end
		call_done()
	end,
}

local function send_call(target, addr, session, msg)
	local ok, s = pcall(call_handler, target, PTYPE_LUA, handler, msg)
	if not ok then
		return reply(session, false, tostring(s))
	end
	inflight[s] = { session = session, addr = addr }
	call_begun()
end

-- The trace id and parent span of a skywheel sender's tag, or nil.
local function span_tag(t)
	local trace_id, parent = t:match "^(%x+) (%x+)$"
	if trace_id and #trace_id == 32 and #parent == 16 then
		return trace_id, parent
	end
	return nil
end

local function traced_call(target, addr, session, msg, t)
	call_begun()
	skynet.fork(function()
		local ok, m, sz
		local trace_id, parent = span_tag(t)
		if trace_id then
			tracing.begin(trace_id, parent, "cluster " .. describe_target(addr))
			ok, m, sz = pcall(skynet.rawcall, target, "lua", msg)
			tracing.finish(not ok)
		else
			ok, m, sz = pcall(skynet.tracecall, t, target, "lua", msg)
		end
		if ok then
			reply(session, true, m, sz)
		else
			reply(session, false, tostring(m))
		end
		call_done()
	end)
end

-- "@name" -> handle or nil; may block (a question to clusterd).
local function lookup(name)
	local h = names[name]
	if h then
		return h
	end
	local l = lookups[name]
	if l then
		local token = {}
		l[#l + 1] = token
		skynet.wait(token)
		return l.result
	end
	l = {}
	lookups[name] = l
	local version = names_version
	local ok
	ok, h = pcall(skynet.call, clusterd, "lua", "queryname", name:sub(2))
	if ok and version ~= names_version then -- the registry changed meanwhile: ask again, once
		ok, h = pcall(skynet.call, clusterd, "lua", "queryname", name:sub(2))
	end
	if not ok then
		log("cluster agent %s: name lookup of %s failed: %s", peer, name, tostring(h))
		h = nil
	end
	if h then
		names[name] = h
	end
	l.result = h
	lookups[name] = nil
	for _, token in ipairs(l) do
		skynet.wakeup(token)
	end
	return h
end

-- Delivers one complete request. target: what the address resolves to.
local function deliver(target, addr, session, msg, is_push, t)
	if is_push and t then -- only a skywheel sender traces pushes (span_tag)
		local trace_id, parent = span_tag(t)
		tracing.begin(trace_id, parent, "cluster " .. describe_target(addr))
		local ok = pcall(skynet.rawsend, target, "lua", msg)
		tracing.finish(not ok)
	elseif is_push then
		pcall(skynet.rawsend, target, "lua", msg)
	elseif t then
		traced_call(target, addr, session, msg, t)
	else
		send_call(target, addr, session, msg)
	end
end

local function name_query(session, h)
	if h then
		reply(session, true, skynet.packstring(h))
	else
		reply(session, false, "name not found")
	end
end

-- A complete request for addr. Returns true, doing nothing, when it needs
-- a registry lookup that may block and may_block is false.
local function request(addr, session, msg, is_push, t, may_block)
	if addr == 0 then -- a name query (answered even with session 0)
		local ok, name = pcall(skynet.unpack, msg)
		if not ok or type(name) ~= "string" then
			return name_query(session, nil)
		end
		if name == TRACE_HELLO then -- a skywheel sender asks: yes, spans (see Tracing)
			return reply(session, true, skynet.packstring(TRACE_HELLO))
		end
		name = "@" .. name
		local h = names[name]
		if h == nil or lookups[name] then
			if not may_block then
				return true
			end
			h = lookup(name)
		end
		return name_query(session, h)
	end
	local target = addr
	if type(addr) == "string" then
		local first = addr:sub(1, 1)
		if first == "@" then
			target = names[addr]
			if target == nil or lookups[addr] then
				if not may_block then
					return true
				end
				target = lookup(addr)
			end
			if target == nil then
				return reply(session, false, "Invalid name")
			end
		elseif first ~= "." and first ~= ":" then
			-- a harbor global name: this node has no harbor, nothing would answer
			return reply(session, false, "Invalid name")
		end
	end
	return deliver(target, addr, session, msg, is_push, t)
end

local function serve(addr, session, msg, is_push, t)
	if request(addr, session, msg, is_push, t, false) then
		call_begun()
		skynet.fork(function()
			request(addr, session, msg, is_push, t, true)
			call_done()
		end)
	end
end

local function close(reason)
	if not closing then
		closing = true
		skynet.error(sformat("cluster agent %s: %s, closing", peer, reason))
		socket.close(fd)
	end
end

local function take_tag()
	local t = tag
	tag = nil
	return t
end

-- The tag for the next message: calls take any; a push takes only a skywheel
-- sender's (skynet leaves the tag for the next call).
local function tag_for(is_push)
	if not is_push or (tag and span_tag(tag)) then
		return take_tag()
	end
	return nil
end

local function header(addr, session, total, is_push)
	local old = partial[session]
	if old then -- a header again: forget the unfinished message
		npartial = npartial - 1
		if old ~= SKIP then
			partial_bytes = partial_bytes - old.got
		end
	end
	if npartial >= opts.maxpending then
		return close(sformat("more than %d unfinished multi-part messages", opts.maxpending))
	end
	npartial = npartial + 1
	if total > opts.maxmessage then
		log("cluster agent %s: message of %d bytes refused (__maxmessage %d)", peer, total,
			opts.maxmessage)
		partial[session] = SKIP
		if not is_push then
			reply(session, false, "Invalid large req")
		end
		return
	end
	partial[session] = {
		addr = addr, push = is_push, total = total, got = 0, tag = tag_for(is_push),
	}
end

local function part(session, bytes, more)
	local p = partial[session]
	if p == nil then
		if more then
			log("cluster agent %s: part of unknown session %d dropped", peer, session)
			return
		end
		return reply(session, false, "Invalid name") -- a final part with no header
	end
	if p ~= SKIP then
		p.got = p.got + #bytes
		partial_bytes = partial_bytes + #bytes
		if partial_bytes > opts.maxmessage then
			return close(sformat("more than %d bytes of unfinished multi-part messages",
				opts.maxmessage))
		end
		p[#p + 1] = bytes
	end
	if more then
		return
	end
	partial[session] = nil
	npartial = npartial - 1
	if p == SKIP then
		return
	end
	partial_bytes = partial_bytes - p.got
	if p.got ~= p.total then
		if not p.push then
			reply(session, false, "Invalid large req")
		end
		return
	end
	serve(p.addr, session, tconcat(p), p.push, p.tag)
end

local function frame(body)
	local ok, addr, session, msg, sz, padding, is_push = pcall(unpackrequest, body)
	if not ok then
		log("cluster agent %s: %s", peer, tostring(addr))
		return
	end
	if session == nil then -- a trace frame
		tag = addr
		return
	end
	if addr == false then
		return part(session, msg, padding)
	end
	if padding then
		return header(addr, session, sz, is_push)
	end
	serve(addr, session, msg, is_push, tag_for(is_push))
end

local function read_loop()
	while not closing do
		local h = socket.read(fd, 2)
		if not h then
			break
		end
		local body = socket.read(fd, (h:byte(1) << 8) | h:byte(2))
		if not body then
			break
		end
		local ok, err = pcall(frame, body)
		if not ok then
			close("internal error: " .. tostring(err))
			break
		end
		if ninflight >= opts.maxpending and not closing then
			reader_waits = true
			skynet.wait(reader_token)
		end
	end
	closing = true
	socket.close(fd)
	skynet.send(clusterd, "lua", "agentexit")
	skynet.exit()
end

local CMD = {}

function CMD.namechange()
	names = {}
	names_version = names_version + 1
end

function CMD.options(t)
	opts = t
end

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			-- e.g. a call to a stale handle that this agent took over: an
			-- error reply, never a caller left waiting
			error(sformat("clusteragent: unknown command (%s)", tostring(cmd)))
		end
		f(...)
		if session ~= 0 then
			skynet.ret()
		end
	end)
	opts = skynet.call(clusterd, "lua", "options")
	if not socket.start(fd) then
		-- no agentexit: newservice returns nil, and clusterd counts us out
		skynet.exit()
		return
	end
	socket.nodelay(fd)
	skynet.fork(read_loop)
end)
