-- skynet.datasheet: the reader side of datasheets.
--
--   datasheet.query(name) -> root proxy (the same object on every call)
--
-- Requiring it looks up the `datasheet` cell in an init function, which
-- waits until some service has required skynet.datasheet.builder. The first
-- successful query of a name forks a loop that waits (monitor) for newer
-- versions and re-points this service's proxies to each in place, then gives
-- the old version back (release). A failed query is not remembered: a later
-- query of a name created in between succeeds. When this service's Lua state
-- closes, the cell is told (close) and drops every reference it held.
local skynet = require "skynet"
local service = require "skynet.service"
local core = require "skynet.datasheet.core"

local datasheet = {}
local address
local queried = false -- the cell may hold references for this service

-- name -> root proxy. Its finaliser runs when the Lua state closes.
local roots = setmetatable({}, {
	__gc = function()
		if queried then
			skynet.send(address, "lua", "close")
		end
	end,
})
local loading = {} -- name -> { tokens..., err = text } while the first query runs

skynet.init(function()
	address = service.query "datasheet"
end)

local function follow(name, root, ptr)
	while true do
		local ok, newptr = pcall(skynet.call, address, "lua", "monitor", ptr)
		if not ok then
			skynet.error(string.format("warn: datasheet: %s stops following updates: %s",
				tostring(name), tostring(newptr)))
			return
		end
		core.update(root, newptr)
		skynet.send(address, "lua", "release", ptr)
		ptr = newptr
	end
end

function datasheet.query(name)
	local root = roots[name]
	if root then
		return root
	end
	local waiters = loading[name]
	if waiters then
		local token = {}
		waiters[#waiters + 1] = token
		skynet.wait(token)
		if waiters.err then
			error(waiters.err, 0)
		end
		return roots[name]
	end
	waiters = {}
	loading[name] = waiters
	queried = true
	local ok, ptr = pcall(skynet.call, address, "lua", "query", name)
	loading[name] = nil
	if ok then
		root = core.new(ptr)
		roots[name] = root
		skynet.fork(follow, name, root, ptr)
		-- Let the loop ask for the next version before this returns: an update
		-- made afterwards by this service is then seen as soon as it returns.
		skynet.yield()
	else
		waiters.err = ptr
	end
	for _, token in ipairs(waiters) do
		skynet.wakeup(token)
	end
	if not ok then
		error(ptr, 0)
	end
	return root
end

return datasheet
