-- clustersender <node> <nodename> <address>: the one connection of this node
-- to the cluster node <node>, and that node's session counter.
--
-- The connection is opened on demand: by `connect` (clusterd, first use), by
-- any request while there is none, and at once after changenode. Each open
-- is one attempt bounded by __connecttimeout; after a failure, requests in
-- the next RETRY_MIN_CS .. RETRY_MAX_CS (doubling) fail at once instead of
-- reconnecting, so a down node costs one attempt per back-off period.
-- Concurrent requests wait for the attempt in progress and then write in
-- their arrival order, so the frames of one connection leave in the order
-- the requests came (a multi-part message is written whole).
--
-- State:
--   session    the next session (1..0x7fffffff, wraps to 1). It belongs to
--              the sender, not to a connection: it keeps counting across
--              reconnects, so a late reply can never match a new call.
--   pending    session -> { resp = response closure, addr = address } for
--              each call written and not answered; npending counts them.
--   partial    session -> slices of a multi-part reply (only for pending
--              sessions); partial_bytes counts the bytes of all of them,
--              which may not pass __maxmessage: a peer that starts replies
--              and never finishes them costs at most that much, then its
--              connection is dropped and every waiting call fails.
--   probe      the session of the heartbeat probe in flight, or nil.
--   due        the waiting calls that have a deadline, as a binary min-heap
--              on p.due (cs of skynet.now()); p.at is a call's index in it,
--              so an answered call leaves it in O(log n). One timer is
--              armed for the earliest deadline (timer_due).
--
-- Deadlines. Every call has one: the caller's own (req's ti, cs: the
-- caller gave up by then, the entry is only freed) or __calltimeout seconds
-- (default 10; false: none). A call past its deadline fails with a logged
-- reason, whatever the connection does: the liveness check below only
-- notices a peer that sends nothing, and a peer may answer every heartbeat
-- and never the call.
--
-- Liveness. While calls are waiting, a timer looks at the connection every
-- __heartbeat seconds. If nothing came in for that long, it writes a probe:
-- a name query for "" (address 0), which any peer answers at once without
-- bothering a service. If nothing at all came in for __deadtime seconds
-- (counted from the last frame received or from when calls started waiting,
-- whichever is later), the peer is declared dead: the connection is closed
-- and every waiting call fails. With __heartbeat false no probe is sent and
-- the timer looks every __deadtime / 4. Calls may also carry their own time
-- limit (req's ti, in cs: the entry is dropped then).
--
-- Tracing. A request or push from a traced coroutine is preceded by a trace
-- frame. The first one on a connection is preceded, once, by a question: a
-- name query for TRACE_HELLO with session 0 (it takes no session, so every
-- later frame is byte for byte what skynet's sender writes). A skywheel
-- agent answers it with success and TRACE_HELLO, session 0; a skynet peer
-- answers "name not found" (an error with session 0, which is ignored). Until
-- a yes, trace frames are skynet's: "(<nodename>-<node>-<n>)<tag>", before
-- calls only. After a yes they carry "<trace id> <span id>" (the span of the
-- request here, so the peer's spans have a parent), before pushes too.
-- A node that traces (config trace_output or trace_sample set) asks as part
-- of connecting and waits for the answer (TRACE_ASK_CS at most, while the
-- requests queue as they do during the connect), so that its first traced
-- request already carries its span; other nodes ask at their first traced
-- request and do not wait (that request goes out with skynet's frame).
--   trace_asked   the question was written on this connection.
--   peer_spans    the peer said yes.
--   trace_answer  the token of the connect waiting for the answer.
--
-- Lines logged once per call or per answer (failed calls, late answers) go
-- through one skynet.loglimit limiter; lines about the connection are rare.
--
-- Commands (lua protocol): req(address, msg, sz [, ti]) replies the raw
-- reply bytes or an error; push(address, msg, sz); connect() -> ok, reason;
-- changenode(address | false); options(tbl).
local skynet = require "skynet"
local socket = require "skynet.socket"
local core = require "skynet.cluster.core"
local loglimit = require "skynet.loglimit"
local tracing = require "skynet.tracing"

local sformat = string.format
local tconcat = table.concat

local node, nodename, address = ...

local RETRY_MIN_CS <const> = 10
local RETRY_MAX_CS <const> = 200
local PROBE <const> = {}
local TRACE_HELLO <const> = "skywheel:trace/1"
local TRACE_ASK_CS <const> = 100

local opts = {
	connecttimeout = 5, heartbeat = 1, deadtime = 10, calltimeout = 10,
	maxmessage = 16 * 1024 * 1024,
}
local host, port -- the current target; host false: the node is down
local generation = 0 -- bumped by changenode
local fd -- the connection, when there is one
local connecting -- tokens waiting for the attempt in progress
local last_error = "not connected"
local retry_at, retry_cs = 0, 0
local session = 1
local pending, npending = {}, 0
local partial = {}
local partial_bytes = 0
local probe
local due = {}
local timer_due
local last_rx, busy_since = 0, 0
local ticking = false
local trace_asked, peer_spans = false, false
local trace_answer
local trace_eager = (skynet.getenv "trace_output" or "") ~= ""
	or (tonumber(skynet.getenv "trace_sample") or 0) > 0
-- The lines that come once per call or per answer (failed calls, late
-- answers): what the peer or its absence causes, at a bounded rate.
local log = loglimit.new()

local function target(addr)
	if addr == false or addr == "false" then
		host, port = false, nil
		return
	end
	local h, p = addr:match "^%[(.+)%]:(%d+)$"
	if h == nil then
		h, p = addr:match "^([^:]+):(%d+)$"
	end
	host, port = h, tonumber(p)
end

local function describe(addr)
	if addr == 0 then
		return "the name query"
	elseif type(addr) == "number" then
		return skynet.address(addr)
	end
	return tostring(addr)
end

local function where()
	if host then
		return sformat("cluster node [%s] (%s:%s)", node, host, tostring(port))
	end
	return sformat("cluster node [%s]", node)
end

---------------------------------------------------------------- deadlines

local function swap(i, j)
	local a, b = due[j], due[i]
	due[i], due[j] = a, b
	a.at, b.at = i, j
end

local function sift_up(i)
	while i > 1 do
		local parent = i // 2
		if due[parent].due <= due[i].due then
			return
		end
		swap(i, parent)
		i = parent
	end
end

local function sift_down(i)
	local n = #due
	while true do
		local c = 2 * i
		if c > n then
			return
		end
		if c < n and due[c + 1].due < due[c].due then
			c = c + 1
		end
		if due[i].due <= due[c].due then
			return
		end
		swap(i, c)
		i = c
	end
end

local function unschedule(p)
	local i = p.at
	if i == nil then
		return
	end
	p.at = nil
	local n = #due
	local last = due[n]
	due[n] = nil
	if i < n then
		due[i] = last
		last.at = i
		sift_up(i)
		sift_down(last.at)
	end
end

local expire

-- Arms the deadline timer for `at` unless one fires no later.
local function arm(at)
	if timer_due and timer_due <= at then
		return
	end
	timer_due = at
	skynet.timeout(math.max(0, at - skynet.now()), function()
		expire(at)
	end)
end

local function schedule(p, at)
	p.due = at
	local i = #due + 1
	due[i] = p
	p.at = i
	sift_up(i)
	arm(at)
end

-- The bytes of s's unfinished reply no longer count.
local function forget_partial(s)
	local pt = partial[s]
	if pt then
		partial[s] = nil
		partial_bytes = partial_bytes - pt.got
	end
end

-- Takes the waiting call s out of every table; returns its entry.
local function settle(s)
	local p = pending[s]
	pending[s] = nil
	npending = npending - 1
	forget_partial(s)
	unschedule(p)
	return p
end

-- Drops connection id: every call waiting on it fails.
local function drop(id, reason)
	if fd ~= id or id == nil then
		return
	end
	fd = nil
	partial, partial_bytes = {}, 0
	probe = nil
	trace_asked, peer_spans = false, false
	local p, n = pending, npending
	pending, npending = {}, 0
	due = {}
	for _, v in pairs(p) do
		if v ~= PROBE then
			v.at = nil
			v.resp(false)
		end
	end
	skynet.error(sformat("%s: %s%s", where(), reason,
		n > 0 and sformat(", %d waiting calls failed", n) or ""))
	skynet.fork(socket.close, id)
end

local function late(s)
	log("%s: unknown session : %d", where(), s)
end

local function finish(s, ok, data)
	local p = settle(s)
	if ok then
		p.resp(true, data)
	else
		log("%s: call to %s failed: %s", where(), describe(p.addr), data)
		p.resp(false)
	end
end

-- The deadline timer armed for `at` fired: fails the calls past theirs.
function expire(at)
	if timer_due == at then
		timer_due = nil
	end
	local now = skynet.now()
	local p = due[1]
	while p and p.due <= now do
		settle(p.session)
		if not p.quiet then
			log("%s: call to %s failed: no answer in %s s (__calltimeout)", where(),
				describe(p.addr), tostring(p.timeout))
		end
		p.resp(false)
		p = due[1]
	end
	if p then
		arm(p.due)
	end
end

-- One response body. Raises on a malformed one (the connection is dropped).
local function dispatch(body)
	local s, ok, data, padding = core.unpackresponse(body)
	if s == 0 then -- no call has session 0: maybe the answer to the trace question
		peer_spans = peer_spans or (ok and trace_asked and padding == nil
			and data == skynet.packstring(TRACE_HELLO))
		if trace_answer then -- yes, or (most likely) a skynet peer's "name not found"
			skynet.wakeup(trace_answer)
		elseif not peer_spans and not (trace_asked and not ok and data == "name not found") then
			late(s)
		end
		return
	end
	local p = pending[s]
	if p == PROBE then
		pending[s] = nil
		probe = nil
		return
	end
	if p == nil then
		return late(s)
	end
	if padding == nil then
		return finish(s, ok, data)
	end
	local pt = partial[s]
	if type(data) == "number" then -- begin: the total
		forget_partial(s)
		if data > opts.maxmessage then
			return finish(s, false, sformat("reply of %d bytes is over __maxmessage (%d)", data,
				opts.maxmessage))
		end
		partial[s] = { total = data, got = 0 }
		return
	end
	if pt == nil then
		return late(s)
	end
	pt.got = pt.got + #data
	partial_bytes = partial_bytes + #data
	if pt.got > pt.total then
		return finish(s, false, sformat("multi-part reply longer than announced (%d)", pt.total))
	end
	if partial_bytes > opts.maxmessage then
		error(sformat("more than %d bytes of unfinished replies (__maxmessage)", opts.maxmessage),
			0)
	end
	pt[#pt + 1] = data
	if not padding then
		forget_partial(s)
		if pt.got ~= pt.total then
			return finish(s, false, sformat("multi-part reply of %d bytes, %d announced", pt.got,
				pt.total))
		end
		return finish(s, true, tconcat(pt))
	end
end

local function reader(id)
	while true do
		local h = socket.read(id, 2)
		if not h then
			break
		end
		local len = (h:byte(1) << 8) | h:byte(2)
		local body = socket.read(id, len)
		if not body then
			break
		end
		last_rx = skynet.now()
		local ok, err = pcall(dispatch, body)
		if not ok then
			return drop(id, "bad response from the peer: " .. tostring(err))
		end
	end
	drop(id, "connection closed by the peer")
end

-- One attempt bounded by the connect timeout: id, or nil, reason.
local function open(h, p)
	local token = {}
	local state = { done = false }
	skynet.fork(function()
		local id, err = socket.open(h, p)
		if state.done then -- given up already
			if id then
				socket.close(id)
			end
			return
		end
		state.done = true
		state.id, state.err = id, err
		skynet.wakeup(token)
	end)
	skynet.sleep(math.ceil(opts.connecttimeout * 100), token)
	if not state.done then
		state.done = true
		return nil, sformat("connect timeout (%s s)", tostring(opts.connecttimeout))
	end
	if state.id == nil then
		return nil, "connect failed: " .. tostring(state.err)
	end
	return state.id
end

-- The trace question (see Tracing), one frame with session 0.
local function trace_question()
	trace_asked = true
	return core.packpush(0, session, skynet.packstring(TRACE_HELLO))
end

-- Ask the new connection the trace question and wait for the answer.
local function ask_trace()
	socket.write(fd, trace_question())
	trace_answer = {}
	skynet.sleep(TRACE_ASK_CS, trace_answer)
	trace_answer = nil
end

-- true when connected, else false, reason. At most one attempt runs; the
-- others wait for it and are resumed in arrival order.
local function connect()
	if fd then
		return true
	end
	if connecting then
		local token = {}
		connecting[#connecting + 1] = token
		skynet.wait(token)
		if fd then
			return true
		end
		return false, last_error
	end
	if not host then
		return false, "the node is down (set to false)"
	end
	local now = skynet.now()
	if now < retry_at then
		return false, sformat("%s (next attempt in %.2f s)", last_error, (retry_at - now) / 100)
	end
	connecting = {}
	local id, err
	repeat
		local gen = generation
		if not host then
			err = "the node is down (set to false)"
			break
		end
		id, err = open(host, port)
		if id and gen ~= generation then -- re-targeted meanwhile: go to the new address
			skynet.fork(socket.close, id)
			id = nil
		end
	until gen == generation
	if id then
		fd = id
		trace_asked, peer_spans = false, false
		socket.nodelay(id)
		last_rx = skynet.now()
		retry_cs, retry_at = 0, 0
		skynet.fork(reader, id)
		if trace_eager then
			ask_trace()
		end
	else
		last_error = err
		retry_cs = retry_cs == 0 and RETRY_MIN_CS or math.min(retry_cs * 2, RETRY_MAX_CS)
		retry_at = skynet.now() + retry_cs
		skynet.error(sformat("%s: %s", where(), err))
	end
	local w = connecting
	connecting = nil
	for _, token in ipairs(w) do
		skynet.wakeup(token)
	end
	return fd ~= nil, err
end

local function write(data)
	if not socket.write(fd, data) then
		drop(fd, "write failed")
	end
end

-- cs between two looks at a connection with calls waiting.
local function tick_cs()
	local every = opts.heartbeat or opts.deadtime / 4
	return math.max(1, math.ceil(every * 100))
end

local function tick()
	ticking = false
	if fd == nil or npending == 0 then
		return
	end
	local now = skynet.now()
	local silence = now - math.max(last_rx, busy_since)
	if silence >= math.ceil(opts.deadtime * 100) then
		drop(fd, sformat("no answer for %.2f s, the peer is not responding", silence / 100))
		return
	end
	if opts.heartbeat and probe == nil and silence >= math.ceil(opts.heartbeat * 100) then
		probe = session
		session = session >= 0x7fffffff and 1 or session + 1
		pending[probe] = PROBE
		write((core.packrequest(0, probe, skynet.packstring "")))
	end
	ticking = true
	skynet.timeout(tick_cs(), tick)
end

local function start_ticking()
	if not ticking and fd and npending > 0 then
		ticking = true
		skynet.timeout(tick_cs(), tick)
	end
end

local function raw(data)
	return data
end

-- The frames that go before a request or push (nexts: the session counter
-- after it) of the running coroutine: "" when it is not traced. Raises when
-- the tag is too long for a trace frame. Call while connected.
local function trace_frames(nexts, is_push)
	local tag = skynet.tracetag()
	if not tag then
		return ""
	end
	local ask = ""
	if not trace_asked then
		ask = trace_question()
	end
	if peer_spans then
		local trace_id, span = tracing.id()
		return ask .. core.packtrace(trace_id .. " " .. span)
	end
	if is_push then -- skynet's sender traces calls only
		return ask
	end
	if tag:sub(1, 1) ~= "(" then
		tag = sformat("(%s-%s-%d)%s", nodename, node, nexts, tag)
	end
	return ask .. core.packtrace(tag)
end

local CMD = {}

function CMD.req(addr, msg, sz, ti)
	local resp = skynet.response(raw)
	local s = session
	local ok, frame, nexts, parts = pcall(core.packrequest, addr, s, msg, sz)
	if not ok then
		skynet.error(sformat("%s: bad request: %s", where(), frame))
		return resp(false)
	end
	session = nexts
	local connected, err = connect()
	if not connected then
		log("%s: call to %s failed: %s", where(), describe(addr), err)
		return resp(false)
	end
	local good, tframe = pcall(trace_frames, nexts, false)
	if not good then
		skynet.error(sformat("%s: %s", where(), tframe))
		return resp(false)
	end
	frame = tframe .. frame
	local now = skynet.now()
	if npending == 0 then
		busy_since = now
	end
	local p = { resp = resp, addr = addr, session = s }
	pending[s] = p
	npending = npending + 1
	if ti then -- the caller gives up then: the entry is only freed
		p.quiet = true
		schedule(p, now + ti)
	elseif opts.calltimeout then
		p.timeout = opts.calltimeout
		schedule(p, now + math.ceil(opts.calltimeout * 100))
	end
	if parts then
		write(frame .. tconcat(parts))
	else
		write(frame)
	end
	start_ticking()
end

function CMD.push(addr, msg, sz)
	local ok, frame, nexts, parts = pcall(core.packpush, addr, session, msg, sz)
	if not ok then
		skynet.error(sformat("%s: bad push: %s", where(), frame))
		return
	end
	session = nexts
	local connected, err = connect()
	if not connected then
		log("%s: push to %s dropped: %s", where(), describe(addr), err)
		return
	end
	local good, tframe = pcall(trace_frames, nexts, true)
	if not good then
		skynet.error(sformat("%s: %s", where(), tframe))
		return
	end
	frame = tframe .. frame
	if parts then
		write(frame .. tconcat(parts))
	else
		write(frame)
	end
end

function CMD.connect()
	skynet.retpack(connect())
end

function CMD.changenode(addr)
	generation = generation + 1
	target(addr)
	retry_cs, retry_at = 0, 0
	last_error = "not connected"
	if fd then
		drop(fd, sformat("re-targeted to %s", tostring(addr)))
	end
	if host and not connecting then
		skynet.fork(connect)
	end
end

function CMD.options(t)
	for k, v in pairs(t) do
		opts[k] = v
	end
	local session_ = skynet.context()
	if session_ and session_ ~= 0 then
		skynet.retpack(true)
	end
	start_ticking()
end

target(address)

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			error(sformat("clustersender: unknown command (%s)", tostring(cmd)))
		end
		f(...)
	end)
end)
