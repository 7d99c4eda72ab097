-- The demo game's durable parts (examples/world.lua, examples/mailbox.lua)
-- over a reminder service on a SQLite file in a temporary folder, in
-- virtual time: a chest opens 2 minutes after `chest` with its gold, a
-- second one is refused meanwhile, status shows the time left; a chest
-- that opens while its player is offline, mail from another player and the
-- daily reset wait in the mailbox until the next login; a restart of the
-- reminder service, and of the world (a node restart: the players are
-- forgotten), loses neither the chest nor the mail.
local skynet = require "skynet"
local reminder = require "skynet.reminder"
local t = require "testlib"
local game = require "svc_game_util"

local fields = game.fields

local CHEST_CS <const> = 12000 -- the default: 2 minutes

local dir
local svc -- the reminder service (.reminder) of the case

local function start_reminders(file)
	svc = skynet.newservice("reminderd", "sqlite:" .. dir .. "/" .. file, ".reminder")
end

local function stop_reminders()
	skynet.kill(svc)
	svc = nil
end

local function fresh(file)
	if svc then
		stop_reminders()
	end
	start_reminders(file)
end

local function offline(g, n)
	return game.wait_for(function()
		return game.stats(g).online == n
	end)
end

local function waiting_mail(name)
	return #reminder.list("mail:" .. name .. ":")
end

t.case("a chest opens 2 minutes later with its gold; a second one is refused meanwhile", function()
	fresh "open.db"
	local g = game.start {}
	local c = game.login(g, "alice")
	t.eq(fields(c:request "status").chest, "none", "no chest yet")
	t.ok(c:request("chest shut"):match "^err chest usage: chest %[open%]", "usage")
	local t0 = skynet.now()
	t.eq(c:request "chest", "ok chest opens_in=120.0 gold=100", "started")
	t.eq(c:request "chest open", "err chest a chest is already opening (opens in 120.0s)",
		"the second is refused")
	t.eq(reminder.get("chest:alice").payload, "alice", "kept as the reminder chest:alice")
	skynet.sleep(4500)
	t.eq(fields(c:request "status").chest, "75.0", "status: the time left")
	t.ok(c:request("chest"):match "^err chest a chest is already opening %(opens in 75%.0s%)",
		"still refused")
	skynet.sleep(CHEST_CS - 4500 - 10)
	t.ok(not c:saw("^chest ", 5), "not before its time")
	t.eq(c:expect("^chest ", 100), "chest opened gold=+100 total=100", "opened with its gold")
	local took = skynet.now() - t0
	t.ok(took >= CHEST_CS and took <= CHEST_CS + 5, "after 2 minutes: " .. took)
	local st = fields(c:request "status")
	t.eq(st.gold, "100", "gold")
	t.eq(st.chest, "none", "no chest opening")
	t.ok(game.wait_for(function()
		return reminder.get "chest:alice" == nil
	end), "the run was acknowledged")
	t.eq(c:request "chest", "ok chest opens_in=120.0 gold=100", "the next chest")
	c:close()
end)

t.case("a chest that opens while its player is offline waits for the next login", function()
	fresh "away.db"
	local g = game.start {}
	local c = game.login(g, "bob")
	t.eq(c:request "chest", "ok chest opens_in=120.0 gold=100", "started")
	c:close()
	t.ok(offline(g, 0), "bob logged out")
	skynet.sleep(CHEST_CS + 100)
	t.eq(reminder.get "chest:bob", nil, "opened")
	t.eq(waiting_mail "bob", 1, "its gold waits in the mailbox")
	t.eq(game.inspect(g, "bob").gold, 0, "not credited while offline")
	skynet.sleep(1000)
	local c2, r = game.login(g, "bob")
	t.eq(r.mail, "1", "the login answer counts what waits")
	local push = c2:expect "^chest opened "
	t.ok(push:match "^chest opened gold=%+100 total=100 ago=%d+%.%d$", "delivered: " .. push)
	local ago = tonumber(fields(push).ago)
	t.ok(ago >= 11 and ago < 11.5, "opened while offline, 11 s before the login: " .. ago)
	t.eq(fields(c2:request "status").gold, "100", "credited")
	t.eq(waiting_mail "bob", 0, "taken out of the mailbox")
	c2:close()
	t.ok(offline(g, 0), "logged out again")
	local c3, r3 = game.login(g, "bob")
	t.eq(r3.mail, "0", "delivered once")
	t.eq(c3:request "ping", "ok ping", "nothing more")
	for _, m in ipairs(c3.pushes) do
		t.ok(not m:match "^chest ", "no second delivery: " .. m)
	end
	c3:close()
end)

