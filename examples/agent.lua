-- The demo game's agent: one per connected client, made by the watchdog.
-- The gate forwards the client's frames here (PTYPE_CLIENT, session = fd).
-- Requests are handled one at a time, in order, so their answers come back
-- in request order; game requests go to the world.
--
-- Back-pressure: frames wait in a FIFO of strings served by one coroutine
-- (not one parked coroutine each), so one request is in flight at a time.
-- Each waiting frame is declared to the framework's flow control
-- (socketdriver.flow_hold): the gate names this agent as the consumer of
-- the client's connection, so once the waiting frames and the mailbox
-- reach socket_flow_high_msgs the connection stops being read and the
-- client's further bytes wait in the kernel; reading resumes as the FIFO
-- drains. Frames the gate had already read when that happened still
-- arrive; past FLOOD_LIMIT waiting frames the client is kicked. Frames
-- still waiting when the session closes (kick, idle, disconnect) are
-- dropped unanswered.
local skynet = require "skynet"
local socket = require "skynet.socket"
local driver = require "skynet.socketdriver"
local proto = require "proto"
local loglimit = require "skynet.loglimit"

local sformat = string.format
local spack = string.pack

local S -- settings
local fd, gate, watchdog, world
local name -- the player, once logged in
local joining -- the name of a login the world is handling now
local idle_obj -- the pending idle-kick timeout
local reward_obj -- the pending reward timeout
local reward_due -- skynet.now() of the next reward
local closing = false
local log = loglimit.new() -- failed requests (the client decides how often)

local FLOOD_LIMIT <const> = 4096 -- waiting frames: kick the client
local fifo = { h = 1, t = 0 } -- frames not handled yet: fifo[h..t]
local serving = false -- a coroutine is working through the FIFO
local most_waiting = 0 -- the longest the FIFO was (for tests)

local function waiting()
	return fifo.t - fifo.h + 1
end

-- Drops every waiting frame (and its weight in flow control).
local function drop_waiting()
	local n = waiting()
	fifo = { h = 1, t = 0 }
	if n > 0 then
		driver.flow_hold(-n)
	end
end

local CMD = {}
local LOCAL = {} -- requests answered here

local function write(text)
	if not closing then
		socket.write(fd, spack(">s2", text))
	end
end

-- Asks the watchdog to disconnect the client (after reason is pushed).
local function kick(reason)
	if closing then
		return
	end
	write("kick " .. reason)
	closing = true
	drop_waiting()
	skynet.send(watchdog, "lua", "close", fd)
end

local function on_idle()
	idle_obj = nil
	kick(sformat("idle (%ss without a message)", proto.secs(S.idle_kick_cs)))
end

local function reset_idle()
	if idle_obj then
		skynet.killthread(idle_obj) -- cancels the pending timer
	end
	idle_obj = skynet.timeout(S.idle_kick_cs, on_idle)
end

local function reward_left()
	return reward_due - skynet.now()
end

local give_reward

local function arm_reward(delay)
	reward_due = skynet.now() + delay
	reward_obj = skynet.timeout(delay, give_reward)
end

function give_reward()
	reward_obj = nil
	arm_reward(S.reward_cs)
	local total = skynet.call(world, "lua", "reward", name, S.reward_gold)
	write(sformat("reward gold=+%d total=%d next=%s", S.reward_gold, total, proto.secs(S.reward_cs)))
end

-- Progress towards the next reward (cs), and stops the reward timer.
local function stop_reward()
	if reward_obj == nil then
		return 0
	end
	skynet.killthread(reward_obj)
	reward_obj = nil
	local progress = S.reward_cs - reward_left()
	if progress < 0 then
		progress = 0
	end
	return progress
end

---------------------------------------------------------------- requests

local HELP <const> = "commands=login,look,move,say,tell,mail,attack,cast,chest,status,ping,help,quit"
	.. " skills=shield,rage,regen,poison,freeze,dispel dirs=n,s,e,w,ne,nw,se,sw"

function LOCAL.help()
	return "ok help " .. HELP
end

function LOCAL.ping()
	return "ok ping"
end

function LOCAL.quit()
	write("ok quit")
	kick("bye")
end

-- Answers an error, or writes the answer itself and then, when the answer
-- counts mail (mail=N), asks the world to push it: after the answer.
function LOCAL.login(line)
	local w = proto.words(line)
	if #w ~= 2 then
		return "err login usage: login <name>"
	end
	if name then
		return "err login already logged in as " .. name
	end
	joining = w[2]
	local reply, progress = skynet.call(world, "lua", "login", w[2], fd)
	joining = nil
	if reply:sub(1, 3) ~= "ok " then
		return reply
	end
	name = w[2]
	arm_reward(S.reward_cs - math.min(progress, S.reward_cs - 1))
	write(sformat("%s reward_in=%s", reply, proto.secs(reward_left())))
	if reply:match " mail=[1-9]" then -- what waited comes after the answer
		skynet.send(world, "lua", "deliver_mail", name)
	end
