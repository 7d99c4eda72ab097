-- The session timers of the demo game's agent (examples/agent.lua): the
-- idle kick (a heartbeat timeout re-armed on every message, with
-- cancellation: no stale timers), the online-time reward, and a reconnect
-- that finds the position, the buffs left and the reward progress again.
local skynet = require "skynet"
local t = require "testlib"
local game = require "svc_game_util"

local fields = game.fields

local function agent_stats(g, name)
	return skynet.call(game.agent(g, name), "lua", "stats")
end

t.case("idle kick: messages keep the client in; silence gets it kicked", function()
	local g = game.start { idle_kick_cs = 100 }
	local c = game.login(g, "alice")
	local timers = agent_stats(g, "alice").timers
	t.eq(timers, 2, "the idle and reward timers")
	local t0 = skynet.now()
	for i = 1, 15 do
		skynet.sleep(20)
		t.eq(c:request(i % 2 == 0 and "ping" or "status"):match "^ok %a+", "ok " ..
			(i % 2 == 0 and "ping" or "status"), "served " .. i)
	end
	t.ok(skynet.now() - t0 >= 300, "connected past three idle periods")
	t.eq(agent_stats(g, "alice").timers, timers, "one idle timer: no stale ones")
	for _ = 1, 50 do
		c:send "ping"
	end
	for _ = 1, 50 do
		t.eq(c:answer(), "ok ping", "burst")
	end
	t.eq(agent_stats(g, "alice").timers, timers, "still one idle timer after a burst")
	local last = skynet.now()
	t.ok(c:wait_closed(1000), "kicked")
	t.ok(skynet.now() - last >= 100, "after 1 s of silence")
	t.eq(c.pushes[#c.pushes], "kick idle (1.0s without a message)", "told why")
	t.ok(game.wait_for(function()
		return game.stats(g).online == 0
	end), "logged out")
end)

t.case("idle kick before login too", function()
	local g = game.start { idle_kick_cs = 100 }
	local c = game.connect(g)
	t.ok(c:wait_closed(1000), "kicked")
	t.eq(c.pushes[1], "kick idle (1.0s without a message)", "told why")
end)

t.case("online reward every period", function()
	local g = game.start { reward_cs = 150, reward_gold = 7 }
	local c, login = game.login(g, "alice")
	t.eq(login.reward_in, "1.5", "first reward in 1.5 s")
	local t0 = skynet.now()
	t.eq(c:expect("^reward ", 1000), "reward gold=+7 total=7 next=1.5", "first")
	local t1 = skynet.now()
	t.eq(c:expect("^reward ", 1000), "reward gold=+7 total=14 next=1.5", "second")
	local t2 = skynet.now()
	t.ok(t1 - t0 >= 140 and t1 - t0 <= 250, "first after 1.5 s: " .. (t1 - t0))
	t.ok(t2 - t1 >= 100 and t2 - t1 <= 200, "then every 1.5 s: " .. (t2 - t1))
	t.eq(fields(c:request "status").gold, "14", "gold")
	c:close()
end)

t.case("a reconnect keeps the position, the buffs left and the reward progress", function()
	local g = game.start { reward_cs = 300, shield_cs = 500 }
	local c = game.login(g, "alice")
	t.ok(c:request("move e"):match "^ok", "move")
	t.ok(c:request("cast shield"):match "^ok", "shield")
	skynet.sleep(100)
	c:close()
	t.ok(game.wait_for(function()
		return game.stats(g).online == 0
	end), "offline")
	skynet.sleep(50) -- offline time: the reward waits, the buff goes on
	local c2, r = game.login(g, "alice")
	t.eq(r.new, "no", "returning")
	t.eq(r.x .. "," .. r.y, "6,5", "position")
	local left = tonumber(r.buffs:match "^shield:([%d.]+)$")
	t.ok(left and left <= 3.5 and left > 2.0, "shield left: " .. r.buffs)
	local reward_in = tonumber(r.reward_in)
	t.ok(reward_in <= 2.0 and reward_in >= 1.5, "reward progress kept: " .. r.reward_in)
	local t0 = skynet.now()
	c2:expect("^reward gold=%+10 total=10", 1000)
	local took = (skynet.now() - t0) / 100
	t.ok(took >= reward_in - 0.1 and took <= reward_in + 1, "reward after the rest: " .. took)
	c2:expect("^unbuff alice shield expired$", 1000)
	c2:close()
end)

-- The agents of the watchdog, as a count.
local function agent_count(g)
	local n = 0
	for _ in pairs(skynet.call(g.watchdog, "lua", "agents")) do
		n = n + 1
	end
	return n
end

local ENDED <const> = "kick ended (the server ended your session)"

-- The client c of name (its agent: a) after a's death: told, disconnected,
-- logged out, its agent forgotten.
local function check_agent_death(g, c, what)
	t.ok(c:wait_closed(1000), what .. ": the client's connection is closed")
	t.eq(c.pushes[#c.pushes], ENDED, what .. ": the client is told why")
	t.ok(game.wait_for(function()
		return agent_count(g) == 0 and game.stats(g).online == 0
	end), what .. ": agent forgotten, player logged out")
end

t.case("an agent killed (as the console's kill does) closes its client", function()
	local g = game.start { reward_cs = 1000 }
	local c = game.login(g, "alice")
	t.ok(c:request("move e"):match "^ok", "move")
	skynet.sleep(300)
	local agent = game.agent(g, "alice")
	skynet.call(".launcher", "lua", "KILL", agent) -- what `kill <addr>` does
	check_agent_death(g, c, "killed")
	local c2, r = game.login(g, "alice")
	t.eq(r.x .. "," .. r.y, "6,5", "the state is kept")
	local left = tonumber(r.reward_in)
	t.ok(left >= 6.5 and left <= 7.5, "the reward progress is kept: " .. r.reward_in)
	t.eq(agent_count(g), 1, "a new agent")
	c2:close()
end)

t.case("an agent that exits by itself closes its client", function()
	local g = game.start {}
	local c = game.login(g, "alice")
	skynet.send(game.agent(g, "alice"), "debug", "EXIT") -- the agent calls skynet.exit
	check_agent_death(g, c, "exit")
	local before = game.connect(g) -- not logged in yet
	t.eq(agent_count(g), 1, "its agent")
	local _, agent = next(skynet.call(g.watchdog, "lua", "agents"))
	skynet.kill(agent)
	check_agent_death(g, before, "before login")
end)

t.case("kill from the debug console: the client is disconnected", function()
	local g = game.start {}
	local c = game.login(g, "alice")
	local bob = game.login(g, "bob")
	local console = skynet.newservice("debug_console", "127.0.0.1", 0)
	local _, port = skynet.call(console, "lua", "ADDRESS")
	local socket = require "skynet.socket"
	local con = assert(socket.open("127.0.0.1", port))
	t.eq(socket.readline(con), "Welcome to skynet console", "console")
	local agent = skynet.address(game.agent(g, "alice"))
	socket.write(con, "info " .. agent .. "\n")
	local info = {}
	for _ = 1, 4 do
		info[#info + 1] = socket.readline(con)
	end
	t.eq(info[2], "player\talice", "info of the agent: " .. table.concat(info, "|"))
	t.eq(info[4], "<CMD OK>", "info ends")
	socket.write(con, "info " .. skynet.address(g.world) .. "\n")
	local line
	repeat
		line = socket.readline(con)
	until line == "<CMD OK>" or line:match "^online\t" or not line
	t.eq(line, "online\t2", "info of the world")
	repeat
		line = socket.readline(con)
	until line == "<CMD OK>" or not line
	socket.write(con, "kill " .. agent .. "\n")
	t.ok(c:wait_closed(1000), "alice's connection is closed")
	t.eq(c.pushes[#c.pushes], ENDED, "alice is told why")
	bob:expect "^leave alice$"
	t.eq(bob:request "say still here", "ok say heard=0", "bob plays on, alone")
	socket.close(con)
	skynet.kill(console)
	bob:close()
end)

t.start()
