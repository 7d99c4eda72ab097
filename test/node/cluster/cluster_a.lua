-- The driver of test/node/test_cluster.sh: node "a" in its own process
-- starts peer processes (test/node/cluster/peer.sh) and checks, over real
-- TCP between processes: calls and sends by name and by address, every
-- skynet.pack type, 1 MB both ways, a raising handler, a dead service, an
-- unknown node, a stopped (SIGSTOP) peer, a peer killed mid-call, a peer
-- restarted, a reload to another address and 1,000 concurrent calls. Each
-- case prints "ok"/"FAIL"; the node exits 0 only when all passed.
local skynet = require "skynet"
require "skynet.manager"
local socket = require "skynet.socket"
local cluster = require "skynet.cluster"
local t = require "testlib"

local tmp = os.getenv "CLUSTER_TMP"
local HEARTBEAT <const> = 0.2
local DEADTIME <const> = 1

local function free_port()
	local id, _, port = socket.listen("127.0.0.1", 0)
	socket.close(id)
	return port
end

local function peer(...)
	local cmd = "sh test/node/cluster/peer.sh " .. table.concat({ ... }, " ")
	assert(os.execute(cmd), cmd)
end

local function wait_until(cond, limit_cs)
	local deadline = skynet.now() + limit_cs
	while not cond() do
		if skynet.now() >= deadline then
			return false
		end
		skynet.sleep(2)
	end
	return true
end

-- Starts peer id serving as node name; waits until it listens.
local function start_peer(id, name)
	peer("start", id, name)
	local ready = tmp .. "/" .. id .. ".ready"
	assert(wait_until(function()
		local f = io.open(ready)
		if f then
			f:close()
			return true
		end
	end, 3000), "peer " .. id .. " did not start")
end

local function elapsed(f, ...)
	local t0 = skynet.now()
	local r = table.pack(pcall(f, ...))
	return skynet.now() - t0, table.unpack(r, 1, r.n)
end

