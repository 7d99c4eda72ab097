-- A Lua endless loop broken by a signal (spec 4.2 SIGNAL, 4.4 snlua
-- signal(0)). The monitor thread raises the same signal after 5 s of one
-- message; virtual time cannot wait for that, so the test sends SIGNAL
-- itself. The looping service must break out and keep answering.
local skynet = require "skynet"
local core = require "skynet.core"
local t = require "testlib"

-- Spins (without yielding) until the other worker has started the loop.
local function wait_for_mark(what)
	local deadline = skynet.hpc() + 2 * 1000000000
	while not t.has_mark(what) do
		if skynet.hpc() > deadline then
			return false
		end
		skynet.yield()
	end
	return true
end

t.case("SIGNAL breaks a Lua endless loop; the service keeps serving", function()
	t.ok(tonumber(skynet.getenv("thread") or "1") >= 2, "needs two worker threads")
	local svc = skynet.newservice("svc_loop")
	local done, ok, err
	skynet.fork(function()
		ok, err = pcall(skynet.call, svc, "lua", "loop")
		done = true
	end)
	t.ok(wait_for_mark("looping"), "the loop never started")
	core.command("SIGNAL", skynet.address(svc))
	local deadline = skynet.hpc() + 2 * 1000000000
	while not done and skynet.hpc() < deadline do
		skynet.yield()
	end
	t.ok(done, "the loop was not interrupted")
	t.eq(ok, false, "the looping request must fail")
	t.ok(tostring(err):find("call failed", 1, true), "error text: " .. tostring(err))
	t.eq(skynet.call(svc, "lua", "ping"), "pong", "service answers after the signal")
	t.ok(skynet.call(svc, "lua", "count") > 0, "the loop ran")
	-- A second loop can be broken the same way.
	t.marks = {}
	done = false
	skynet.fork(function()
		ok, err = pcall(skynet.call, svc, "lua", "loop")
		done = true
	end)
	t.ok(wait_for_mark("looping"), "the second loop never started")
	core.command("SIGNAL", skynet.address(svc) .. " 0")
	deadline = skynet.hpc() + 2 * 1000000000
	while not done and skynet.hpc() < deadline do
		skynet.yield()
	end
	t.ok(done, "the second loop was not interrupted")
	t.eq(skynet.call(svc, "lua", "ping"), "pong", "service answers again")
end)

t.start()
