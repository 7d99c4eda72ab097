-- Fights in the demo game: killing a monster (gold, the daily quest), its
-- respawn 5 s (here 1 s) after death, monsters wandering on the world's
-- 10 Hz tick and hitting players, a player's death and respawn, and the
-- daily reset clearing the quest (a cron schedule).
local skynet = require "skynet"
local timer = require "skynet.timer"
local t = require "testlib"
local game = require "svc_game_util"

local fields = game.fields

t.case("kill a monster: gold, quest progress; it respawns after its delay", function()
	local g = game.start {
		monster_count = 2, monster_spots = "6,5 5,6", monster_hp = 20, monster_respawn_cs = 100,
		quest_kills = 2, quest_gold = 50, monster_gold = 5,
	}
	local c = game.login(g, "alice")
	t.ok(c:request("attack m9"):match "^err attack no monster m9", "unknown monster")
	t.eq(c:request "attack m1", "ok attack target=m1 dmg=10 hp=10", "first hit")
	c:expect "^hit alice m1 10 10$"
	local t0 = skynet.now()
	t.eq(c:request "attack m1", "ok attack target=m1 dmg=10 hp=0 killed=yes gold=5 quest=1/2", "kill")
	c:expect "^die m1 alice$"
	t.eq(game.stats(g).monsters_alive, 1, "one left")
	t.ok(c:request("attack m1"):match "^err attack m1 is dead", "attack a dead monster")
	t.ok(c:request("cast poison m1"):match "^err cast m1 is dead", "cast on a dead monster")
	t.ok(fields(c:request "look").monsters:match "m1@6,5:dead", "look shows it dead")
	t.eq(c:expect("^spawn m1", 1000), "spawn m1 6 5 20", "respawn push")
	local took = skynet.now() - t0
	t.ok(took >= 100 and took < 500, "respawned after 1 s (took " .. took .. " cs)")
	t.eq(game.stats(g).monsters_alive, 2, "both alive")
	-- rage doubles the damage: one hit kills, and the quest completes
	t.ok(c:request("cast rage"):match "^ok", "rage")
	t.eq(c:request "attack", "ok attack target=m1 dmg=20 hp=0 killed=yes gold=60 quest=2/2",
		"kill the nearest with rage")
	c:expect "^quest done gold=%+50 total=60$"
	t.eq(c:request "attack m2", "ok attack target=m2 dmg=20 hp=0 killed=yes gold=65 quest=2/2",
		"the quest is done for today")
	local st = fields(c:request "status")
	t.eq(st.kills, "3", "kills")
	t.eq(st.gold, "65", "gold")
	c:close()
end)

t.case("an attack out of reach, or with no monster next to the player", function()
	local g = game.start { monster_count = 1, monster_spots = "8,8" }
	local c = game.login(g, "alice")
	t.ok(c:request("attack m1"):match "^err attack m1 is too far %(at 8,8; you are at 5,5%)", "far")
	t.ok(c:request("attack"):match "^err attack no monster next to you", "none near")
	c:close()
end)

t.case("monsters wander on the 10 Hz tick", function()
	local g = game.start { monster_count = 3, monster_move_cs = 20, map_width = 30, map_height = 30 }
	local c = game.login(g, "alice")
	local ticks0 = game.stats(g).ticks
	local t0 = skynet.now()
	local moves = 0
	while moves < 6 do
		local msg = c:expect("^move m%d+ ", 1000)
		local x, y = msg:match "^move m%d+ (%d+) (%d+)$"
		t.ok(tonumber(x) < 30 and tonumber(y) < 30, "inside the arena: " .. msg)
		moves = moves + 1
	end
	skynet.sleep(100)
	local ticks = game.stats(g).ticks - ticks0
	local elapsed = skynet.now() - t0
	t.ok(ticks >= elapsed // 10 - 2 and ticks <= elapsed // 10 + 2,
		string.format("%d ticks in %d cs", ticks, elapsed))
	c:close()
end)

t.case("a monster kills a player, who respawns after the delay", function()
	local g = game.start {
		monster_count = 1, monster_spots = "6,5", monster_damage = 40, monster_attack_cs = 20,
		player_respawn_cs = 150, player_hp = 100,
	}
	local c = game.login(g, "alice")
	t.ok(c:request("cast regen"):match "^ok", "regen")
	t.eq(c:expect("^hit m1 alice", 1000), "hit m1 alice 40 60", "first hit")
	c:expect("^die alice m1$", 1000)
	local t0 = skynet.now()
	c:expect "^unbuff alice regen died$"
	t.ok(c:request("move n"):match "^err move you are dead %(respawn in %d", "dead: no move")
	t.ok(c:request("attack"):match "^err attack you are dead", "dead: no attack")
	t.eq(fields(c:request "status").dead, "yes", "status: dead")
	t.eq(c:expect("^spawn alice ", 1000), "spawn alice 5 5 100", "respawn")
	t.ok(skynet.now() - t0 >= 150, "after 1.5 s")
	c:close()
end)

t.case("the daily reset clears the quest (cron)", function()
	local virtual = skynet.getenv "timer" == "virtual"
	local g = game.start {
		monster_count = 1, monster_spots = "6,5", monster_hp = 10, monster_respawn_cs = 10,
		quest_kills = 2, daily_reset = virtual and "* * * * *" or "05:00",
	}
	local c = game.login(g, "alice")
	t.ok(c:request("attack m1"):match "quest=1/2", "one kill")
	if virtual then
		-- every minute of (virtual) wall clock
		c:expect("^daily reset quest=0/2$", 6100)
		local now = timer.walltime()
		t.ok(math.abs(now - math.floor(now / 60 + 0.5) * 60) < 1,
			"at a minute boundary: " .. now % 60)
	else
		-- real time: the cron is checked to be there; the reset is run at once
		t.ok(timer.cron_next "0 5 * * *" > timer.walltime(), "next 05:00")
		skynet.call(g.world, "lua", "daily_reset")
		c:expect "^daily reset quest=0/2$"
	end
	t.eq(fields(c:request "status").quest, "0/2", "quest cleared")
	c:close()
end)

t.start()
