-- skynet.sharedata: named read-only trees shared by every service of the
-- node through proxies (skynet.sharedata.corelib) onto versions kept by the
-- sharedatad service.
--
-- cache[name] is this service's root proxy of name; a forked loop per name
-- holds one monitor call at sharedatad and switches the proxy when it
-- answers with a newer version (so another service's update becomes visible
-- here once this service has handled that answer, and the old version is
-- released right then). When the name is deleted the loop ends and the
-- proxy keeps the data it had.
local skynet = require "skynet"
local corelib = require "skynet.sharedata.corelib"

local service

skynet.init(function()
	service = skynet.uniqueservice "sharedatad"
end)

local sharedata = {}
local cache = {} -- name -> root proxy
local current = {} -- name -> handle of the version the root proxy shows

-- Switches name's root proxy to the version of handle h unless it shows it
-- already. If that version is gone already (a newer one replaced it and
-- nobody held it), nothing changes: the monitor loop gets the newest at once.
local function switch(name, obj, h)
	if current[name] ~= h and corelib.update(obj, h) then
		current[name] = h
	end
end

-- job = { name, root proxy, handle }. The proxy goes in a table that is
-- emptied at once: the arguments of the first job a fresh framework
-- coroutine runs stay referenced as long as that coroutine lives, which
-- would pin the proxy (and its version) after the loop ends.
local function monitor(job)
	local name, obj, h = job[1], job[2], job[3]
	job[2] = nil
	while true do
		local newh = skynet.call(service, "lua", "monitor", name, h)
		if newh == nil or cache[name] ~= obj then
			break
		end
		h = newh
		switch(name, obj, newh)
	end
	if cache[name] == obj then
		cache[name] = nil
		current[name] = nil
	end
end

function sharedata.query(name)
	local obj = cache[name]
	if obj then
		return obj
	end
	while true do
		local h = skynet.call(service, "lua", "query", name)
		obj = cache[name] -- another coroutine of this service got there first
		if obj then
			return obj
		end
		obj = corelib.trybox(h)
		if obj then
			cache[name] = obj
			current[name] = h
			skynet.fork(monitor, { name, obj, h })
			return obj
		end
	end
end

function sharedata.new(name, v, ...)
	skynet.call(service, "lua", "new", name, v, ...)
end

-- The helper answers with the new handle, so that this service shows the
-- new data when update returns even if its monitor call was not at the
-- helper yet (it was forked by the query just before).
function sharedata.update(name, v, ...)
	local h = skynet.call(service, "lua", "update", name, v, ...)
	local obj = cache[name]
	if obj then
		switch(name, obj, h)
	end
end

function sharedata.delete(name)
	skynet.call(service, "lua", "delete", name)
end

function sharedata.flush()
	for _, obj in pairs(cache) do
		corelib.flush(obj)
	end
	collectgarbage()
end

function sharedata.deepcopy(name, ...)
	local obj = cache[name]
	if obj then
		return corelib.copy_proxy(obj, ...)
	end
	while true do
		local h = skynet.call(service, "lua", "query", name)
		local ok, r = corelib.trycopy(h, ...)
		if ok then
			return r
		end
	end
end

return sharedata
