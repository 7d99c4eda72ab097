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

t.start()