end

-- The answer to one request line (nil: nothing to answer).
local function handle(line)
	line = line:gsub("\r?\n$", "") -- tolerate a line end
	if #line > S.max_request then
		return sformat("err ? request too long (%d bytes, at most %d)", #line, S.max_request)
	end
	local cmd = line:match "^%s*(%S+)"
	if cmd == nil then
		return "err ? empty request (try help)"
	end
	if #cmd > 16 or not cmd:match "^%a+$" then
		return "err ? not a command (try help)"
	end
	cmd = cmd:lower()
	if line:find "%c" then
		return "err " .. cmd .. " control characters in the request"
	end
	local f = LOCAL[cmd]
	if f then
		return f(line)
	end
	if name == nil then
		return "err " .. cmd .. " not logged in (login <name> first)"
	end
	local reply = skynet.call(world, "lua", "request", name, cmd, line)
	if cmd == "status" and reply:sub(1, 3) == "ok " then
		reply = sformat("%s reward_in=%s", reply, proto.secs(reward_left()))
	end
	return reply
end

local function on_frame(msg)
	if closing then
		return
	end
	reset_idle()
	local ok, reply = xpcall(handle, debug.traceback, msg)
	if not ok then
		log("error: agent: request failed fd=%d: %s", fd, reply)
		local cmd = msg:match "^%s*(%a+)"
		reply = "err " .. (cmd and cmd:lower() or "?") .. " internal error"
	end
	if reply then
		write(reply)
	end
end

local function serve()
	serving = true
	while not closing and waiting() > 0 do
		local h = fifo.h
		local msg = fifo[h]
		fifo[h] = nil
		fifo.h = h + 1
		driver.flow_hold(-1)
		on_frame(msg)
	end
	serving = false
end

skynet.register_protocol {
	name = "client",
	id = skynet.PTYPE_CLIENT,
	unpack = skynet.tostring,
	dispatch = function(session, _, msg)
		skynet.ignoreret()
		if session ~= fd or closing then
			return
		end
		local t = fifo.t + 1
		fifo[t] = msg
		fifo.t = t
		driver.flow_hold(1)
		local n = waiting()
		if n > most_waiting then
			most_waiting = n
		end
		if n > FLOOD_LIMIT then
			kick(sformat("flooding (more than %d requests waiting)", FLOOD_LIMIT))
			return
		end
		if not serving then
			serve()
		end
	end,
}

---------------------------------------------------------------- lua commands

function CMD.start(conf)
	fd, gate, watchdog, world, S = conf.client, conf.gate, conf.watchdog, conf.world, conf.settings
	reset_idle()
	write("hello welcome to the skywheel arena: type login <name> to play, help for commands")
	skynet.call(gate, "lua", "forward", fd)
end

-- The world gave the name to a newer session: hand back the reward
-- progress and disconnect.
function CMD.replaced()
	local progress = stop_reward()
	name = nil
	kick("replaced (logged in from elsewhere)")
	return progress
end

-- The client is gone (closed, kicked or failed): save and exit.
function CMD.disconnect()
	closing = true
	drop_waiting()
	if name then
		local progress = stop_reward()
		skynet.send(world, "lua", "logout", name, progress)
		name = nil
	end
	skynet.exit()
end

-- Counters for tests: pending timers of this agent, the player name and
-- the FIFO of waiting requests.
function CMD.stats()
	return {
		timers = skynet.stat "timers", name = name, waiting = waiting(), most_waiting = most_waiting,
	}
end

-- What the debug console's `info <agent>` shows.
skynet.info_func(function()
	return { fd = fd, player = name or "(not logged in)", timers = skynet.stat "timers" }
end)

-- The last will. Runs while the service's Lua state is being closed, after
-- the service has ended: nothing here may wait (no calls, no socket reads);
-- sends are fine. A normal disconnect has logged out already (name is nil).
-- A login in flight may have gone through: the world ignores the logout of a
-- name this agent does not hold.
local function last_will()
	local who = name or joining
	if who and world then
		local progress -- unknown during a login: the world keeps the saved one
		if name and reward_due then
			progress = math.max(0, S.reward_cs - reward_left())
		end
		skynet.send(world, "lua", "logout", who, progress)
		name, joining = nil, nil
	end
	if watchdog then
		skynet.send(watchdog, "lua", "gone", fd)
	end
end

-- Anchored in the registry: only the closing of the Lua state collects it.
debug.getregistry().agent_last_will = setmetatable({}, { __gc = last_will })

skynet.start(function()
	skynet.dispatch("lua", function(session, _, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			skynet.error(sformat("error: agent: unknown command (%s)", tostring(cmd)))
			if session ~= 0 then
				skynet.response()(false) -- the caller's call fails, not a nil answer
			end
			return
		end
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end)
