-- datacenterd: a tree of values shared through the global name DATACENTER
-- (started by bootstrap in standalone mode). Requests, served one at a time
-- in arrival order (no handler blocks):
--   QUERY k1 .. kn        -> the value at the path (nil when a key is missing)
--   UPDATE k1 .. kn v     -> stores v (nil deletes), replies the previous value
--                            (no value at all when v filled an empty slot)
--   WAIT k1 .. kn         -> the value, at once if non-nil, else when a set
--                            fills exactly that path
--
-- Data. `database` is a plain Lua tree; values arrive unpacked, so tables are
-- this service's own copies. UPDATE creates missing intermediate tables (not
-- for a delete: deleting under a missing path changes nothing). A non-table
-- on the path is an error (the caller sees "call failed").
--
-- Waiters. A second tree mirrors the waited paths: a "queue" node at a waited
-- path holds the response closures of its waiters; "branch" nodes sit above
-- queue nodes. Invariant: a queue node's path holds nil in `database`, and
-- every branch has at least one queue below it (empty branches are pruned).
-- A WAIT whose path crosses a queue node, or ends on a branch node, fails.
-- After an UPDATE that stores a non-nil value at path P:
--   * a queue at P is woken with the value (only when the slot was empty:
--     the invariant makes that the only case);
--   * a queue at a proper prefix of P is failed ("call failed"): its slot got
--     a table created under it, not a value of its own;
--   * when the value is a table and P is a branch node, every queue below P
--     whose relative path the table fills (non-nil) is woken with that part;
--     queues whose paths it does not fill keep waiting.
-- A waiter that exits leaves its closure queued; answering it later is a
-- no-op (the closure knows its caller is dead).
local skynet = require "skynet"

local select = select
local type = type
local next = next

local database = {}
local waiters = {} -- key -> node; node = { queue = { resp... } } or { branch = { key -> node } }
local command = {}

-- The leading keys up to the first nil (a nil key ends a QUERY/WAIT path).
local function path_of(...)
	local keys = {}
	for i = 1, select("#", ...) do
		local k = select(i, ...)
		if k == nil then
			break
		end
		keys[i] = k
	end
	return keys
end

function command.QUERY(...)
	local v = database
	for i = 1, select("#", ...) do
		local k = select(i, ...)
		if k == nil then
			break
		end
		if v == nil then
			return nil
		end
		v = v[k] -- a number raises; a string indexes the string library
	end
	return v
end

-- Stores value at keys[1..n]; returns the previous value.
local function store(keys, n, value)
	local t = database
	for i = 1, n - 1 do
		local k = keys[i]
		local nxt = t[k]
		if nxt == nil then
			if value == nil then
				return nil -- deleting below a missing slot: nothing to do
			end
			nxt = {}
			t[k] = nxt
		elseif type(nxt) ~= "table" then
			error(string.format("datacenterd: set crosses a %s at key %d (%s)", type(nxt), i,
				tostring(k)))
		end
		t = nxt
	end
	local k = keys[n]
	local old = t[k]
	t[k] = value
	return old
end

local function answer(queue, ok, value)
	for i = 1, #queue do
		queue[i](ok, value)
	end
end

-- Wakes the queues below branch whose relative paths value fills; drops the
-- emptied nodes. Returns true when branch is empty afterwards.
local function fill(branch, value)
	for k, node in next, branch do
		local v = value[k]
		if v ~= nil then
			if node.queue then
				branch[k] = nil
				answer(node.queue, true, v)
			elseif type(v) == "table" and fill(node.branch, v) then
				branch[k] = nil
			end
		end
	end
	return next(branch) == nil
end

-- Removes now-empty branch nodes along trail (a list of {parent, key}).
local function prune(trail)
	for i = #trail, 1, -1 do
		local parent, k = trail[i][1], trail[i][2]
		local node = parent[k]
		if node ~= nil then
			if node.queue or next(node.branch) ~= nil then
				return
			end
			parent[k] = nil
		end
	end
end

local function wake(keys, n, value)
	local level = waiters
	local trail = {}
	for i = 1, n do
		local k = keys[i]
		local node = level[k]
		if node == nil then
			return
		end
		trail[#trail + 1] = { level, k }
		if node.queue then
			level[k] = nil
			if i == n then
				answer(node.queue, true, value)
			else
				answer(node.queue, false)
			end
			prune(trail)
			return
		end
		if i == n then
			if type(value) == "table" and fill(node.branch, value) then
				level[k] = nil
				prune(trail)
			end
			return
		end
		level = node.branch
	end
end

function command.UPDATE(...)
	local n = select("#", ...)
	if n == 0 then
		error "datacenterd: set needs a key"
	end
	local keys = { ... }
	local value = nil
	if n > 1 then
		value = keys[n]
		keys[n] = nil
		n = n - 1
	end
	for i = 1, n do
		local k = keys[i]
		if k == nil or k ~= k then
			error(string.format("datacenterd: set key %d is %s", i, tostring(k)))
		end
	end
	local old = store(keys, n, value)
	if value ~= nil then
		wake(keys, n, value)
		if old == nil then
			return -- filled an empty slot: the reply carries no value
		end
	end
	return old
end

local function enqueue(keys, resp_factory)
	local n = #keys -- at least 1: with no key the whole tree is returned at once
	local level = waiters
	for i = 1, n - 1 do
		local k = keys[i]
		local node = level[k]
		if node == nil then
			node = { branch = {} }
			level[k] = node
		elseif node.queue then
			error(string.format("datacenterd: wait path crosses a pending wait at key %d (%s)", i,
				tostring(k)))
		end
		level = node.branch
	end
	local k = keys[n]
	local node = level[k]
	if node == nil then
		node = { queue = {} }
		level[k] = node
	elseif node.branch then
		error(string.format("datacenterd: wait ends on a path others wait below (%s)", tostring(k)))
	end
	node.queue[#node.queue + 1] = resp_factory()
end

local function serve_wait(...)
	local v = command.QUERY(...)
	if v ~= nil then
		skynet.retpack(v)
		return
	end
	enqueue(path_of(...), skynet.response)
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		if cmd == "WAIT" then
			return serve_wait(...)
		end
		local f = command[cmd]
		if f == nil then
			error(string.format("datacenterd: unknown command (%s)", tostring(cmd)))
		end
		skynet.retpack(f(...))
	end)
end)