local function parallel(n, f)
	local done, errors = 0, {}
	local token = {}
	for i = 1, n do
		skynet.fork(function()
			local ok, err = pcall(f, i)
			if not ok then
				errors[#errors + 1] = tostring(err)
			end
			done = done + 1
			if done == n then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
	return errors
end

local addr = {}

local cases = {}
local function case(name, f)
	cases[#cases + 1] = { name = name, f = f }
end

case("call and send by name and by address", function()
	t.eq(cluster.call("b", "@t", "GET", "a"), "foobar", "@name")
	t.eq(cluster.call("b", ".t", "GET", "a"), "foobar", ".name")
	local h = cluster.query("b", "t")
	t.eq(math.type(h), "integer", "query gives a handle")
	t.eq(cluster.call("b", h, "whoami"), "b", "by handle")
	t.eq(cluster.call("b", string.format(":%08x", h), "whoami"), "b", "by :hex")
	cluster.send("b", "@t", "PING", "by name")
	cluster.send("b", h, "PING", "by handle")
	cluster.send("b", ".t", "PING", "by .name")
	t.same(cluster.call("b", "@t", "log"), { "by name", "by handle", "by .name" }, "pushes in order")
end)

case("every skynet.pack type", function()
	local lud, lsz = skynet.pack(1) -- a light userdata travels as its address
	local values = {
		nil, true, false, 0, 1, -1, 127, 128, 255, 256, 65535, 65536, 0x7fffffff, 0x80000000,
		-0x80000000, math.maxinteger, math.mininteger, 0.5, -1.25e300, 1 / 0, -1 / 0, "",
		"short", string.rep("m", 40), string.rep("L", 70000), lud,
		{}, { 1, 2, 3 }, { a = 1, b = { c = { d = "deep" } } }, { 1, 2, x = "mixed", [10] = 10 },
		{ [1.5] = "float key", [true] = "bool key" }, nil,
	}
	local n = 32
	local got = table.pack(cluster.call("b", "@t", "echo", table.unpack(values, 1, n)))
	skynet.trash(lud, lsz)
	t.eq(got.n, n, "count, trailing nil included")
	for i = 1, n do
		t.same(got[i], values[i], "value " .. i)
	end
	local nan = cluster.call("b", "@t", "echo", 0 / 0)
	t.ok(nan ~= nan, "NaN")
	t.eq(math.type(cluster.call("b", "@t", "echo", 3.0)), "float", "float stays float")
	t.eq(select("#", cluster.call("b", "@t", "echo")), 0, "no values")
end)

case("1 MB payloads both ways", function()
	local mb = string.rep("0123456789abcdef", 65536)
	t.eq(cluster.call("b", "@t", "size", mb), #mb, "1 MB request")
	t.eq(cluster.call("b", "@t", "LEN", #mb), string.rep("R", #mb), "1 MB reply")
	t.eq(cluster.call("b", "@t", "echo", mb), mb, "1 MB echo")
	-- b calls back here on its own connection to a
	t.eq(cluster.call("b", "@t", "call", "a", "@t", "size", mb), #mb, "b -> a, 1 MB request")
	t.eq(#cluster.call("b", "@t", "call", "a", "@t", "LEN", #mb), #mb, "b -> a, 1 MB reply")
end)

case("a remote handler that raises, a dead service", function()
	local dt, ok, err = elapsed(cluster.call, "b", "@t", "raise", "boom")
	t.eq(ok, false, "raised")
	t.ok(tostring(err):find "call failed$", tostring(err))
	t.ok(dt < 100, "at once")
	local other = cluster.call("b", "@t", "spawn")
	t.eq(cluster.call("b", other, "whoami"), "spawned", "the new service answers")
	cluster.call("b", other, "exit")
	t.raises("call failed", cluster.call, "b", other, "whoami")
	cluster.send("b", other, "PING", "lost") -- dropped on the peer, no error here
	t.eq(cluster.call("b", "@t", "GET"), "foobar", "the connection is fine")
end)

case("an unknown node fails within __waittime", function()
	local dt, ok, err = elapsed(cluster.call, "nosuch", "@t", "GET")
	t.eq(ok, false, "unknown")
	t.ok(tostring(err):find "absent", tostring(err))
	t.ok(dt >= 40 and dt < 300, "bounded: " .. dt .. " cs")
end)

case("1,000 concurrent calls", function()
	local t0 = skynet.now()
	local errors = parallel(1000, function(i)
		local a, b = cluster.call("b", "@t", "echo", i, string.rep("c", i % 100))
		assert(a == i and b == string.rep("c", i % 100), "wrong answer for " .. i)
	end)
	t.eq(#errors, 0, "errors: " .. table.concat(errors, "; "):sub(1, 500))
	print(string.format("    1000 concurrent calls in %d cs", skynet.now() - t0))
end)

-- The state letter of peer id's process (/proc/<pid>/stat): "T" when stopped.
local function peer_state(id)
	local f = assert(io.open(tmp .. "/" .. id .. ".pid"))
	local pid = f:read "l"
	f:close()
	local st = io.open("/proc/" .. pid .. "/stat")
	if st == nil then
		return "gone"
	end
	local line = st:read "l"
	st:close()
	return line:match "^%d+ %b() (%a)"
end

case("a stopped peer (SIGSTOP) fails the waiting calls within __deadtime", function()
	peer("signal", "b", "STOP")
	t.ok(wait_until(function()
		return peer_state "b" == "T"
	end, 200), "the peer is stopped: " .. tostring(peer_state "b"))
	local dt, ok, err = elapsed(cluster.call, "b", "@t", "GET")
	t.eq(peer_state "b", "T", "still stopped after the call")
	peer("signal", "b", "CONT")
	t.eq(ok, false, "failed")
	t.ok(tostring(err):find "call failed$", tostring(err))
	local bound = math.ceil((DEADTIME + 2 * HEARTBEAT) * 100) + 100
	t.ok(dt >= DEADTIME * 100 - 5 and dt <= bound, "within the bound: " .. dt .. " cs")
	t.ok(wait_until(function()
		return pcall(cluster.call, "b", "@t", "GET")
	end, 500), "answers again once resumed")
end)

case("a peer killed mid-call: the caller gets an error at once", function()
	local result
	skynet.fork(function()
		result = table.pack(elapsed(cluster.call, "b", "@t", "SLEEP", 1000))
	end)
	skynet.sleep(20)
	peer("signal", "b", "KILL")
	t.ok(wait_until(function()
		return result ~= nil
	end, 300), "the call returned")
	t.eq(result[2], false, "failed")
	t.ok(tostring(result[3]):find "call failed$", tostring(result[3]))
	t.ok(result[1] < 100, "well before the handler's 10 s: " .. result[1] .. " cs")
	local dt, ok = elapsed(cluster.call, "b", "@t", "GET")
	t.eq(ok, false, "down")
	t.ok(dt < 100, "fails fast while down: " .. dt)
end)

case("the peer restarted: calls work again", function()
	start_peer("b", "b")
	local attempts = 0
	t.ok(wait_until(function()
		attempts = attempts + 1
		return pcall(cluster.call, "b", "@t", "GET")
	end, 500), "reconnected")
	t.eq(cluster.call("b", "@t", "whoami"), "b", "served by the new process")
	t.ok(attempts <= 10, "after a few attempts: " .. attempts)
end)

case("reload to another address", function()
	start_peer("b2", "b2")
	cluster.reload { b = addr.b2 }
	t.eq(cluster.call("b", "@t", "whoami"), "b2", "node b now reaches the second peer")
	cluster.reload { b = addr.b }
	t.eq(cluster.call("b", "@t", "whoami"), "b", "and back")
	cluster.send("b2", "@t", "abort")
end)

local function run()
	local passed, failed = 0, 0
	for _, c in ipairs(cases) do
		local ok, err = xpcall(c.f, debug.traceback)
		if ok then
			passed = passed + 1
			print("ok   " .. c.name)
		else
			failed = failed + 1
			print("FAIL " .. c.name .. ": " .. tostring(err))
		end
	end
	print(string.format("%d passed, %d failed", passed, failed))
	return failed
end

skynet.start(function()
	addr.a = "127.0.0.1:" .. free_port()
	addr.b = "127.0.0.1:" .. free_port()
	addr.b2 = "127.0.0.1:" .. free_port()
	local f = assert(io.open(tmp .. "/clustername.lua", "w"))
	f:write(string.format('a = "%s"\nb = "%s"\nb2 = "%s"\n', addr.a, addr.b, addr.b2))
	f:write(string.format("__waittime = 0.5\n__heartbeat = %s\n__deadtime = %s\n", HEARTBEAT,
		DEADTIME))
	f:close()
	cluster.reload()
	local me = skynet.newservice("svc_cluster_target", "a")
	cluster.register("t", me)
	cluster.open "a"
	start_peer("b", "b")
	local failed = run()
	cluster.send("b", "@t", "abort") -- b exits by itself (its leak check runs)
	skynet.sleep(20)
	skynet.abort(failed == 0 and 0 or 1)
end)
