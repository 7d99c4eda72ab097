-- The demo's terminal client. Runs with the system interpreter:
--   make client                     (connects to 127.0.0.1:8888)
--   LUA_CPATH='luaclib/?.so' lua5.4 examples/client.lua [host] [port]
-- Type `help` for the commands. Lines are sent as requests (examples/README.md
-- documents the protocol); answers and the server's pushes are printed in
-- words. With stdin not a terminal (a pipe or a file) the client sends every
-- line, waits for the answers, and exits: handy for scripted sessions.
-- When the server ends the session (a kick, or the connection closes) the
-- client prints why, leaves no prompt behind and exits (status 0; 1 when
-- the connection failed with an error). While input is open, a `ping` goes
-- out after PING_S seconds without a request (its answer is not shown),
-- so a player reading the screen is not kicked as idle. Escape sequences
-- that the terminal puts in a line (arrow keys: ESC [ A) are taken out of it.
local cs = require "clientsocket"

local host = arg[1] or "127.0.0.1"
local port = math.tointeger(tonumber(arg[2] or "8888"))
if port == nil then
	io.stderr:write("usage: lua5.4 examples/client.lua [host] [port]\n")
	os.exit(2)
end

local TTY = cs.isatty(0) and cs.isatty(1)
local PROMPT = TTY and "> " or ""

local KICK_WAIT <const> = 2 -- s to wait for the server's close after a kick
local PING_S <const> = 5 -- s without a request before a keep-alive ping (the server kicks at 30)
local AUTO_PING <const> = {} -- marks a keep-alive ping in `asked`

local me -- my player name, once logged in
local my_x, my_y
local maxhp = 100
local pending = 0 -- requests sent, not yet answered
local asked = {} -- those requests, oldest first (answers come in order); AUTO_PING for a keep-alive
local last_sent = os.time() -- when the last request went out
local kicked -- the reason, once the server has said it disconnects us
local input_open = true -- stdin not at its end yet
local closed = false -- the connection has ended
local fd

---------------------------------------------------------------- output

-- Prints a line over the prompt, and the prompt again after it while
-- input is taken (not after a kick, once stdin has ended or the connection
-- is gone).
local function out(text)
	if TTY then
		local prompt = (input_open and not kicked and not closed) and PROMPT or ""
		io.write("\r\27[K", text, "\n", prompt)
	else
		io.write(text, "\n")
	end
	io.flush()
end

local function words(s)
	local w = {}
	for x in s:gmatch "%S+" do
		w[#w + 1] = x
	end
	return w
end

local function fields(s)
	local t = {}
	for k, v in s:gmatch "([%w_]+)=(%S*)" do
		t[k] = v
	end
	return t
end

local function who(id)
	return id == me and "you" or id
end

-- "you gain" or "bob gains": the subject and its verb.
local function does(id, verb)
	if id == me then
		return "you " .. verb
	end
	return id .. " " .. verb .. "s"
end

local HELP = [[
Commands (type them at the > prompt):
  login <name>          enter the arena (1-16 letters/digits/_); your state is
                        kept if you reconnect with the same name
  look  (or l)          map of the arena: @ you, P players, M monsters, x dead
  n s e w ne nw se sw   move one cell (same as: move n)
  attack [m3] (or a)    hit a monster next to you (10 dmg; 20 with rage)
  cast <skill> [target] shield (halves damage taken, 10s)  rage (double damage, 8s)
                        regen (+5 hp/s, 6s)  poison <monster> (-3 hp/s, 6s)
                        freeze <monster> (no move/attack, 4s)
                        dispel [target] (removes all buffs and debuffs)
  say <text>            talk to everyone who sees you
  tell <name> <text>    whisper to one player
  mail <name> <text>    like tell, but a player who is offline gets it at the
                        next login
  chest                 start opening a chest: 100 gold in 2 minutes, even if
                        you log out (then it waits for your next login)
  status (or st)        hp, gold, quest, buffs, chest, time to the next reward
  ping                  keep the connection alive (30s idle = kicked)
  quit                  leave (Ctrl-D too)
Monsters hit you when you stand next to them; dead monsters come back after 5s.
Every 60s online earns gold; kill 3 monsters for the daily quest.]]

local SHORT = {
	l = "look", st = "status", a = "attack",
}
local DIRS = {
	n = true, s = true, e = true, w = true, ne = true, nw = true, se = true, sw = true,
}

-- A map of the arena from an "ok look" answer.
local function draw_look(f)
	local w, h = (f.map or ""):match "^(%d+)x(%d+)$"
	w, h = tonumber(w), tonumber(h)
	local lines = {}
	local you_x, you_y = (f.you or ""):match "^(%d+),(%d+)$"
	you_x, you_y = tonumber(you_x), tonumber(you_y)
	my_x, my_y = you_x, you_y
	local cells = {}
	local function mark(x, y, c)
		cells[y * 65536 + x] = c
	end
	local plist, mlist = {}, {}
	for e in (f.players or ""):gmatch "[^;]+" do
		local name, x, y, dead = e:match "^([%w_]+)@(%d+),(%d+)(.*)$"
		if name then
			mark(tonumber(x), tonumber(y), dead ~= "" and "x" or "P")
			plist[#plist + 1] = string.format("%s at %s,%s%s", name, x, y, dead ~= "" and " (dead)" or "")
		end
	end
	for e in (f.monsters or ""):gmatch "[^;]+" do
		local id, x, y, hp = e:match "^(m%d+)@(%d+),(%d+):(%w+)$"
		if id then
			mark(tonumber(x), tonumber(y), hp == "dead" and "x" or "M")
			mlist[#mlist + 1] = string.format("%s at %s,%s %s", id, x, y,
				hp == "dead" and "(dead)" or "hp " .. hp)
		end
	end
	if you_x then
		mark(you_x, you_y, "@")
	end
	if w and h and w <= 60 and h <= 40 then
		lines[#lines + 1] = "   +" .. string.rep("-", w) .. "+"
		for y = 0, h - 1 do
			local row = {}
			for x = 0, w - 1 do
				row[#row + 1] = cells[y * 65536 + x] or "."
			end
			lines[#lines + 1] = string.format("%2d |%s|", y, table.concat(row))
		end
		lines[#lines + 1] = "   +" .. string.rep("-", w) .. "+  (x grows east, y grows south)"
	end
	lines[#lines + 1] = string.format("you are at %s; players: %s", f.you or "?",
		#plist > 0 and table.concat(plist, ", ") or "none")
	lines[#lines + 1] = "monsters: " .. (#mlist > 0 and table.concat(mlist, ", ") or "none")
	out(table.concat(lines, "\n"))
end

-- The chest field of a status answer in words.
local function chest_words(chest)
	if chest == "none" then
		return "no chest opening"
	elseif chest == "off" then
		return "no chests on this server"
	elseif tonumber(chest) then
		return "chest opens in " .. chest .. "s"
	end
	return "chest " .. tostring(chest)
end

local function show_status(f)
	out(string.format("%s at %s,%s  hp %s  gold %s  kills %s  daily quest %s%s\n"
		.. "buffs: %s   next online reward in %ss   %s",
		f.name or "?", f.x or "?", f.y or "?", f.hp or "?", f.gold or "?", f.kills or "?",
		f.quest or "?", f.dead == "yes" and "  (DEAD)" or "", f.buffs or "none",
		f.reward_in or "?", chest_words(f.chest)))
end

local REPLY = {}

function REPLY.login(f)
	me = f.name
	my_x, my_y = tonumber(f.x), tonumber(f.y)
	maxhp = tonumber((f.hp or ""):match "/(%d+)") or maxhp
	out(string.format("%s %s at %s,%s, hp %s, gold %s, quest %s, buffs %s; next reward in %ss",
		f.new == "yes" and "welcome," or "welcome back,", f.name, f.x, f.y, f.hp, f.gold, f.quest,
		f.buffs, f.reward_in))
	local n = math.tointeger(tonumber(f.mail))
	if n and n > 0 then
		out(string.format("%d message%s waited for you while you were away:", n, n == 1 and "" or "s"))
	end
	out("type `look` to see the arena")
end

REPLY.look = draw_look
REPLY.status = show_status

function REPLY.move(f)
	my_x, my_y = tonumber(f.x), tonumber(f.y)
	out(string.format("you move to %s,%s", f.x, f.y))
end

function REPLY.attack(f)
	if f.killed == "yes" then
		out(string.format("you hit %s for %s and kill it! gold %s, daily quest %s", f.target, f.dmg,
			f.gold, f.quest))
	else
		out(string.format("you hit %s for %s (its hp: %s)", f.target, f.dmg, f.hp))
	end
end

function REPLY.cast(f)
	if f.skill == "dispel" then
		out(string.format("you dispel %s: removed %s", f.target == me and "yourself" or f.target,
			f.removed))
	else
		out(string.format("you cast %s on %s for %ss", f.skill,
			f.target == me and "yourself" or f.target, f.secs))
	end
end

function REPLY.say(f, request)
	local text = request and request:match "^%S+%s+(.-)%s*$" or ""
	local n = math.tointeger(tonumber(f.heard))
	local heard
	if n == nil then
		heard = "sent"
	elseif n == 0 then
		heard = "nobody heard you"
	else
		heard = string.format("heard by %d player%s", n, n == 1 and "" or "s")
	end
	out(string.format("you say: %s (%s)", text, heard))
end

function REPLY.tell(f)
	out("(whisper sent to " .. (f.to or "?") .. ")")
end

function REPLY.mail(f)
	if f.delivered == "now" then
		out("(mail delivered to " .. (f.to or "?") .. ")")
	else
		out("(mail kept for " .. (f.to or "?") .. ": offline, gets it at the next login)")
	end
end

function REPLY.chest(f)
	out(string.format("you start opening a chest: %s gold in %ss", f.gold, f.opens_in))
end

function REPLY.ping()
	out("pong")
end

function REPLY.quit()
	out("bye")
end

local PUSH = {}

function PUSH.hello(_, line)
	out("* " .. line:gsub("^hello%s*", ""))
end

function PUSH.chat(w, line)
	out(string.format("[chat] %s: %s", w[2], line:match "^chat%s+%S+%s+(.*)$" or ""))
end

function PUSH.tell(w, line)
	out(string.format("[whisper] %s: %s", w[2], line:match "^tell%s+%S+%s+(.*)$" or ""))
end

function PUSH.enter(w)
	out(string.format("* %s entered the arena at %s,%s", w[2], w[3], w[4]))
end

function PUSH.leave(w)
	out(string.format("* %s left the arena", w[2]))
end

function PUSH.move(w)
	local id, x, y = w[2], tonumber(w[3]), tonumber(w[4])
	if id:match "^m%d+$" and my_x and x and math.abs(x - my_x) <= 1 and math.abs(y - my_y) <= 1 then
		out(string.format("! %s moves next to you (%d,%d)", id, x, y))
	elseif not id:match "^m%d+$" then
		out(string.format("* %s moves to %s,%s", id, w[3], w[4]))
	end
end

function PUSH.hit(w)
	local from, to, dmg, hp = w[2], w[3], w[4], w[5]
	if to == me then
		out(string.format("! %s hits you for %s (hp %s/%d)", from, dmg, hp, maxhp))
	elseif from ~= me then
		out(string.format("* %s hits %s for %s (hp %s)", from, to, dmg, hp))
	end
end

function PUSH.die(w)
	if w[2] == me then
		out(string.format("!!! you were killed by %s; you come back in 5 s", w[3]))
	else
		out(string.format("* %s was killed by %s", w[2], who(w[3])))
	end
end

function PUSH.spawn(w)
	if w[2] == me then
		my_x, my_y = tonumber(w[3]), tonumber(w[4])
		out(string.format("* you are back at %s,%s with %s hp", w[3], w[4], w[5]))
	else
		out(string.format("* %s (re)spawns at %s,%s", w[2], w[3], w[4]))
	end
end

function PUSH.buff(w)
	out(string.format("+ %s %s for %ss (cast by %s)", does(w[2], "gain"), w[3], w[4], who(w[5])))
end

function PUSH.unbuff(w)
	out(string.format("- %s %s (%s)", does(w[2], "lose"), w[3], w[4]))
end

function PUSH.heal(w)
	if w[2] == me then
		out(string.format("+ regen: +%s hp (hp %s/%d)", w[3], w[4], maxhp))
	end
end

function PUSH.reward(_, line)
	local f = fields(line)
	out(string.format("$ online reward: %s gold (total %s); next in %ss", f.gold, f.total, f.next))
end

function PUSH.quest(_, line)
	local f = fields(line)
	out(string.format("$ daily quest done: %s gold (total %s)", f.gold, f.total))
end

function PUSH.daily(_, line)
	local f = fields(line)
	out(string.format("* daily reset%s: the daily quest starts again (%s)",
		f.ago and " (" .. f.ago .. "s ago)" or "", f.quest or ""))
end

function PUSH.mail(w, line)
	out(string.format("[mail] %s: %s", w[2], line:match "^mail%s+%S+%s+(.*)$" or ""))
end

function PUSH.chest(_, line)
	local f = fields(line)
	out(string.format("$ your chest opened%s: %s gold (total %s)",
		f.ago and " " .. f.ago .. "s ago" or "", f.gold, f.total))
end

function PUSH.skipped(w)
	out(string.format("* ... and %s more events between others in the last second, not shown"
		.. " (busy arena)", w[2] or "?"))
end

-- The session is over: no more input; the server closes the connection.
function PUSH.kick(_, line)
	kicked = line:match "^kick%s+(.-)%s*$" or "no reason given"
	out("* the server disconnects you: " .. kicked)
end

local function on_message(line)
	local w = words(line)
	local kind = w[1] or ""
	if kind == "ok" then
		pending = pending - 1
		local request = table.remove(asked, 1)
		local f = REPLY[w[2] or ""]
		if request == AUTO_PING then
			return -- a keep-alive: nothing to show
		elseif f then
			f(fields(line), request)
		else
			out(line)
		end
	elseif kind == "err" then
		pending = pending - 1
		table.remove(asked, 1)
		out(string.format("error (%s): %s", w[2] or "?", line:match "^err%s+%S+%s+(.*)$" or line))
	elseif PUSH[kind] then
		PUSH[kind](w, line)
	else
		out(line)
	end
end

---------------------------------------------------------------- input

-- Sends a request; what is AUTO_PING for a keep-alive ping, else the line.
local function send(line, what)
	local ok, err = cs.send(fd, line)
	if not ok then
		out("send failed: " .. tostring(err))
		return false
	end
	pending = pending + 1
	asked[#asked + 1] = what or line
	last_sent = os.time()
	return true
end

-- A line without the escape sequences a terminal puts in it for special
-- keys (CSI such as ESC [ A for the up arrow, SS3 such as ESC O P for F1)
-- and without other control characters; and whether it had any.
local function strip_keys(line)
	line = line:gsub("[\t\r]", " ")
	local csi, ss3, other
	line, csi = line:gsub("\27%[[\48-\63]*[\32-\47]*[\64-\126]", "")
	line, ss3 = line:gsub("\27O.", "")
	line, other = line:gsub("%c", "") -- a lone ESC, and any other control character
	return line, csi + ss3 + other > 0
end

-- Handles one typed line.
local function on_input(line)
	local special
	line, special = strip_keys(line)
	line = line:gsub("^%s+", ""):gsub("%s+$", "")
	if line == "" and special then
		out("(arrow and other special keys do nothing here: type n, s, e, w, ne, nw, se or sw"
			.. " and Enter to move; help for the commands)")
		return true
	end
	if line == "" then
		if TTY then
			io.write(PROMPT)
			io.flush()
		end
		return true
	end
	local first, rest = line:match "^(%S+)%s*(.*)$"
	first = first:lower()
	if first == "help" or first == "?" then
		out(HELP)
		return true
	end
	if first == "exit" then
		first = "quit"
	end
	if DIRS[first] and rest == "" then
		line = "move " .. first
	elseif SHORT[first] then
		line = SHORT[first] .. (rest ~= "" and " " .. rest or "")
	end
	if #line > 65535 then
		out("error: that line is too long")
		return true
	end
	return send(line)
end

---------------------------------------------------------------- main loop

local err
fd, err = cs.connect(host, port)
if not fd then
	io.stderr:write(string.format("cannot connect to %s:%d (%s)\n", host, port, err))
	io.stderr:write("is the server running? start it with `make run` in another terminal\n")
	os.exit(1)
end
out(string.format("connected to %s:%d. Type `help` for the commands, `login <name>` to start.",
	host, port))

local rbuf, ibuf = "", ""
local stop_at -- once stdin has ended: give the answers this long to come
local running = true
local status = 0
while running do
	local input = input_open and not kicked
	local sock_ready, input_ready = cs.poll(fd, input and 1000 or 200, input)
	if sock_ready then
		local data, rerr = cs.recv(fd)
		if data == nil then
			closed = true
			if kicked == nil then
				if rerr == "closed" then
					out("* connection closed by the server")
				else
					out("* connection lost: " .. tostring(rerr))
					status = 1
				end
			end
			running = false
		else
			rbuf = rbuf .. data
			while #rbuf >= 2 do
				local n = string.unpack(">I2", rbuf)
				if #rbuf < 2 + n then
					break
				end
				on_message(rbuf:sub(3, 2 + n))
				rbuf = rbuf:sub(3 + n)
			end
			if kicked and stop_at == nil then
				stop_at = os.time() + KICK_WAIT
			end
		end
	end
	if running and input and input_ready then
		local data = cs.readstdin()
		if data == nil then -- Ctrl-D or the end of a script
			input_open = false
			if TTY then
				io.write("\r\27[K") -- the prompt goes: no more input
				io.flush()
			end
			if ibuf ~= "" then
				on_input(ibuf)
			end
			if TTY then
				send("quit")
			end
			stop_at = os.time() + 3
		else
			ibuf = ibuf .. data
			for line in ibuf:gmatch "([^\n]*)\n" do
				on_input(line)
			end
			ibuf = ibuf:match "[^\n]*$"
		end
	end
	if running and input_open and not kicked and not closed and os.time() - last_sent >= PING_S then
		send("ping", AUTO_PING)
	end
	if stop_at and ((not input_open and pending <= 0 and not TTY) or os.time() > stop_at) then
		running = false
	end
end
cs.close(fd)
os.exit(status)
