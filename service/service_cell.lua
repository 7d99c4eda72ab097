-- service_cell: hosts the code of one skynet.service cell. Started by
-- service_provider as `service_cell <name>`; its first and only request of
-- its own is init(code, ...): code is string.dump of the user's function,
-- loaded with this service's globals as _ENV and run with the remaining
-- arguments. skynet.start(f) called by that code only records f, which runs
-- right after the function returns, still inside init; init answers after
-- both. From then on lua requests go to whatever dispatch the code
-- installed; without one they fail.
local skynet = require "skynet"

local name = ...

local function no_dispatch()
	error(string.format("service cell %s has no lua dispatch", tostring(name)))
end

local function init(code, ...)
	skynet.dispatch("lua", no_dispatch)
	local main, err = load(code, "=" .. tostring(name), "b", _ENV)
	if main == nil then
		error(err)
	end
	local start_func
	local start = skynet.start
	skynet.start = function(f)
		start_func = f
	end
	local ok, run_err = xpcall(main, debug.traceback, ...)
	skynet.start = start
	if not ok then
		error(run_err, 0)
	end
	if start_func then
		start_func()
	end
	skynet.retpack()
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, command, ...)
		if command ~= "init" then
			error(string.format("service cell %s: init first (got %s)", tostring(name),
				tostring(command)))
		end
		init(...)
	end)
end)
