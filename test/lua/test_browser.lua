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
local json = require "json_min"

local tmp, chromium_pid

local function shell(cmd)
	local p = io.popen(cmd)
	local out = p:read("a")
	p:close()
	return out
end

local function wait(pred, limit, what)
	local deadline = skynet.now() + (limit or 1000)
	while skynet.now() < deadline do
		local v = pred()
		if v then
			return v
		end
		skynet.sleep(5)
	end
	error("timed out waiting for " .. (what or "a condition"), 2)
end

-- A DevTools client on one websocket: call(method, params, session) waits
-- for the answer with the same id; events are counted and dropped.
local cdp = {}
cdp.__index = cdp

local function cdp_connect(url)
	return setmetatable({ ws = websocket.connect(url, nil, 500), id = 0, events = 0 }, cdp)
end

function cdp:call(method, params, session)
	self.id = self.id + 1
	local msg = { id = self.id, method = method, params = params or {} }
	if next(msg.params) == nil then
		msg.params = json.null
	end
	msg.sessionId = session
	websocket.write(self.ws, json.encode(msg))
	while true do
		local data = websocket.read(self.ws)
		t.ok(data, "devtools connection closed")
		local m = json.decode(data)
		if m.id == self.id then
			if m.error then
				error(string.format("%s: %s", method, json.encode(m.error)), 2)
			end
			return m.result
		end
		self.events = self.events + 1
	end
end

function cdp:eval(session, expr)
	local r = self:call("Runtime.evaluate", { expression = expr, returnByValue = true }, session)
	if r.exceptionDetails then
		error("page error: " .. json.encode(r.exceptionDetails), 2)
	end
	return r.result.value
end

local KEYS = {
	up = { key = "ArrowUp", code = "ArrowUp", windowsVirtualKeyCode = 38 },
	space = { key = " ", code = "Space", windowsVirtualKeyCode = 32, text = " " },
	["1"] = { key = "1", code = "Digit1", windowsVirtualKeyCode = 49, text = "1" },
}

function cdp:press(session, name)
	local k = KEYS[name]
	local down = { type = "keyDown", key = k.key, code = k.code,
		windowsVirtualKeyCode = k.windowsVirtualKeyCode, text = k.text }
	self:call("Input.dispatchKeyEvent", down, session)
	self:call("Input.dispatchKeyEvent", { type = "keyUp", key = k.key, code = k.code,
		windowsVirtualKeyCode = k.windowsVirtualKeyCode }, session)
end

local function start_chromium()
	tmp = shell("mktemp -d"):gsub("%s+$", "")
	local cmd = string.format("chromium --headless=new --no-sandbox --disable-gpu --no-first-run "
		.. "--disable-extensions --disable-background-networking --window-size=1000,700 "
		.. "--remote-debugging-address=127.0.0.1 --remote-debugging-port=0 --user-data-dir=%s/profile "
		.. "about:blank >%s/out 2>&1 & echo $!", tmp, tmp)
	chromium_pid = tonumber(shell(cmd))
	return wait(function()
		local f = io.open(tmp .. "/out")
		if not f then
			return nil
		end
		local text = f:read("a")
		f:close()
		return text:match "DevTools listening on (ws://%S+)"
	end, 3000, "chromium's DevTools address")
end

local function stop_chromium()
	if chromium_pid then
		os.execute(string.format("kill %d 2>/dev/null; sleep 0.3; kill -9 %d 2>/dev/null", chromium_pid,
			chromium_pid))
		chromium_pid = nil
	end
	if tmp then
		os.execute("rm -rf " .. tmp)
		tmp = nil
	end
end

local function browser_case()
	if shell("command -v chromium"):match "^%s*$" then
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

	local url = start_chromium()
	local c = cdp_connect(url)
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
	stop_chromium()
	if not ok then
		error(err, 0)
	end
end)

t.start()
