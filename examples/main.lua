-- The demo game server (`make run`): the world, the watchdog and its gate
-- on gate_address:gate_port (127.0.0.1:8888), and the debug console on
-- 127.0.0.1:debug_console_port (8000), the browser arena on
-- web_address:web_port (http://127.0.0.1:8080/) and the Prometheus metrics
-- on 127.0.0.1:metrics_port (9100). Every game setting can be set in
-- examples/config (see examples/settings.lua). Play with `make client`.
local skynet = require "skynet"
local settings = require "settings"

skynet.start(function()
	local s = settings.from_env(skynet.getenv)
	local world = skynet.newservice("world")
	skynet.call(world, "lua", "init", s)
	local watchdog = skynet.newservice("watchdog")
	local addr, port = skynet.call(watchdog, "lua", "start", s, world)
	skynet.error(string.format("Watchdog listen on %s:%d", addr, port))
	if s.debug_console_port > 0 then
		local ok, console = pcall(skynet.newservice, "debug_console", "127.0.0.1",
			s.debug_console_port)
		if ok and console then
			skynet.error(string.format("debug console on 127.0.0.1:%d", s.debug_console_port))
		else
			skynet.error("warn: main: no debug console (service/debug_console.lua missing?)")
		end
	end
	-- The web front and the metrics are extras: a port already taken is
	-- logged and the game runs on without them.
	if s.web_port > 0 then
		-- each WebSocket holds a gate connection: browsers must leave terminal
		-- clients at least one of the gate's maxclient slots
		local web_maxclient = s.web_maxclient
		if web_maxclient >= s.maxclient then
			web_maxclient = math.max(s.maxclient - 1, 0)
			skynet.error(string.format("warn: main: web_maxclient %d is not below maxclient %d;"
				.. " using %d", s.web_maxclient, s.maxclient, web_maxclient))
		end
		local ok, err = pcall(function()
			local web = skynet.newservice("webgate")
			local waddr, wport = skynet.call(web, "lua", "start", {
				web_address = s.web_address, web_port = s.web_port, gate_address = s.gate_address,
				gate_port = port, max_request = s.max_request, maxclient = s.maxclient,
				web_maxclient = web_maxclient,
			})
			skynet.error(string.format("browser arena on http://%s:%d/", waddr, wport))
		end)
		if not ok then
			skynet.error("warn: main: no browser arena: " .. tostring(err))
		end
	end
	if s.metrics_port > 0 then
		local ok, err = pcall(skynet.newservice, "metrics", "127.0.0.1", s.metrics_port)
		if not ok then
			skynet.error("warn: main: no metrics endpoint: " .. tostring(err))
		end
	end
	skynet.error(string.format("demo: play with `make client` (or: lua5.4 examples/client.lua"
		.. " 127.0.0.1 %d); Ctrl-C stops the server", port))
	skynet.exit()
end)
