-- Bad input to the demo game: malformed and oversized requests get an
-- error answer and the agent and the world go on (an unknown lua command
-- fails the call); a client vanishing mid-frame or mid-request is cleaned
-- up (agent gone, player offline).
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"
local game = require "svc_game_util"

local spack = string.pack

local function agents(g)
	local n = 0
	for _ in pairs(skynet.call(g.watchdog, "lua", "agents")) do
		n = n + 1
	end
	return n
end

t.case("malformed requests: an error answer each, the session goes on", function()
	local g = game.start { monster_count = 1, monster_spots = "9,9" }
	local c = game.connect(g)
	local before = {
		{ "", "^err %? empty request" },
		{ "   ", "^err %? empty request" },
		{ "\0\1\2\255", "^err %? not a command" },
		{ "123 go", "^err %? not a command" },
		{ string.rep("a", 17), "^err %? not a command" },
		{ "look", "^err look not logged in" },
		{ "login", "^err login usage: login <name>" },
		{ "login a b", "^err login usage" },
		{ "login 9lives", "^err login name must be" },
		{ "login m12", "^err login name must be" },
		{ "login " .. string.rep("x", 17), "^err login name must be" },
		{ "login al\1ce", "^err login control characters" },
	}
	for _, case in ipairs(before) do
		local r = c:request(case[1])
		t.ok(r:match(case[2]), string.format("%q -> %q", case[1], r))
	end
	t.ok(c:request("login alice"):match "^ok login", "login after all that")
	local after = {
		{ "fly away", "^err fly unknown command" },
		{ "move", "^err move usage" },
		{ "move nowhere", "^err move usage" },
		{ "move n\0", "^err move control characters" },
		{ "say hi\nthere", "^err say control characters" },
		{ "attack m1 m2", "^err attack usage" },
		{ "attack bob", "^err attack no monster bob" },
		{ "attack m99999999999999999999", "^err attack no monster" },
		{ "cast", "^err cast usage" },
		{ "cast fireball", "^err cast usage" },
		{ "cast shield a b", "^err cast usage" },
		{ "cast shield nobody", "^err cast no target nobody here" },
		{ "tell", "^err tell usage" },
		{ "tell bob", "^err tell usage" },
		{ "CAST   Dispel", "^ok cast skill=dispel" },
		{ "look\r\n", "^ok look" },
	}
	for _, case in ipairs(after) do
		local r = c:request(case[1])
		t.ok(r:match(case[2]), string.format("%q -> %q", case[1], r))
	end
	t.eq(c:request "ping", "ok ping", "the agent is alive")
	t.eq(agents(g), 1, "one agent")
	c:close()
end)

t.case("oversized requests: an error answer, the session goes on", function()
	local g = game.start { max_request = 256 }
	local c = game.login(g, "alice")
	t.ok(c:request("say " .. string.rep("x", 252)):match "^err say text too long", "at the limit")
	t.eq(c:request("say " .. string.rep("y", 253)),
		"err ? request too long (257 bytes, at most 256)", "one byte over")
	t.eq(c:request(string.rep("z", 65535)),
		"err ? request too long (65535 bytes, at most 256)", "the largest frame")
	-- many large frames in one write
	local big = spack(">s2", string.rep("w", 60000))
	c:raw(big .. big .. big)
	for i = 1, 3 do
		t.ok(c:answer():match "^err %? request too long", "big frame " .. i)
	end
	t.eq(c:request "ping", "ok ping", "the agent is alive")
	t.eq(game.stats(g).online, 1, "still online")
	c:close()
end)

t.case("bad lua messages to the world and the agent do not kill them", function()
	local g = game.start {}
	local c = game.login(g, "alice")
	local agent = game.agent(g, "alice")
	t.raises("call failed", skynet.call, g.world, "lua", "no_such_command") -- the world lives on
	t.ok(skynet.call(g.world, "lua", "request", "alice", "move", "move n"):match
		"^err move not logged in", "a request from a service that is not alice's agent")
	t.eq(skynet.call(g.world, "lua", "request", nil, nil, nil), "err nil not logged in",
		"nil arguments")
	t.raises("call failed", skynet.call, agent, "lua", "no_such_command")
	t.raises("call failed", skynet.call, g.watchdog, "lua", "no_such_command")
	t.eq(c:request "move n", "ok move x=5 y=4", "alice plays on")
	t.ok(game.stats(g).online == 1, "the world is alive")
	c:close()
end)

