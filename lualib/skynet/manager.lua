-- skynet.manager: service management functions added to the skynet table.
-- Returns skynet.
local skynet = require "skynet"
local c = require "skynet.core"

function skynet.launch(...)
	return c.addresscommand("LAUNCH", table.concat({ ... }, " "))
end

function skynet.kill(name)
	if type(name) == "number" then
		skynet.send(".launcher", "lua", "REMOVE", name, true)
		name = skynet.address(name)
	elseif type(name) == "string" and name:sub(1, 1) == ":" then
		local handle = tonumber(name:sub(2), 16)
		if handle then
			skynet.send(".launcher", "lua", "REMOVE", handle, true)
		end
	end
	c.command("KILL", name)
end

-- Stops every service; the process then exits with status (default 0).
function skynet.abort(status)
	if status == nil then
		c.command "ABORT"
		return
	end
	if math.type(status) ~= "integer" or status < 0 or status > 255 then
		error("skynet.abort: bad exit status (" .. tostring(status) .. ")", 2)
	end
	c.command("ABORT", tostring(status))
end

-- A global name (no leading '.') goes to .cslave; returns false for a local one.
local function globalname(name, handle)
	local first = name:sub(1, 1)
	assert(first ~= ":", "skynet.register: bad name (" .. name .. ")")
	if first == "." then
		return false
	end
	assert(#name < 16, "skynet.register: global name too long (" .. name .. ")")
	assert(tonumber(name) == nil, "skynet.register: global name is a number (" .. name .. ")")
	local harbor = require "skynet.harbor"
	harbor.globalname(name, handle)
	return true
end

function skynet.register(name)
	if not globalname(name) then
		c.command("REG", name)
	end
end

function skynet.name(name, handle)
	if not globalname(name, handle) then
		c.command("NAME", name .. " " .. skynet.address(handle))
	end
end

function skynet.forward_type(map, start_func)
	local dispatch_message = skynet.dispatch_message
	c.callback(function(ptype, msg, sz, ...)
		local prototype = map[ptype]
		if prototype then
			dispatch_message(prototype, msg, sz, ...)
		else
			local ok, err = pcall(dispatch_message, ptype, msg, sz, ...)
			c.trash(msg, sz)
			if not ok then
				error(err, 0)
			end
		end
	end, true)
	skynet.timeout(0, function()
		skynet.init_service(start_func)
	end)
end

function skynet.filter(f, start_func)
	local dispatch_message = skynet.dispatch_message
	c.callback(function(...)
		dispatch_message(f(...))
	end)
	skynet.timeout(0, function()
		skynet.init_service(start_func)
	end)
end

function skynet.monitor(service, query)
	local monitor
	if query then
		monitor = skynet.queryservice(true, service)
	else
		monitor = skynet.uniqueservice(true, service)
	end
	assert(monitor, "Monitor launch failed")
	c.command("MONITOR", string.format(":%08x", monitor))
	return monitor
end

return skynet
