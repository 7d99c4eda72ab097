-- skynet.cluster: calls and sends to services of other nodes over TCP.
--
--   local cluster = require "skynet.cluster"
--   cluster.call(node, address, ...)      -> the remote reply (raises on failure)
--   cluster.timeout_call(ti, node, address, ...) -> true, reply... | false, "timeout"
--   cluster.send(node, address, ...)      never blocks
--   cluster.open(port [, maxclient]) -> host, port | cluster.open(node_name)
--   cluster.reload([tbl])   cluster.proxy(node, address) / proxy("node@name")
--   cluster.snax(node, type [, handle])   cluster.register(name [, addr])
--   cluster.unregister(name)  cluster.query(node, name)  cluster.get_sender(node)
--
-- Requiring the module adds an init step that finds or starts the unique
-- service clusterd. Each remote node has one sender service (asked of
-- clusterd on the first use from this service, then kept here in
-- `senders`). Until a node's sender is known, the calls and sends of this
-- service for that node wait in a queue (task_queue[node]) that one resolver
-- coroutine empties in order once clusterd answers: a queued call is
-- resumed and writes its request before the resolver moves to the next
-- item, so requests and pushes reach the sender in the order they were
-- made. Pushes are queued packed, as strings.
--
-- Failures raise an error ending in "call failed". When the node cannot be
-- reached at all the text says why first ("cluster node [db] is absent:
-- call failed"); a failure reported by the sender (remote error, lost
-- connection, dead peer, bad address) is the plain "call failed" of
-- skynet.call, and the sender logs the node, the address and the reason.
local skynet = require "skynet"

local sformat = string.format

local clusterd
local cluster = {}
local senders = {} -- node -> sender handle
local task_queue = {} -- node -> items waiting for the sender

local function failure(reason)
	error(sformat("%s: call failed", reason), 0)
end

-- Empties node's queue once clusterd has answered (a forked coroutine).
local function resolve(node)
	local q = task_queue[node]
	local ok, s, reason = pcall(skynet.call, clusterd, "lua", "sender", node)
	if not ok then
		s, reason = nil, "clusterd failed (" .. tostring(s) .. ")"
	end
	if s == nil and task_queue[node] == q then
		-- a call made after this failure is reported gets a new attempt
		task_queue[node] = nil
	end
	local i = 1
	while q[i] do
		local item = q[i]
		q[i] = false
		i = i + 1
		if item.push then
			if s then
				skynet.send(s, "lua", "push", item.address, item.msg)
			else
				skynet.error(sformat("cluster.send to [%s] %s dropped: %s", node,
					tostring(item.address), reason))
			end
		else
			item.sender, item.reason = s, reason
			item.resolver = {}
			if skynet.wakeup(item) then
				-- the caller writes its request, then resumes us (skynet.wakeup
				-- runs us only after the caller blocks in its call)
				skynet.wait(item.resolver)
			end
		end
	end
	if s then
		task_queue[node] = nil
		senders[node] = s
	end
end

local function enqueue(node, item)
	local q = task_queue[node]
	if q == nil then
		q = {}
		task_queue[node] = q
		skynet.fork(resolve, node)
	end
	q[#q + 1] = item
end

-- The sender of node for a call; waits at most ti cs (nil: no limit).
-- Returns sender, item (item.resolver must be woken once the request is
-- written), or nil when ti ran out.
local function sender_for_call(node, ti)
	local s = senders[node]
	if s then
		return s
	end
	if type(node) ~= "string" then
		error(sformat("cluster: node name must be a string (%s)", tostring(node)), 3)
	end
	local item = {}
	enqueue(node, item)
	if ti then
		if skynet.sleep(ti, item) ~= "BREAK" then
			item.cancelled = true
			return nil
		end
	else
		skynet.wait(item)
	end
	if item.sender == nil then
		skynet.wakeup(item.resolver)
		failure(item.reason)
	end
	return item.sender, item
end

function cluster.call(node, address, ...)
	local s, item = sender_for_call(node)
	if item then
		-- resumes the resolver once this call is written (see resolve)
		skynet.wakeup(item.resolver)
	end
	return skynet.call(s, "lua", "req", address, skynet.pack(...))
end

-- cluster.call with a deadline of ti cs (integer), the shape of
-- skynet.timeout_call: true, results... or false, "timeout". The wait for
-- the node's sender counts. The sender forgets the call a little after the
-- deadline, so a peer that never answers leaves nothing behind.
function cluster.timeout_call(ti, node, address, ...)
	if math.type(ti) ~= "integer" then
		error(sformat("cluster.timeout_call: time must be an integer of cs (%s)", tostring(ti)), 2)
	end
	local deadline = skynet.now() + ti
	local s, item = sender_for_call(node, ti)
	if s == nil then
		return false, "timeout"
	end
	if item then
		skynet.wakeup(item.resolver)
	end
	local left = deadline - skynet.now()
	if left <= 0 then
		return false, "timeout"
	end
	local timer = require "skynet.timer"
	local msg, sz = skynet.pack(...)
	return timer.timeout_call(left, s, "lua", "req", address, msg, sz, left + 100)
end

function cluster.send(node, address, ...)
	local s = senders[node]
	if s then
		return skynet.send(s, "lua", "push", address, skynet.pack(...))
	end
	if type(node) ~= "string" then
		error(sformat("cluster: node name must be a string (%s)", tostring(node)), 2)
	end
	enqueue(node, { push = true, address = address, msg = skynet.packstring(...) })
end

function cluster.open(port, maxclient)
	if type(port) == "string" then
		return skynet.call(clusterd, "lua", "listen", port, nil, maxclient)
	end
	if math.type(port) ~= "integer" then
		error(sformat("cluster.open: port must be an integer or a node name (%s)", tostring(port)), 2)
	end
	return skynet.call(clusterd, "lua", "listen", "0.0.0.0", port, maxclient)
end

function cluster.reload(config)
	skynet.call(clusterd, "lua", "reload", config)
end

function cluster.proxy(node, name)
	return skynet.call(clusterd, "lua", "proxy", node, name)
end

function cluster.snax(node, name, address)
	local snax = require "skynet.snax"
	if not address then
		address = cluster.call(node, ".service", "QUERY", "snaxd", name)
	end
	local handle = skynet.call(clusterd, "lua", "proxy", node, address)
	return snax.bind(handle, name)
end

function cluster.register(name, addr)
	assert(type(name) == "string", "cluster.register: name must be a string")
	assert(addr == nil or type(addr) == "number", "cluster.register: address must be a number")
	return skynet.call(clusterd, "lua", "register", name, addr or skynet.self())
end

function cluster.unregister(name)
	assert(type(name) == "string", "cluster.unregister: name must be a string")
	return skynet.call(clusterd, "lua", "unregister", name)
end

function cluster.query(node, name)
	return cluster.call(node, 0, name)
end

function cluster.get_sender(node)
	local s = senders[node]
	if s then
		return s
	end
	s = skynet.call(clusterd, "lua", "sender", node)
	if s then
		senders[node] = s
	end
	return s
end

skynet.init(function()
	clusterd = skynet.uniqueservice "clusterd"
end)

return cluster
