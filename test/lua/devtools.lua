-- Headless Debian chromium for the browser tests (test_browser, test_top,
-- test_profile_page), driven through its DevTools protocol by a small
-- client on http.websocket.
--   local devtools = require "devtools"
--   local browser = devtools.start { window = "1200,800" } -- waits for DevTools
--   local c = devtools.connect(browser.url)
--   c:call(method, params, session) -> result   (raises on a protocol error)
--   c:eval(session, expr) -> value              (raises on a page exception)
--   c:press(session, "up" | "space" | "1")
--   devtools.stop(browser)                      (kills it, removes its folder)
local skynet = require "skynet"
local websocket = require "http.websocket"
local json = require "json_min"

local M = {}

local function shell(cmd)
	local p = io.popen(cmd)
	local out = p:read "a"
	p:close()
	return out
end

-- True when a chromium is installed (3rd/deps-test.sh installs it).
function M.available()
	return not shell("command -v chromium"):match "^%s*$"
end

-- Starts chromium on about:blank; returns { pid, dir, url } once it prints
-- its DevTools address (raises after 30 s).
function M.start(opts)
	local dir = shell("mktemp -d"):gsub("%s+$", "")
	-- TMPDIR: chromium makes a folder of its own there (its singleton
	-- socket), which goes with dir instead of staying in /tmp.
	local pid = tonumber(shell(string.format("TMPDIR=%s chromium --headless=new --no-sandbox --disable-gpu "
		.. "--no-first-run --disable-extensions --disable-background-networking --window-size=%s "
		.. "--remote-debugging-address=127.0.0.1 --remote-debugging-port=0 --user-data-dir=%s/data "
		.. "about:blank >%s/out 2>&1 & echo $!", dir, opts and opts.window or "1000,700", dir, dir)))
	local browser = { pid = pid, dir = dir }
	local deadline = skynet.now() + 3000
	while skynet.now() < deadline do
		local f = io.open(dir .. "/out")
		local text = f and f:read "a"
		if f then
			f:close()
		end
		browser.url = text and text:match "DevTools listening on (ws://%S+)"
		if browser.url then
			return browser
		end
		skynet.sleep(5)
	end
	M.stop(browser)
	error("timed out waiting for chromium's DevTools address", 2)
end

function M.stop(browser)
	if browser.pid then
		os.execute(string.format("kill %d 2>/dev/null; sleep 0.3; kill -9 %d 2>/dev/null", browser.pid,
			browser.pid))
		browser.pid = nil
	end
	if browser.dir then
		os.execute("rm -rf " .. browser.dir)
		browser.dir = nil
	end
end

local client = {}
client.__index = client

-- A client on one websocket; events are counted (c.events) and dropped.
function M.connect(url)
	return setmetatable({ ws = websocket.connect(url, nil, 500), id = 0, events = 0 }, client)
end

-- One request; waits for the answer with its id.
function client:call(method, params, session)
	self.id = self.id + 1
	local msg = { id = self.id, method = method, params = params, sessionId = session }
	if params == nil or next(params) == nil then
		msg.params = json.null
	end
	websocket.write(self.ws, json.encode(msg))
	while true do
		local data = websocket.read(self.ws)
		if not data then
			error("devtools connection closed", 2)
		end
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

function client:eval(session, expr)
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

function client:press(session, name)
	local k = KEYS[name]
	self:call("Input.dispatchKeyEvent", { type = "keyDown", key = k.key, code = k.code,
		windowsVirtualKeyCode = k.windowsVirtualKeyCode, text = k.text }, session)
	self:call("Input.dispatchKeyEvent", { type = "keyUp", key = k.key, code = k.code,
		windowsVirtualKeyCode = k.windowsVirtualKeyCode }, session)
end

return M
