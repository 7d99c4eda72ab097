-- skynet.service (lualib/skynet/service.lua, service_provider, service_cell):
-- new/query/close, the upvalue rule, start semantics inside a cell, failures
-- remembered, waiters of query, and the provider's debug INFO.
local skynet = require "skynet"
require "skynet.manager"
local t = require "testlib"
local service = require "skynet.service"

-- Cell bodies: they may use globals only (their one upvalue is _ENV).
local function counter_cell(start)
	local skynet = require "skynet" -- luacheck: ignore 431 (no upvalues in a cell)
	local n = tonumber(start) or 0
	local order = { "main" }
	skynet.start(function()
		order[#order + 1] = "start"
		skynet.dispatch("lua", function(_, _, cmd)
			if cmd == "inc" then
				n = n + 1
				skynet.retpack(n)
			elseif cmd == "order" then
				skynet.retpack(table.concat(order, ","), SERVICE_NAME)
			else
				error("bad command " .. tostring(cmd))
			end
		end)
	end)
end

local function failing_cell()
	error("cell main failed on purpose")
end

local function silent_cell()
	local skynet = require "skynet" -- luacheck: ignore 431 (no upvalues in a cell)
	skynet.start(function() end)
end

local function pure_cell()
	return 1 + 1
end

t.case("new launches once; the same handle for every later new", function()
	local h = service.new("svc_counter", counter_cell, 10)
	t.eq(math.type(h), "integer", "handle")
	t.eq(skynet.call(h, "lua", "inc"), 11, "the argument reached the cell")
	t.eq(service.new("svc_counter", failing_cell), h, "existing name: mainfunc ignored")
	t.eq(skynet.call(h, "lua", "inc"), 12, "state kept")
	local order, name = skynet.call(h, "lua", "order")
	t.eq(order, "main,start", "start runs after the main function")
	t.eq(name, "service_cell", "SERVICE_NAME inside a cell")
end)

t.case("the upvalue rule", function()
	local captured = 1
	t.raises("assertion failed!", service.new, "svc_bad_up", function()
		return captured
	end)
	t.raises("assertion failed!", service.new, "svc_bad_type", "not a function")
	-- A function without upvalues is accepted (it touches no global).
	local h = service.new("svc_pure", pure_cell)
	t.eq(math.type(h), "integer", "zero-upvalue function accepted")
end)

t.case("requests fail until the cell installs a lua dispatch", function()
	local h = service.new("svc_silent", silent_cell)
	t.raises("call failed", skynet.call, h, "lua", "anything")
end)

t.case("a failed launch is remembered until close", function()
	t.raises("call failed", service.new, "svc_fail", failing_cell)
	t.raises("call failed", service.new, "svc_fail", counter_cell)
	t.raises("call failed", service.query, "svc_fail")
	t.eq(service.close("svc_fail"), false, "close of a failed name")
	local h = service.new("svc_fail", counter_cell, 1)
	t.eq(skynet.call(h, "lua", "inc"), 2, "relaunch after close")
end)

t.case("query waits for the launch; concurrent new share one launch", function()
	local got = {}
	for _ = 1, 3 do
		skynet.fork(function()
			local h = service.query("svc_later")
			got[#got + 1] = h
		end)
	end
	skynet.sleep(10)
	t.eq(#got, 0, "queries still waiting")
	local news = {}
	for i = 1, 2 do
		skynet.fork(function()
			news[i] = service.new("svc_later", counter_cell)
		end)
	end
	local h = service.new("svc_later", counter_cell)
	skynet.sleep(1)
	t.eq(#got, 3, "every query answered")
	for i = 1, 3 do
		t.eq(got[i], h, "query " .. i)
	end
	t.eq(news[1], h, "concurrent new 1")
	t.eq(news[2], h, "concurrent new 2")
	t.eq(skynet.call(h, "lua", "inc"), 1, "launched once")
end)

t.case("close kills and forgets; a later new launches afresh", function()
	local h = service.new("svc_closed", counter_cell, 5)
	t.eq(skynet.call(h, "lua", "inc"), 6, "first instance")
	t.eq(service.close("svc_closed"), true, "close")
	t.raises("invalid address", skynet.call, h, "lua", "inc")
	t.eq(service.close("svc_closed"), false, "second close")
	t.eq(service.close("svc_never"), false, "unknown name")
	local h2 = service.new("svc_closed", counter_cell, 100)
	t.ok(h2 ~= h, "a new service")
	t.eq(skynet.call(h2, "lua", "inc"), 101, "fresh state")
end)

t.case("close answers the callers still waiting in query", function()
	local done, err
	skynet.fork(function()
		local ok, e = pcall(service.query, "svc_nobody")
		done, err = ok, e
	end)
	skynet.sleep(1)
	t.eq(done, nil, "waiting")
	t.eq(service.close("svc_nobody"), false, "nothing was launched")
	skynet.sleep(1)
	t.eq(done, false, "the waiter got an error")
	t.ok(tostring(err):find("call failed", 1, true), "error text")
end)

t.case("the provider's debug INFO lists cells, also after a failure", function()
	local p = skynet.uniqueservice "service_provider"
	local info = skynet.call(p, "debug", "INFO")
	local h = service.query("svc_counter")
	local entry = info[skynet.address(h)]
	t.ok(entry, "entry of a running cell")
	t.eq(entry[1], "svc_counter", "name")
	t.eq(entry.init, "10", "init arguments")
	t.ok(type(entry.time) == "string" and #entry.time > 0, "launch time")
	t.raises("call failed", service.new, "svc_fail2", failing_cell)
	info = skynet.call(p, "debug", "INFO")
	t.ok(info.svc_fail2 and info.svc_fail2.status:find("failed", 1, true), "failed entry")
end)

t.start()