t.case("mail: now to a player online, at the next login to one offline, in order", function()
	fresh "mail.db"
	local g = game.start {}
	local a = game.login(g, "alice")
	local b = game.login(g, "bob")
	t.eq(b:request "mail alice hi there", "ok mail to=alice delivered=now", "online: now")
	t.eq(a:expect "^mail ", "mail bob hi there", "pushed")
	t.ok(b:request("mail alice"):match "^err mail usage: mail <name> <text>", "usage")
	t.ok(b:request("mail m1 hello"):match "^err mail no player can be called m1", "bad name")
	a:close()
	t.ok(offline(g, 1), "alice logged out")
	t.eq(b:request "mail alice first", "ok mail to=alice delivered=later", "offline: kept")
	t.eq(b:request "mail alice second  one", "ok mail to=alice delivered=later", "kept too")
	t.eq(b:request "mail zed_new hello", "ok mail to=zed_new delivered=later",
		"a name the world has not seen yet")
	t.eq(waiting_mail "alice", 2, "two waiting")
	local a2, r = game.login(g, "alice")
	t.eq(r.mail, "2", "two announced")
	t.eq(a2:expect "^mail ", "mail bob first", "the first")
	t.eq(a2:expect "^mail ", "mail bob second  one", "then the second (spaces kept)")
	t.ok(game.wait_for(function()
		return waiting_mail "alice" == 0
	end), "removed once delivered")
	for i = 1, 19 do
		t.eq(b:request("mail zed_new note " .. i), "ok mail to=zed_new delivered=later", "note " .. i)
	end
	t.ok(b:request("mail zed_new one more"):match "^err mail the mailbox of zed_new is full %(20 waiting%)",
		"a full mailbox")
	a2:close()
	b:close()
end)

t.case("the daily reset reaches an offline player at the next login, once", function()
	fresh "daily.db"
	local g = game.start { quest_kills = 3 }
	local c = game.login(g, "carol")
	c:close()
	t.ok(offline(g, 0), "carol logged out")
	skynet.call(g.world, "lua", "daily_reset")
	skynet.sleep(100)
	skynet.call(g.world, "lua", "daily_reset")
	t.ok(game.wait_for(function()
		return waiting_mail "carol" == 1
	end), "one item, however many resets")
	local c2, r = game.login(g, "carol")
	t.eq(r.mail, "1", "announced")
	t.ok(c2:expect "^daily reset ":match "^daily reset quest=0/3 ago=%d+%.%d$", "delivered")
	t.ok(game.wait_for(function()
		return waiting_mail "carol" == 0
	end), "taken out of the mailbox")
	c2:close()
end)

t.case("the reminder service restarts: the chest is not lost", function()
	fresh "restart.db"
	local g = game.start {}
	local c = game.login(g, "dan")
	local t0 = skynet.now()
	t.eq(c:request "chest", "ok chest opens_in=120.0 gold=100", "started")
	skynet.sleep(3000)
	stop_reminders()
	t.eq(fields(c:request "status").chest, "off", "no reminder service: status says so")
	start_reminders "restart.db"
	t.eq(fields(c:request "status").chest, "90.0", "the new service knows the chest")
	t.eq(c:request "chest", "err chest a chest is already opening (opens in 90.0s)", "still one")
	t.eq(c:expect("^chest ", CHEST_CS), "chest opened gold=+100 total=100", "opened")
	local took = skynet.now() - t0
	t.ok(took >= CHEST_CS and took <= CHEST_CS + 5, "on time: " .. took)
	-- Down while it comes due: it opens as soon as the service is back.
	t.eq(c:request "chest", "ok chest opens_in=120.0 gold=100", "a second chest")
	skynet.sleep(3000)
	stop_reminders()
	skynet.sleep(CHEST_CS)
	t.ok(not c:saw("^chest ", 1), "nothing while the service is down")
	start_reminders "restart.db"
	t.eq(c:expect("^chest ", 100), "chest opened gold=+100 total=200", "opened once back")
	c:close()
end)

t.case("a node restart: the new world knows no player, the chest's gold still arrives", function()
	fresh "node.db"
	local g = game.start { world_name = ".world_node" }
	local c = game.login(g, "erin")
	t.eq(c:request "chest", "ok chest opens_in=120.0 gold=100", "started")
	t.eq(c:request "mail erin a note to myself", "ok mail to=erin delivered=now", "mail to self")
	c:expect "^mail erin "
	c:close()
	t.ok(offline(g, 0), "erin logged out")
	local b = game.login(g, "bob")
	t.eq(b:request "mail erin see you after the restart", "ok mail to=erin delivered=later", "kept")
	b:close()
	-- The node goes: the world, its watchdog and the reminder service.
	skynet.sleep(1000)
	skynet.kill(g.watchdog)
	skynet.kill(g.world)
	stop_reminders()
	skynet.sleep(CHEST_CS)
	start_reminders "node.db"
	local g2 = game.start { world_name = ".world_node" }
	t.ok(game.wait_for(function()
		return reminder.get "chest:erin" == nil
	end, 500), "the chest opened into the new world")
	local c2, r = game.login(g2, "erin")
	t.eq(r.new, "yes", "the world forgot erin")
	t.eq(r.mail, "2", "not the mailbox")
	t.eq(c2:expect "^mail ", "mail bob see you after the restart", "the mail, sent first")
	t.ok(c2:expect "^chest opened ":match "^chest opened gold=%+100 total=100 ago=", "the chest's gold")
	t.eq(fields(c2:request "status").gold, "100", "credited")
	c2:close()
end)

t.case("clean up", function()
	if svc then
		stop_reminders()
	end
	os.execute("rm -rf '" .. dir .. "'")
end)

t.start(nil, function()
	dir = t.tmpdir()
end)
