-- skynet.mqueue (deprecated: use skynet.queue): serial handling of the
-- messages of protocol "queue" (PTYPE_QUEUE, packed with skynet.pack).
--
--   mqueue.register(f)    Once per service. From then on one dispatcher
--                         coroutine runs f(...) for every queue message, in
--                         arrival order, one at a time even when f blocks.
--                         Messages that arrive before register wait for it.
--   mqueue.call(addr, ...) Blocks; returns f's results, or raises f's error
--                         text (prefixed with the caller's position).
--   mqueue.send(addr, ...) No reply. If f raises or returns a value, an
--                         error is logged and dispatch goes on.
--   mqueue.size()         Messages queued and not started yet.
--
-- Each request's reply is taken with skynet.response when it arrives, so
-- the request coroutine ends cleanly (no "forgot response" log) and a
-- caller that exits before its turn is simply not answered. The reply is
-- the packed results of pcall(f, ...); results that cannot be packed turn
-- into an error for the caller.
local skynet = require "skynet"

local tpack = table.pack
local tunpack = table.unpack
local pcall = pcall
local select = select

local mqueue = {}

local queue = {} -- FIFO of { resp | false, source, args }
local head, tail = 1, 0
local handler = nil -- f of register
local idle = nil -- the dispatcher's wait token while the queue is empty

local function pack_result(...)
	local ok, msg, sz = pcall(skynet.pack, ...)
	if ok then
		return msg, sz
	end
	return skynet.pack(false, "mqueue: can't pack the results (" .. tostring(msg) .. ")")
end

skynet.register_protocol {
	name = "queue",
	id = skynet.PTYPE_QUEUE,
	pack = skynet.pack,
	unpack = skynet.unpack,
	dispatch = function(session, source, ...)
		tail = tail + 1
		queue[tail] = {
			resp = session ~= 0 and skynet.response(pack_result),
			source = source,
			args = tpack(...),
		}
		local token = idle
		if token then
			idle = nil
			skynet.wakeup(token)
		end
	end,
}

local function report_send(source, ok, ...)
	if not ok then
		skynet.error(string.format("mqueue: a message sent by %s raised: %s",
			skynet.address(source), tostring((...))))
	elseif select("#", ...) > 0 and (...) ~= nil then
		skynet.error(string.format("mqueue: a message sent by %s returned a value (dropped)",
			skynet.address(source)))
	end
end

local function dispatch_loop()
	while true do
		if head > tail then
			head, tail = 1, 0
			local token = coroutine.running()
			idle = token
			skynet.wait(token)
		else
			local m = queue[head]
			queue[head] = nil
			head = head + 1
			local args = m.args
			if m.resp then
				m.resp(true, pcall(handler, tunpack(args, 1, args.n)))
			else
				report_send(m.source, pcall(handler, tunpack(args, 1, args.n)))
			end
		end
	end
end

function mqueue.register(f)
	assert(handler == nil)
	if type(f) ~= "function" then
		error(string.format("mqueue.register: f must be a function (%s)", type(f)), 2)
	end
	handler = f
	skynet.fork(dispatch_loop)
end

function mqueue.call(addr, ...)
	local r = tpack(skynet.call(addr, "queue", ...))
	if not r[1] then
		error(r[2], 2)
	end
	return tunpack(r, 2, r.n)
end

function mqueue.send(addr, ...)
	return skynet.send(addr, "queue", ...)
end

function mqueue.size()
	return tail - head + 1
end

return mqueue
