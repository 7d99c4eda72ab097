-- bootstrap: the first Lua service. Starts the launcher, the global-name
-- service (.cslave), service_mgr, the reminder service when the config
-- names reminder_store, the span writer (tracer) when it names
-- trace_output, and then the user's `start` service, and
-- exits. When any of them fails to start (a missing or broken script, an
-- error in its start function such as a port already in use) the reason is
-- logged and the node stops with exit status 1 instead of idling forever.
local skynet = require "skynet"
require "skynet.manager"

-- True when a Lua service file for name exists along the luaservice paths.
local function service_exists(name)
	local paths = skynet.getenv "luaservice" or "./service/?.lua"
	for template in paths:gmatch "[^;]+" do
		local f = io.open((template:gsub("%?", name)), "r")
		if f then
			f:close()
			return true
		end
	end
	return false
end

-- The last line of a node that cannot start: why (newservice's error names
-- the service and gives its start error, e.g. "newservice main failed:
-- cannot listen on 127.0.0.1:8888: address already in use ...").
local function abort(err)
	skynet.error("error: the node cannot start: " .. tostring(err))
	skynet.abort(1)
end

local function launch_or_abort(name, ...)
	local ok, handle = pcall(skynet.newservice, name, ...)
	if not ok then
		abort(handle)
	end
	return handle
end

skynet.start(function()
	local standalone = skynet.getenv "standalone"
	local launcher = assert(skynet.launch("snlua", "launcher"), "bootstrap: can't launch launcher")
	skynet.name(".launcher", launcher)

	local harbor_id = tonumber(skynet.getenv "harbor" or 0)
	if harbor_id == 0 then
		assert(standalone == nil, "bootstrap: standalone must not be set when harbor = 0")
		standalone = true
		skynet.setenv("standalone", "true")
		local slave = launch_or_abort "cdummy"
		skynet.name(".cslave", slave)
	else
		if not service_exists "cslave" then
			skynet.error(string.format("bootstrap: harbor = %d asks for multi-node mode, which needs "
				.. "the cslave service; this build runs single nodes only: set harbor = 0", harbor_id))
			skynet.abort(1)
			return
		end
		if standalone then
			launch_or_abort "cmaster"
		end
		local slave = launch_or_abort "cslave"
		skynet.name(".cslave", slave)
	end

	if standalone and service_exists "datacenterd" then
		local datacenter = skynet.newservice "datacenterd"
		skynet.name("DATACENTER", datacenter)
	end
	skynet.newservice "service_mgr"

	if skynet.getenv "enablessl" == "true" then
		local ok, err = pcall(function()
			local service = require "skynet.service"
			service.new("ltls_holder", function()
				local c = require "ltls.init.c"
				c.constructor()
			end)
		end)
		if not ok then
			skynet.error("bootstrap: can't start the TLS holder: " .. tostring(err))
		end
	end

	-- Durable reminders: up before `start`, so that runs that came due while
	-- the node was down fire with no service asking, and a store that cannot
	-- be used stops the node here with the reason (nothing in it is lost).
	local reminder_store = skynet.getenv "reminder_store"
	if reminder_store and reminder_store ~= "" then
		local ok, err = pcall(skynet.newservice, "reminderd")
		if not ok then
			abort(err)
			return
		end
	end

	-- Spans out as OpenTelemetry JSON lines (docs/operations.md).
	local trace_output = skynet.getenv "trace_output"
	if trace_output and trace_output ~= "" then
		local ok, err = pcall(skynet.newservice, "tracer")
		if not ok then
			abort(err)
			return
		end
	end

	local start = skynet.getenv "start" or "main"
	local ok, err = pcall(skynet.newservice, start)
	if not ok then
		abort(err)
		return
	end
	skynet.exit()
end)
