-- Buffs and debuffs of the demo game (examples/world.lua): each one is a
-- skynet.timeout that expires it; a dispel, a recast (replace) or the
-- bearer's death cancels that timer, so the world's pending timers come
-- back to what they were and no late expiry is ever pushed.
local skynet = require "skynet"
local t = require "testlib"
local game = require "svc_game_util"

local fields = game.fields

-- The world's pending C timers. The count can dip for a moment: a timer
-- that fires leaves the count before its message reaches the world (the
-- 10 Hz tick's among them), so a base is the highest of a few samples and
-- a check waits, briefly, for the exact number.
local function timers(g)
	return game.stats(g).timers
end

local function base_timers(g)
	local n = 0
	for _ = 1, 3 do
		n = math.max(n, timers(g))
		skynet.sleep(1)
	end
	return n
end

local function timers_are(g, n, what)
	local got
	local ok = game.wait_for(function()
		got = timers(g)
		return got == n
	end, 50)
	t.ok(ok, string.format("%s: %s timers, want %d", what, tostring(got), n))
end

t.case("a buff expires after its duration", function()
	local g = game.start { shield_cs = 150 }
	local c = game.login(g, "alice")
	local base = base_timers(g)
	local t0 = skynet.now()
	t.eq(c:request "cast shield", "ok cast skill=shield target=alice secs=1.5", "cast")
	t.eq(c:expect "^buff ", "buff alice shield 1.5 alice", "buff push")
	timers_are(g, base + 1, "one expiry timer")
	local st = fields(c:request "status")
	t.ok(st.buffs:match "^shield:1%.%d$" or st.buffs == "shield:1.5", "status buffs: " .. st.buffs)
	t.eq(c:expect("^unbuff ", 1000), "unbuff alice shield expired", "expiry push")
	local took = skynet.now() - t0
	t.ok(took >= 150 and took < 600, "expired after 1.5 s (took " .. took .. " cs)")
	timers_are(g, base, "no timer left")
	t.eq(fields(c:request "status").buffs, "none", "no buff left")
	c:close()
end)

t.case("a dispel cancels the expiry timer: no pending timer, no late expiry", function()
	local g = game.start { rage_cs = 200, regen_cs = 200 }
	local c = game.login(g, "alice")
	local base = base_timers(g)
	t.ok(c:request("cast rage"):match "^ok cast skill=rage", "rage")
	t.ok(c:request("cast regen"):match "^ok cast skill=regen", "regen")
	timers_are(g, base + 2, "two expiry timers")
	t.eq(c:request "cast dispel", "ok cast skill=dispel target=alice removed=rage,regen", "dispel")
	timers_are(g, base, "both timers cancelled")
	c:expect "^unbuff alice rage dispelled$"
	c:expect "^unbuff alice regen dispelled$"
	t.eq(c:request "cast dispel", "ok cast skill=dispel target=alice removed=none", "nothing left")
	skynet.sleep(300) -- past the original duration
	t.eq(c:request "ping", "ok ping", "ping")
	for _, msg in ipairs(c.pushes) do
		t.ok(not msg:match "expired", "late expiry pushed: " .. msg)
	end
	timers_are(g, base, "still no timer")
	c:close()
end)

t.case("a recast replaces the buff: the old timer is cancelled", function()
	local g = game.start { shield_cs = 300 }
	local c = game.login(g, "alice")
	local base = base_timers(g)
	t.ok(c:request("cast shield"):match "^ok cast", "first")
	skynet.sleep(100)
	local t1 = skynet.now()
	t.ok(c:request("cast shield"):match "^ok cast", "second")
	c:expect "^unbuff alice shield replaced$"
	timers_are(g, base + 1, "one timer, not two")
	c:expect("^unbuff alice shield expired$", 2000)
	t.ok(skynet.now() - t1 >= 300, "the new duration counts from the recast")
	timers_are(g, base, "no timer left")
	c:close()
end)

t.case("buffs on another player; debuffs on monsters; range", function()
	local g = game.start {
		monster_count = 2, monster_spots = "6,5 12,12", monster_damage = 4, monster_attack_cs = 50,
		poison_cs = 250, freeze_cs = 10000, monster_hp = 100,
	}
	local a = game.login(g, "alice")
	local b = game.login(g, "bob")
	t.eq(a:request "cast shield bob", "ok cast skill=shield target=bob secs=10.0", "shield on bob")
	b:expect "^buff bob shield 10%.0 alice$"
	t.ok(a:request("cast poison bob"):match "^err cast poison works on a monster", "poison a player")
	t.ok(a:request("cast shield m1"):match "^err cast shield works on a player", "shield a monster")
	t.ok(a:request("cast freeze m2"):match "^err cast m2 is too far", "range")
	t.ok(a:request("cast freeze nobody"):match "^err cast no target nobody", "unknown target")
	-- m1 stands next to both players and hits one of them every 0.5 s
	a:expect("^hit m1 ", 1000)
	t.eq(a:request "cast freeze", "ok cast skill=freeze target=m1 secs=100.0", "freeze nearest")
	a:flush()
	t.eq(a:request "cast poison m1", "ok cast skill=poison target=m1 secs=2.5", "poison")
	-- poison: 3 hp a second for 2.5 s, credited to alice
	t.eq(a:expect("^hit poison ", 1000), "hit poison m1 3 97", "first poison tick")
	t.eq(a:expect("^hit poison ", 1000), "hit poison m1 3 94", "second poison tick")
	a:expect("^unbuff m1 poison expired$", 1000)
	for _, msg in ipairs(a.pushes) do
		t.ok(not msg:match "^hit m1 ", "a frozen monster hit: " .. msg)
	end
	t.ok(game.inspect(g, "m1").buffs.freeze, "still frozen")
	t.eq(a:request "cast dispel m1", "ok cast skill=dispel target=m1 removed=freeze", "unfreeze")
	a:expect("^hit m1 ", 1000) -- it fights again
	a:close()
	b:close()
end)

t.case("death clears buffs and cancels their timers", function()
	local g = game.start {
		monster_count = 1, monster_spots = "6,5", monster_hp = 10, poison_cs = 10000,
		freeze_cs = 10000, monster_respawn_cs = 100000,
	}
	local c = game.login(g, "alice")
	local base = base_timers(g)
	t.ok(c:request("cast freeze m1"):match "^ok", "freeze")
	t.ok(c:request("cast poison m1"):match "^ok", "poison")
	timers_are(g, base + 2, "two debuff timers")
	t.ok(c:request("attack m1"):match "killed=yes", "killed")
	c:expect "^unbuff m1 freeze died$"
	c:expect "^unbuff m1 poison died$"
	timers_are(g, base + 1, "only the respawn timer")
	c:close()
end)

t.start()
