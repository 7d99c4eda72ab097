-- test: real time (a real browser talks to the node over real sockets)
-- The browser arena: Debian's chromium, headless, driven through its
-- DevTools protocol by a small client written here on http.websocket (so
-- this is also a WebSocket client test against a foreign server). The page
-- logs in, moves with the arrow keys, attacks with space, casts with "1",
-- and its state (window.arena and the DOM) is read back; a terminal client
-- logged in beside it sees the browser player and is seen by it; chat
-- flows both ways, and the page shows its own. What the page says: a hint
-- before login, a greeting for a browser (not the terminal's "type login
-- <name>"), "cast by you" for its own buffs, errors as "error (cmd): why";
-- and what it draws: monsters with their hp, every label inside the
-- canvas (a monster on the top row too). A screenshot is saved to
-- build/browser_arena.png. Without chromium the test says so and passes.
local skynet = require "skynet"
local t = require "testlib"
local game = require "svc_game_util"
local websocket = require "http.websocket"
local crypt = require "skynet.crypt"
local devtools = require "devtools"

local browser -- the running chromium (devtools.start)

local wait = t.wait_for

local function browser_case()
	if not devtools.available() then
		print("skip browser: chromium is not installed (3rd/deps-test.sh installs it)")
		return
	end
	local g = game.start { monster_count = 2, monster_spots = "5,3 2,0", monster_hp = 10,
		monster_attack_cs = 360000, player_spot = "5,5" }
	local web = skynet.newservice("svc_game_svc", "webgate")
	local _, wport = skynet.call(web, "lua", "start", { web_address = "127.0.0.1", web_port = 0,
		gate_address = "127.0.0.1", gate_port = g.port, max_request = 256, root = "examples/web" })
	local term = game.connect(g)
	t.ok(term:request("login term"):find("^ok login"), "terminal login")

	browser = devtools.start { window = "1000,700" }
	local c = devtools.connect(browser.url)
	local target = c:call("Target.createTarget", { url = string.format("http://127.0.0.1:%d/", wport) })
	local session = c:call("Target.attachToTarget", { targetId = target.targetId, flatten = true })
		.sessionId
	wait(function()
		return c:eval(session, "document.readyState === 'complete' && !!window.arena")
	end, 1000, "the page")
	-- before login: a hint says what to do
	t.ok(c:eval(session, "arena.log.some(l => l.startsWith('type a name above and press play'))"),
		"a hint before login")
	c:eval(session, "document.getElementById('name').value = 'web';"
		.. " document.getElementById('login').requestSubmit(); true")
	wait(function()
		return c:eval(session, "arena.name === 'web' && arena.players.term !== undefined")
	end, 1000, "the browser login and its look")
	term:expect("^enter web 5 5")
	local hello = c:eval(session, "arena.log.find(l => l.startsWith('welcome to the skywheel arena'))")
	t.ok(hello and not hello:find("login", 1, true) and hello:find("arrows move", 1, true),
		"a greeting for a browser: " .. tostring(hello))
	-- monsters are drawn with their hp; labels stay on the canvas, the top row's too
	local labels = wait(function()
		local v = c:eval(session, "JSON.stringify(arena.labels)")
		return v:find("m2 10hp", 1, true) and v
	end, 300, "the monsters' labels")
	t.ok(labels:find('"m1 10hp"', 1, true), "m1's hp drawn: " .. labels)
	t.ok(c:eval(session, "arena.labels.length > 0 && arena.labels.every(l => l.y >= 0"
		.. " && l.y + 10 <= document.getElementById('map').height)"), "labels inside the canvas: " .. labels)

	-- arrows move: the page's position and the terminal's view agree
	c:press(session, "up")
	wait(function()
		return c:eval(session, "arena.y === 4 && arena.x === 5")
	end, 500, "the move")
	term:expect("^move web 5 4")

	-- space attacks the monster next to us (m1 at 5,3 dies in one hit)
	c:press(session, "space")
	wait(function()
		return c:eval(session, "arena.kills === 1 && arena.monsters.m1 && arena.monsters.m1.dead")
	end, 500, "the kill")
	t.eq(c:eval(session, "arena.gold"), 5, "gold for the kill")
	wait(function()
		return c:eval(session, "document.getElementById('quest').textContent === '1/3'")
	end, 300, "the quest in the panel")
	term:expect("^die m1 web")
	t.ok(c:eval(session, "arena.log.includes('m1 was killed by you')"), "killed by you")

	-- space again: no monster next to us; the error says which request and why
	c:press(session, "space")
	wait(function()
		return c:eval(session, "arena.log.some(l => l.startsWith('error (attack): no monster next to you'))")
	end, 500, "the attack's error")

	-- "1" casts shield: a live countdown in the panel
	c:press(session, "1")
	local text = wait(function()
		local s = c:eval(session, "document.getElementById('buffs').textContent")
		return s:find("shield", 1, true) and s
	end, 500, "the shield buff")
	t.ok(text:match "shield (%d+%.%d)s", text)
	t.ok(c:eval(session, "arena.log.includes('you gain shield for 10.0s (cast by you)')"),
		"cast by you")
	skynet.sleep(30)
	local later = c:eval(session, "document.getElementById('buffs').textContent")
	t.ok(tonumber(later:match "shield (%d+%.%d)s") < tonumber(text:match "shield (%d+%.%d)s"),
		"the countdown runs: " .. text .. " then " .. later)

	-- the terminal player talks, the page shows it
	term:request("say hello web")
	wait(function()
		return c:eval(session, "arena.log.some(l => l === '[chat] term: hello web')")
	end, 500, "the chat line")
	-- the page talks: its own line shows, the terminal gets it
	c:eval(session, "document.getElementById('say').value = 'hi term';"
		.. " document.getElementById('chat').requestSubmit(); true")
	term:expect("^chat web hi term$")
	wait(function()
		return c:eval(session, "arena.log.includes('[chat] you: hi term')")
	end, 500, "the page's own chat line")
	wait(function()
		return c:eval(session, "document.getElementById('hp').textContent === arena.hp + '/100'"
			.. " && arena.hp > 0")
	end, 300, "hp in the panel")

	local shot = c:call("Page.captureScreenshot", { format = "png" }, session)
	local png = crypt.base64decode(shot.data)
	t.eq(png:sub(1, 8), "\x89PNG\r\n\26\n", "a PNG")
	os.execute("mkdir -p build")
	local f = assert(io.open("build/browser_arena.png", "wb"))
	f:write(png)
	f:close()
	websocket.close(c.ws)
	term:close()
end

t.case("the arena in a headless chromium", function()
	local ok, err = xpcall(browser_case, debug.traceback)
	if browser then
		devtools.stop(browser)
	end
	if not ok then
		error(err, 0)
	end
end)

t.start()
