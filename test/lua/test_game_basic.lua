-- The demo game over real sockets (examples/): login, movement, look, chat
-- between two clients, whispers, enter/leave pushes, and a second login
-- under the same name replacing the first session.
local skynet = require "skynet"
local t = require "testlib"
local game = require "svc_game_util"

local fields = game.fields

t.case("login: a new player, then the welcome of a returning one", function()
	local g = game.start { map_width = 10, map_height = 8 }
	local c = game.connect(g)
	t.eq(c:request "look", "err look not logged in (login <name> first)", "before login")
	local r = fields(c:request "login alice")
	t.eq(r.name, "alice", "name")
	t.eq(r.new, "yes", "new")
	t.eq(r.x .. "," .. r.y, "5,5", "start cell")
	t.eq(r.hp, "100/100", "hp")
	t.eq(r.buffs, "none", "buffs")
	t.ok(c:request("login bob"):match "^err login already logged in as alice", "second login")
	t.eq(c:request "ping", "ok ping", "ping")
	t.ok(c:request("help"):match "^ok help commands=login,", "help")
	t.eq(game.stats(g).online, 1, "one online")
	c:close()
	t.ok(game.wait_for(function()
		return game.stats(g).online == 0
	end), "offline after close")
	local c2 = game.connect(g)
	local r2 = fields(c2:request "login alice")
	t.eq(r2.new, "no", "returning player")
	c2:close()
end)

t.case("movement: steps, the edge of the arena, look", function()
	local g = game.start { map_width = 10, map_height = 8, player_spot = "0,1" }
	local c = game.login(g, "alice")
	t.eq(c:request "move n", "ok move x=0 y=0", "north")
	t.ok(c:request("move n"):match "^err move the edge of the arena %(you are at 0,0%)", "edge")
	t.ok(c:request("move w"):match "^err move the edge", "west edge")
	t.eq(c:request "move se", "ok move x=1 y=1", "south-east")
	t.eq(c:request "move EAST", "ok move x=2 y=1", "long name, any case")
	t.ok(c:request("move"):match "^err move usage", "no direction")
	t.ok(c:request("move up up"):match "^err move usage", "two directions")
	local look = fields(c:request "look")
	t.eq(look.you, "2,1", "look: you")
	t.eq(look.map, "10x8", "look: map")
	t.eq(look.players, "none", "look: nobody else")
	t.eq(game.inspect(g, "alice").x, 2, "world position")
	c:close()
end)

t.case("chat between two clients; whispers; enter, move and leave pushes", function()
	local g = game.start {}
	local a = game.login(g, "alice")
	local b = game.login(g, "bob")
	a:expect "^enter bob 5 5$"
	t.eq(b:request "say hello alice", "ok say heard=1", "say: the sender hears who heard it")
	t.eq(a:expect "^chat ", "chat bob hello alice", "alice hears bob")
	t.eq(a:request "say  hi   bob ", "ok say heard=1", "say with spaces")
	t.eq(b:expect "^chat ", "chat alice hi   bob", "bob hears alice (inner spaces kept)")
	t.eq(a:request "tell bob psst", "ok tell to=bob", "tell")
	t.eq(b:expect "^tell ", "tell alice psst", "whisper")
	t.ok(a:request("tell carol hi"):match "^err tell carol is not online", "tell offline")
	t.ok(a:request("say"):match "^err say usage", "empty say")
	t.ok(a:request("say " .. string.rep("x", 201)):match "^err say text too long", "long say")
	t.eq(b:request "move s", "ok move x=5 y=6", "bob moves")
	t.eq(a:expect "^move bob", "move bob 5 6", "alice sees it")
	t.ok(fields(a:request "look").players == "bob@5,6", "look shows bob")
	b:close()
	t.eq(a:expect "^leave ", "leave bob", "bob left")
	a:close()
end)

t.case("say answers the sender with how many players heard it", function()
	local g = game.start {}
	local a = game.login(g, "alice")
	t.eq(a:request "say anyone here?", "ok say heard=0", "alone")
	local b = game.login(g, "bob")
	local c = game.login(g, "carol")
	t.eq(a:request "say hi all", "ok say heard=2", "two listeners")
	t.eq(b:expect "^chat ", "chat alice hi all", "bob hears")
	t.eq(c:expect "^chat ", "chat alice hi all", "carol hears")
	for _, msg in ipairs(a.pushes) do
		t.ok(not msg:match "^chat ", "no echo push to the sender: " .. msg)
	end
	c:close()
	t.ok(game.wait_for(function()
		return game.stats(g).online == 2
	end), "carol gone")
	t.eq(a:request "say bye", "ok say heard=1", "one listener left")
	a:close()
	b:close()
end)

t.case("view: players far apart do not hear each other's chat", function()
	local g = game.start { map_width = 40, map_height = 40, view = 3 }
	local a = game.login(g, "alice")
	local b = game.login(g, "bob")
	a:expect "^enter bob"
	for _ = 1, 4 do
		t.ok(b:request("move e"):match "^ok move", "bob walks away")
	end
	t.eq(b:request "say far away", "ok say heard=0", "say: nobody heard it")
	t.eq(a:request "ping", "ok ping", "alice still served")
	for _, msg in ipairs(a.pushes) do
		t.ok(not msg:match "^chat ", "alice heard: " .. msg)
	end
	t.eq(fields(a:request "look").players, "none", "bob out of sight")
	a:close()
	b:close()
end)

t.case("a second login under the same name replaces the first session", function()
	local g = game.start {}
	local a1 = game.login(g, "alice")
	t.eq(a1:request "move n", "ok move x=5 y=4", "moved")
	local a2, r = game.login(g, "alice")
	t.eq(r.new, "no", "same player")
	t.eq(r.x .. "," .. r.y, "5,4", "same position")
	t.ok(a1:wait_closed(), "the first session is closed")
	t.ok(a1.pushes[#a1.pushes]:match "^kick replaced", "told why: " .. tostring(a1.pushes[#a1.pushes]))
	t.eq(a2:request "move n", "ok move x=5 y=3", "the new session plays")
	t.ok(game.wait_for(function()
		local n = 0
		for _ in pairs(skynet.call(g.watchdog, "lua", "agents")) do
			n = n + 1
		end
		return n == 1
	end), "one agent left")
	t.eq(game.stats(g).online, 1, "one online")
	a2:close()
end)

t.start()