t.case("a client vanishing mid-frame is cleaned up", function()
	local g = game.start {}
	local a = game.login(g, "alice")
	local b = game.login(g, "bob")
	a:expect "^enter bob"
	t.eq(agents(g), 2, "two agents")
	b:raw(spack(">I2", 100) .. "say half a fra") -- 100 bytes announced, 14 sent
	skynet.sleep(10)
	b:close()
	t.eq(a:expect "^leave ", "leave bob", "bob left")
	t.ok(game.wait_for(function()
		return agents(g) == 1 and game.stats(g).online == 1
	end), "bob's agent gone, bob offline")
	-- half a header, then gone
	local c = game.login(g, "carol")
	c:raw "\0"
	c:close()
	t.ok(game.wait_for(function()
		return agents(g) == 1 and game.stats(g).online == 1
	end), "carol cleaned up")
	-- a request sent, the client gone before the answer
	local d = game.login(g, "dave")
	d:send "look"
	d:close()
	t.ok(game.wait_for(function()
		return agents(g) == 1 and game.stats(g).online == 1
	end), "dave cleaned up")
	-- bob comes back: his state is there
	local b2, r = game.login(g, "bob")
	t.eq(r.new, "no", "bob's state kept")
	t.eq(a:request "say hi bob", "ok say heard=1", "say")
	t.eq(b2:expect "^chat ", "chat alice hi bob", "bob hears alice")
	a:close()
	b2:close()
end)

-- The server side of the agent's client connection (its consumer is the agent).
local function agent_socket(agent)
	for _, info in ipairs(socket.netstat()) do
		if info.consumer == agent then
			return info
		end
	end
end

t.case("pipelined requests: answered in order, the connection paused meanwhile", function()
	local g = game.start {}
	local c = game.login(g, "alice")
	local agent = game.agent(g, "alice")
	-- 3000 frames, and 100 more once the agent has over 1024 waiting: the
	-- connection is read then only to be paused at once.
	local first = 3000
	c:raw(string.rep(spack(">s2", "look"), first))
	local st
	repeat
		st = skynet.call(agent, "lua", "stats")
	until st.waiting > 1100 or st.most_waiting >= first
	t.ok(st.waiting > 1100, "requests wait in the agent: " .. st.waiting)
	c:raw(string.rep(spack(">s2", "look"), 100))
	local n = first + 100
	for i = 1, n do
		local r = c:answer()
		t.ok(r and r:match "^ok look", string.format("answer %d: %s", i, tostring(r)))
	end
	st = skynet.call(agent, "lua", "stats")
	local info = agent_socket(agent)
	t.ok(info, "the agent is the consumer of its client's connection")
	t.ok(info.flow_pauses >= 1, "the connection was paused by flow control")
	t.eq(info.flow_paused, false, "and is read again")
	t.eq(st.waiting, 0, "nothing left waiting")
	t.eq(c:request "ping", "ok ping", "the session goes on")
	c:close()
end)

t.case("a client past the agent's flood limit is kicked; its requests are dropped", function()
	local g = game.start {}
	local c = game.login(g, "alice")
	local before = game.stats(g)
	c:raw(string.rep(spack(">s2", "look"), 25000))
	t.ok(c:wait_closed(), "disconnected")
	local kicked = false
	local looks = 0
	for _, m in ipairs(c.pushes) do
		if m:match "^kick flooding" then
			kicked = true
		elseif m:match "^ok look" then
			looks = looks + 1
		end
	end
	t.ok(kicked, "kick flooding pushed")
	t.ok(looks < 4096, string.format("the waiting requests were dropped (%d answered)", looks))
	t.ok(game.wait_for(function()
		return agents(g) == 0 and game.stats(g).online == before.online - 1
	end), "agent gone, player offline")
end)

t.start()
