-- Helpers shared by the demo game tests (test_game_*.lua). A library, not a
-- service: require "svc_game_util".
--
--   local game = require "svc_game_util"
--   local g = game.start { monster_count = 1 }   -- world + watchdog + gate
--   local c = game.connect(g)                     -- a scripted client
--   c:request "login alice"  --> "ok login name=alice ..."
--   c:expect "^buff alice shield"                 -- waits for a push
--
-- Every wait has a limit (cs); the game runs on the node's clock, so the
-- tests pass both in virtual time (test/config.test) and in real time.
local skynet = require "skynet"
local socket = require "skynet.socket"

local M = {}

local spack, sunpack = string.pack, string.unpack

M.LIMIT = 3000 -- cs to wait for an answer or an expected push

-- Test defaults: nothing happens by itself unless a test asks for it.
local BASE = {
	gate_address = "127.0.0.1",
	gate_port = 0,
	debug_console_port = 0,
	wrapper = "svc_game_svc",
	seed = 7,
	monster_count = 0,
	monster_move_cs = 0,
	idle_kick_cs = 360000,
	reward_cs = 360000,
	player_spot = "5,5",
}

local games = 0

-- Starts the game with settings t (over BASE): { port, world, watchdog }.
-- Each world gets a name of its own (.world1, .world2, ...: the name its
-- reminders call) unless t names it.
function M.start(t)
	games = games + 1
	local s = { world_name = ".world" .. games }
	for k, v in pairs(BASE) do
		s[k] = v
	end
	for k, v in pairs(t or {}) do
		s[k] = v
	end
	local world = skynet.newservice("svc_game_svc", "world")
	skynet.call(world, "lua", "init", s)
	local watchdog = skynet.newservice("svc_game_svc", "watchdog")
	local addr, port = skynet.call(watchdog, "lua", "start", s, world)
	assert(addr == "127.0.0.1" and math.type(port) == "integer" and port > 0, "game listens")
	return { port = port, world = world, watchdog = watchdog, settings = s }
end

local client = {}
client.__index = client

local function wake(c)
	local w = c.waiting
	if w then
		c.waiting = nil
		skynet.wakeup(w)
	end
end

-- Reads frames into c.inbox until the connection closes.
local function reader(c)
	while true do
		local h = socket.read(c.id, 2)
		if not h then
			break
		end
		local n = sunpack(">I2", h)
		local p = ""
		if n > 0 then
			p = socket.read(c.id, n)
			if not p then
				break
			end
		end
		c.inbox[#c.inbox + 1] = p
		c.log[#c.log + 1] = p
		wake(c)
	end
	c.closed = true
	wake(c)
end

-- A scripted client connected to game g (its welcome push is consumed).
function M.connect(g)
	local id = assert(socket.open("127.0.0.1", g.port))
	local c = setmetatable({ id = id, inbox = {}, pushes = {}, log = {}, closed = false }, client)
	skynet.fork(reader, c)
	local hello = c:next()
	assert(hello and hello:match "^hello ", "welcome push: " .. tostring(hello))
	return c
end

-- The next message, or nil, "closed" | "timeout".
function client:next(limit)
	local deadline = skynet.now() + (limit or M.LIMIT)
	while true do
		if #self.inbox > 0 then
			return table.remove(self.inbox, 1)
		end
		if self.closed then
			return nil, "closed"
		end
		local left = deadline - skynet.now()
		if left <= 0 then
			return nil, "timeout"
		end
		local token = {}
		self.waiting = token
		skynet.sleep(left, token)
		if self.waiting == token then
			self.waiting = nil
		end
	end
end

function client:send(line)
	socket.write(self.id, spack(">s2", line))
end

function client:raw(bytes)
	socket.write(self.id, bytes)
end

local function is_reply(msg)
	return msg:match "^ok " or msg:match "^err " or msg == "ok" or msg == "err"
end

-- Sends line and returns its answer; pushes that come first are kept in
-- self.pushes for expect.
function client:request(line, limit)
	self:send(line)
	return self:answer(limit)
end

-- The next answer (pushes on the way are kept).
function client:answer(limit)
	while true do
		local msg, err = self:next(limit)
		if msg == nil then
			error(string.format("no answer (%s)", err), 2)
		end
		if is_reply(msg) then
			return msg
		end
		self.pushes[#self.pushes + 1] = msg
	end
end

-- The first push matching pattern (kept or new); raises after the limit.
-- Answers that come meanwhile raise too (a test reads its answers).
function client:expect(pattern, limit)
	for i, msg in ipairs(self.pushes) do
		if msg:match(pattern) then
			table.remove(self.pushes, i)
			return msg
		end
	end
	while true do
		local msg, err = self:next(limit)
		if msg == nil then
			error(string.format("no push matching %q (%s)", pattern, err), 2)
		end
		if is_reply(msg) then
			error(string.format("an answer while waiting for %q: %s", pattern, msg), 2)
		end
		if msg:match(pattern) then
			return msg
		end
		self.pushes[#self.pushes + 1] = msg
	end
end

-- True if a kept or newly read push matches pattern within limit cs
-- (reads everything that comes meanwhile).
function client:saw(pattern, limit)
	local ok = pcall(self.expect, self, pattern, limit)
	return ok
end

-- Drops the kept pushes.
function client:flush()
	self.pushes = {}
end

-- Waits until the server closes the connection; true if it did.
function client:wait_closed(limit)
	while true do
		local msg, err = self:next(limit)
		if msg == nil then
			return err == "closed"
		end
		self.pushes[#self.pushes + 1] = msg
	end
end

function client:close()
	socket.close(self.id)
end

-- A client logged in as name; returns it and the login answer's fields.
function M.login(g, name)
	local c = M.connect(g)
	local r = c:request("login " .. name)
	assert(r:match "^ok login ", "login answer: " .. r)
	return c, M.fields(r)
end

function M.fields(msg)
	local t = {}
	for k, v in msg:gmatch "([%w_]+)=(%S*)" do
		t[k] = v
	end
	return t
end

-- Waits until pred() is true (polling each cs), at most limit cs.
function M.wait_for(pred, limit)
	local deadline = skynet.now() + (limit or M.LIMIT)
	while not pred() do
		if skynet.now() >= deadline then
			return false
		end
		skynet.sleep(1)
	end
	return true
end

function M.stats(g)
	return skynet.call(g.world, "lua", "stats")
end

function M.inspect(g, id)
	return skynet.call(g.world, "lua", "inspect", id)
end

-- The agent of the player name (nil if offline).
function M.agent(g, name)
	local p = M.inspect(g, name)
	return p and p.agent
end

return M
