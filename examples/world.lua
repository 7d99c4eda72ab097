-- The demo game's world: the arena grid, every player's game state (kept
-- for the node's lifetime, so a player who reconnects finds it again),
-- the monsters, fights, skills and the daily quest. Agents forward game
-- requests here; pushes go straight to the clients' sockets.
--
-- Timers, each doing visible game work:
--   * timer.every(tick_cs): the fixed-rate tick (10 Hz by default) moves
--     the monsters, lets them hit adjacent players, and once a second
--     applies poison and regeneration;
--   * one skynet.timeout per active buff or debuff: it expires the effect;
--     a dispel, a recast (replace) or the bearer's death cancels it with
--     skynet.killthread, so no stale timer is left;
--   * one skynet.timeout per dead monster or player: the respawn;
--   * timer.cron(daily_reset): the daily reset of the quest.
-- Durable timers (skynet.reminder; only when the node's config sets
-- reminder_store): a player's chest is the reminder "chest:<name>", which
-- calls this service (by its name, settings.world_name) when it opens, even
-- after a restart of the node; what happens to an offline player waits in
-- the mailbox (mailbox.lua, reminders too) until the next login.
-- What a player is sent: every event about itself (its moves, fights,
-- buffs, whoever causes them), and of the events between others (their
-- moves, fights, buffs, chat, monsters wandering) at most crowd_rate a
-- second; the others are counted, and once a second a player who missed
-- some gets "skipped <n>" (a crowded arena would otherwise flood a client:
-- 100 bots are ~190 events a second). p.crowd_sent and p.crowd_skipped
-- count this second's.
-- Player state: players[name] (online or not), in memory only: a restart
-- of the node forgets it, not the chests and the mail. Spatial lookups go
-- through two bucket grids (online players, monsters) of BUCKET x BUCKET
-- cells.
local skynet = require "skynet"
require "skynet.manager"
local core = require "skynet.core"
local socket = require "skynet.socket"
local timer = require "skynet.timer"
local reminder = require "skynet.reminder"
local proto = require "proto"
local settings = require "settings"
local mailbox = require "mailbox"
local loglimit = require "skynet.loglimit"

local sformat = string.format
local tconcat = table.concat
local spack = string.pack
local socket_write = socket.write
local random = math.random
local abs = math.abs

local BUCKET <const> = 8
local NAME_MAX <const> = 16
local TEXT_MAX <const> = 200
local MAILBOX_MAX <const> = 20 -- player mail waiting for one player at most
local POISON_DPS <const> = 3
local REGEN_HPS <const> = 5

local request_log = loglimit.new() -- failed requests (players decide how often)
local S -- settings
local per_second -- ticks per second
local move_ticks, attack_ticks
local tick_n = 0
local crowd_at = 0 -- the second (tick_n // per_second) of the players' crowd budgets

local players = {} -- name -> player
local online = {} -- name -> player, online only
local monsters = {} -- id -> monster
local monster_list = {} -- in id order
local dots = {} -- entity -> true: bears poison or regen

local CMD = {} -- lua commands (from agents, main, tests)
local REQ = {} -- game requests: REQ[cmd](player, line) -> reply text

---------------------------------------------------------------- bucket grids

local function new_grid()
	return {}
end

local function bucket_key(x, y)
	return (x // BUCKET) * 65536 + (y // BUCKET)
end

local function grid_add(grid, e)
	local k = bucket_key(e.x, e.y)
	local b = grid[k]
	if b == nil then
		b = {}
		grid[k] = b
	end
	b[e] = true
end

local function grid_remove(grid, e)
	local b = grid[bucket_key(e.x, e.y)]
	if b then
		b[e] = nil
	end
end

-- Moves e to (x, y), keeping grid (if given) up to date.
local function place(grid, e, x, y)
	if grid and bucket_key(e.x, e.y) ~= bucket_key(x, y) then
		grid_remove(grid, e)
		e.x, e.y = x, y
		grid_add(grid, e)
	else
		e.x, e.y = x, y
	end
end

-- Calls f(e) for every e of grid within Chebyshev distance r of (x, y).
local function grid_near(grid, x, y, r, f)
	for bx = (x - r) // BUCKET, (x + r) // BUCKET do
		for by = (y - r) // BUCKET, (y + r) // BUCKET do
			local b = grid[bx * 65536 + by]
			if b then
				for e in pairs(b) do
					if abs(e.x - x) <= r and abs(e.y - y) <= r then
						f(e)
					end
				end
			end
		end
	end
end

local pgrid = new_grid() -- online players
local mgrid = new_grid() -- monsters (alive or dead)

local function distance(a, b)
	local dx, dy = abs(a.x - b.x), abs(a.y - b.y)
	return dx > dy and dx or dy
end

---------------------------------------------------------------- pushes

local function push(p, text)
	if p.online then
		socket_write(p.fd, spack(">s2", text))
	end
end

-- Writes frame to p: always when the event is about p (p is a or b),
-- else within p's crowd budget for this second (else it is counted as
-- skipped). Returns true when it was written.
local function deliver(p, frame, a, b)
	local rate = S.crowd_rate
	if rate > 0 and p.id ~= a and p.id ~= b then
		if p.crowd_sent >= rate then
			p.crowd_skipped = p.crowd_skipped + 1
			return false
		end
		p.crowd_sent = p.crowd_sent + 1
	end
	socket_write(p.fd, frame)
	return true
end

-- Sends text, an event about a (and b), to the online players who see
-- cell (x, y), except `except`. r widens the view (a move is seen from its
-- old and new cell). Returns how many players it went to.
local function broadcast(x, y, text, except, r, a, b)
	local frame = spack(">s2", text)
	local n = 0
	if S.view <= 0 then
		for _, p in pairs(online) do
			if p ~= except and deliver(p, frame, a, b) then
				n = n + 1
			end
		end
		return n
	end
	grid_near(pgrid, x, y, S.view + (r or 0), function(p)
		if p ~= except and deliver(p, frame, a, b) then
			n = n + 1
		end
	end)
	return n
end

-- Tells the viewers of e (when e is in the arena) about it, an event
-- about e (and other, an id); returns how many players it told.
local function announce(e, text, except, r, other)
	if e.kind == "player" and not e.online then
		return 0
	end
	return broadcast(e.x, e.y, text, except, r, e.id, other)
end

-- Once a second: tells each player how many events it was not sent, and
-- opens the next second's budget.
local function crowd_second()
	for _, p in pairs(online) do
		if p.crowd_skipped > 0 then
			socket_write(p.fd, spack(">s2", sformat("skipped %d", p.crowd_skipped)))
		end
		p.crowd_sent, p.crowd_skipped = 0, 0
	end
end

---------------------------------------------------------------- buffs

-- on: what a skill can target; dot: the effect acts once a second (tick_dots).
local SKILLS = {
	shield = { on = "player" },
	rage = { on = "player" },
	regen = { on = "player", dot = true },
	poison = { on = "monster", dot = true },
	freeze = { on = "monster" },
	dispel = { on = "any" },
}

local function has_dot(e)
	for skill in pairs(e.buffs) do
		if SKILLS[skill].dot then
			return true
		end
	end
	return false
end

-- Ends e's effect `skill` (why: expired, dispelled, replaced, died).
local function remove_buff(e, skill, why)
	local b = e.buffs[skill]
	if b == nil then
		return false
	end
	e.buffs[skill] = nil
	if why ~= "expired" then
		skynet.killthread(b.obj) -- cancels the expiry timer
	end
	if not has_dot(e) then
		dots[e] = nil
	end
	announce(e, sformat("unbuff %s %s %s", e.id, skill, why))
	return true
end

local function clear_buffs(e, why)
	local removed = {}
	for skill in pairs(e.buffs) do
		removed[#removed + 1] = skill
	end
	table.sort(removed)
	for _, skill in ipairs(removed) do
		remove_buff(e, skill, why)
	end
	return removed
end

local function add_buff(e, skill, caster)
	remove_buff(e, skill, "replaced")
	local cs = S[skill .. "_cs"]
	local b = { caster = caster, ends = skynet.now() + cs }
	b.obj = skynet.timeout(cs, function()
		if e.buffs[skill] == b then
			remove_buff(e, skill, "expired")
		end
	end)
	e.buffs[skill] = b
	if SKILLS[skill].dot then
		dots[e] = true
	end
	announce(e, sformat("buff %s %s %s %s", e.id, skill, proto.secs(cs), caster.id), nil, nil,
		caster.id)
	return cs
end

local function buff_list(e)
	local now = skynet.now()
	local out = {}
	for skill, b in pairs(e.buffs) do
		out[#out + 1] = skill .. ":" .. proto.secs(b.ends - now)
	end
	table.sort(out)
	return #out > 0 and tconcat(out, ",") or "none"
end

---------------------------------------------------------------- life and death

local function random_cell()
	return random(0, S.map_width - 1), random(0, S.map_height - 1)
end

local function parse_cell(text)
	local x, y = text:match "^(%d+),(%d+)$"
	return tonumber(x), tonumber(y)
end

local function respawn_monster(m)
	m.respawn_obj = nil
	local x, y = m.home_x, m.home_y
	if x == nil then
		x, y = random_cell()
	end
	place(mgrid, m, x, y)
	m.hp, m.dead = m.maxhp, false
	m.next_move = tick_n + move_ticks
	announce(m, sformat("spawn %s %d %d %d", m.id, m.x, m.y, m.hp))
end

local function respawn_player(p)
	p.respawn_obj = nil
	local x, y = parse_cell(S.player_spot or "")
	if x == nil then
		x, y = random_cell()
	end
	place(p.online and pgrid, p, x, y)
	p.hp, p.dead = p.maxhp, false
	announce(p, sformat("spawn %s %d %d %d", p.id, p.x, p.y, p.hp))
end

local function quest_text(p)
	return sformat("%d/%d", p.quest, S.quest_kills)
end

-- Credits player p with the kill of a monster.
local function credit(p)
	p.gold = p.gold + S.monster_gold
	p.kills = p.kills + 1
	if p.quest_done then
		return
	end
	p.quest = p.quest + 1
	if p.quest >= S.quest_kills then
		p.quest_done = true
		p.gold = p.gold + S.quest_gold
		push(p, sformat("quest done gold=+%d total=%d", S.quest_gold, p.gold))
	end
end

local function kill(e, killer)
	e.dead, e.hp = true, 0
	clear_buffs(e, "died")
	announce(e, sformat("die %s %s", e.id, killer.id), nil, nil, killer.id)
	if e.kind == "monster" then
		if killer.kind == "player" then
			credit(killer)
		end
		e.respawn_obj = skynet.timeout(S.monster_respawn_cs, function()
			respawn_monster(e)
		end)
	else
		e.respawn_at = skynet.now() + S.player_respawn_cs
		e.respawn_obj = skynet.timeout(S.player_respawn_cs, function()
			respawn_player(e)
		end)
	end
end

-- Deals amount to e from attacker (an entity); returns the damage done.
local function damage(e, amount, attacker, how)
	if e.buffs.shield then
		amount = (amount + 1) // 2
	end
	e.hp = e.hp - amount
	if e.hp < 0 then
		e.hp = 0
	end
	announce(e, sformat("hit %s %s %d %d", how or attacker.id, e.id, amount, e.hp), nil, nil,
		attacker.id)
	if e.hp == 0 then
		kill(e, attacker)
	end
	return amount
end

---------------------------------------------------------------- the tick

local function adjacent_player(m)
	local found
	grid_near(pgrid, m.x, m.y, 1, function(p)
		if not p.dead and (found == nil or p.id < found.id) then
			found = p
		end
	end)
	return found
end

local function wander(m)
	local d = random(1, 4)
	local x, y = m.x, m.y
	if d == 1 then
		x = x + 1
	elseif d == 2 then
		x = x - 1
	elseif d == 3 then
		y = y + 1
	else
		y = y - 1
	end
	if x < 0 or y < 0 or x >= S.map_width or y >= S.map_height then
		return
	end
	place(mgrid, m, x, y)
	announce(m, sformat("move %s %d %d", m.id, x, y), nil, 1)
end

local function tick_monster(m)
	if m.dead or m.buffs.freeze then
		return
	end
	local p = adjacent_player(m)
	if p then
		if tick_n >= m.next_attack then
			m.next_attack = tick_n + attack_ticks
			if S.monster_damage > 0 then
				damage(p, S.monster_damage, m)
			end
		end
	elseif move_ticks > 0 and tick_n >= m.next_move then
		m.next_move = tick_n + move_ticks + random(0, move_ticks // 2)
		wander(m)
	end
end

local function tick_dots()
	local list = {}
	for e in pairs(dots) do
		list[#list + 1] = e
	end
	for _, e in ipairs(list) do
		if not e.dead then
			local poison = e.buffs.poison
			if poison then
				damage(e, POISON_DPS, poison.caster, "poison")
			end
			if e.buffs.regen and not e.dead and e.hp < e.maxhp then
				e.hp = math.min(e.maxhp, e.hp + REGEN_HPS)
				announce(e, sformat("heal %s %d %d", e.id, REGEN_HPS, e.hp))
			end
		end
	end
end

local function tick(missed)
	tick_n = tick_n + 1 + missed
	for _, m in ipairs(monster_list) do
		tick_monster(m)
	end
	if tick_n % per_second == 0 then
		tick_dots()
	end
	local second = tick_n // per_second -- a tick may skip the boundary: see it anyway
	if second ~= crowd_at then
		crowd_at = second
		crowd_second()
	end
end

---------------------------------------------------------------- daily reset

-- Tells the players who are offline now, through the mailbox: one item
-- each (the key "daily" is replaced by the next day's).
local function mail_daily_reset(names)
	local sent = core.walltime()
	for _, name in ipairs(names) do
		local ok, e = pcall(mailbox.post, name, { kind = "daily", sent = sent }, "daily")
		if not ok then
			skynet.error(sformat("warn: world: daily reset not mailed to %s: %s", name, e))
			return
		end
	end
end

local function daily_reset()
	local offline = {}
	for name, p in pairs(players) do
		p.quest, p.quest_done = 0, false
		if not p.online then
			offline[#offline + 1] = name
		end
	end
	local text = sformat("daily reset quest=0/%d", S.quest_kills)
	for _, p in pairs(online) do
		push(p, text)
	end
	skynet.error("world: daily reset: quests cleared")
	if #offline > 0 and mailbox.on() then
		table.sort(offline)
		skynet.fork(mail_daily_reset, offline)
	end
end

---------------------------------------------------------------- requests

local function err(cmd, fmt, ...)
	return "err " .. cmd .. " " .. sformat(fmt, ...)
end

local function valid_name(name)
	return type(name) == "string" and #name <= NAME_MAX and name:match "^%a[%w_]*$" ~= nil
		and name:match "^m%d+$" == nil
end

local function dead_err(p, cmd)
	return err(cmd, "you are dead (respawn in %ss)", proto.secs(p.respawn_at - skynet.now()))
end

function REQ.look(p)
	local ps, ms = {}, {}
	local r = S.view > 0 and S.view or math.max(S.map_width, S.map_height)
	grid_near(pgrid, p.x, p.y, r, function(o)
		if o ~= p then
			ps[#ps + 1] = sformat("%s@%d,%d%s", o.id, o.x, o.y, o.dead and ":dead" or "")
		end
	end)
	grid_near(mgrid, p.x, p.y, r, function(m)
		ms[#ms + 1] = sformat("%s@%d,%d:%s", m.id, m.x, m.y, m.dead and "dead" or m.hp)
	end)
	table.sort(ps)
	table.sort(ms, function(a, b)
		return tonumber(a:match "^m(%d+)") < tonumber(b:match "^m(%d+)")
	end)
	return sformat("ok look you=%d,%d map=%dx%d players=%s monsters=%s", p.x, p.y,
		S.map_width, S.map_height, #ps > 0 and tconcat(ps, ";") or "none",
		#ms > 0 and tconcat(ms, ";") or "none")
end

function REQ.move(p, line)
	local w = proto.words(line)
	local d = proto.DIRS[(w[2] or ""):lower()]
	if d == nil or #w > 2 then
		return err("move", "usage: move n|s|e|w|ne|nw|se|sw")
	end
	if p.dead then
		return dead_err(p, "move")
	end
	local x, y = p.x + d[1], p.y + d[2]
	if x < 0 or y < 0 or x >= S.map_width or y >= S.map_height then
		return err("move", "the edge of the arena (you are at %d,%d)", p.x, p.y)
	end
	place(pgrid, p, x, y)
	announce(p, sformat("move %s %d %d", p.id, x, y), p, 1)
	return sformat("ok move x=%d y=%d", x, y)
end

function REQ.say(p, line)
	local text = proto.rest(line, 1)
	if text == nil then
		return err("say", "usage: say <text>")
	end
	if #text > TEXT_MAX then
		return err("say", "text too long (%d bytes, at most %d)", #text, TEXT_MAX)
	end
	local heard = announce(p, sformat("chat %s %s", p.id, text), p)
	return sformat("ok say heard=%d", heard)
end

function REQ.tell(p, line)
	local w = proto.words(line)
	local text = proto.rest(line, 2)
	if text == nil then
		return err("tell", "usage: tell <name> <text>")
	end
	if #text > TEXT_MAX then
		return err("tell", "text too long (%d bytes, at most %d)", #text, TEXT_MAX)
	end
	local to = online[w[2]]
	if to == nil then
		return err("tell", "%s is not online", w[2])
	end
	push(to, sformat("tell %s %s", p.id, text))
	return "ok tell to=" .. to.id
end

-- The entity named by word (a player name or a monster id), or nil.
local function find(word)
	return monsters[word] or players[word]
end

local function nearest_monster(p, r)
	local best
	grid_near(mgrid, p.x, p.y, r, function(m)
		if not m.dead then
			local d = distance(p, m)
			if best == nil or d < best.d or (d == best.d and m.n < best.m.n) then
				best = { m = m, d = d }
			end
		end
	end)
	return best and best.m
end

function REQ.attack(p, line)
	local w = proto.words(line)
	if #w > 2 then
		return err("attack", "usage: attack [monster]")
	end
	if p.dead then
		return dead_err(p, "attack")
	end
	local m
	if w[2] then
		m = monsters[w[2]]
		if m == nil then
			return err("attack", "no monster %s (monsters are m1, m2, ...)", w[2])
		end
	else
		m = nearest_monster(p, 1)
		if m == nil then
			return err("attack", "no monster next to you (look, then move next to one)")
		end
	end
	if m.dead then
		return err("attack", "%s is dead", m.id)
	end
	if distance(p, m) > 1 then
		return err("attack", "%s is too far (at %d,%d; you are at %d,%d)", m.id, m.x, m.y, p.x, p.y)
	end
	local dmg = S.player_damage * (p.buffs.rage and 2 or 1)
	damage(m, dmg, p)
	if m.dead then
		return sformat("ok attack target=%s dmg=%d hp=0 killed=yes gold=%d quest=%s", m.id, dmg,
			p.gold, quest_text(p))
	end
	return sformat("ok attack target=%s dmg=%d hp=%d", m.id, dmg, m.hp)
end

-- The target of a cast, or nil and the error reply.
local function cast_target(p, skill, word)
	local info = SKILLS[skill]
	local e
	if word == nil then
		if info.on == "monster" then
			e = nearest_monster(p, S.skill_range)
			if e == nil then
				return nil, err("cast", "no monster within %d cells", S.skill_range)
			end
		else
			e = p
		end
	else
		e = find(word)
		if e == nil or (e.kind == "player" and not e.online) then
			return nil, err("cast", "no target %s here", word)
		end
	end
	if info.on ~= "any" and e.kind ~= info.on then
		return nil, err("cast", "%s works on a %s", skill, info.on)
	end
	if e.dead then
		return nil, err("cast", "%s is dead", e.id)
	end
	if distance(p, e) > S.skill_range then
		return nil, err("cast", "%s is too far (range %d)", e.id, S.skill_range)
	end
	return e
end

function REQ.cast(p, line)
	local w = proto.words(line)
	local skill = w[2] and w[2]:lower()
	if skill == nil or SKILLS[skill] == nil or #w > 3 then
		return err("cast", "usage: cast shield|rage|regen|poison|freeze|dispel [target]")
	end
	if p.dead then
		return dead_err(p, "cast")
	end
	local e, e_err = cast_target(p, skill, w[3])
	if e == nil then
		return e_err
	end
	if skill == "dispel" then
		local removed = clear_buffs(e, "dispelled")
		return sformat("ok cast skill=dispel target=%s removed=%s", e.id,
			#removed > 0 and tconcat(removed, ",") or "none")
	end
	local cs = add_buff(e, skill, p)
	return sformat("ok cast skill=%s target=%s secs=%s", skill, e.id, proto.secs(cs))
end

---------------------------------------------------------------- chests and mail

local function chest_key(name)
	return "chest:" .. name
end

-- p's chest: the seconds until it opens (text), "none", or "off" when the
-- node keeps no reminders.
local function chest_left(p)
	if not mailbox.on() then
		return "off"
	end
	local ok, r = pcall(reminder.get, chest_key(p.id))
	if not ok then
		request_log("warn: world: chest of %s unknown: %s", p.id, r)
		return "unknown"
	end
	if r == nil then
		return "none"
	end
	return proto.secs(math.max(0, (r.due - core.walltime()) * 100))
end

-- Starts p's chest unless one is opening: the reply text. The reminder is
-- the only record of it (it outlives the session and the node).
local function start_chest(p)
	local key = chest_key(p.id)
	local r = reminder.get(key)
	if r then
		return err("chest", "a chest is already opening (opens in %ss)",
			proto.secs(math.max(0, (r.due - core.walltime()) * 100)))
	end
	reminder.set(key, { after = S.chest_cs / 100 }, S.world_name, p.id)
	return sformat("ok chest opens_in=%s gold=%d", proto.secs(S.chest_cs), S.chest_gold)
end

function REQ.chest(p, line)
	local w = proto.words(line)
	if #w > 2 or (w[2] and w[2]:lower() ~= "open") then
		return err("chest", "usage: chest [open]")
	end
	if not mailbox.on() then
		return err("chest", "no chests on this server (its config sets no reminder_store)")
	end
	if p.chest_busy then -- another session of p is starting one right now
		return err("chest", "a chest is already opening")
	end
	p.chest_busy = true
	local ok, r = pcall(start_chest, p)
	p.chest_busy = nil
	if not ok then
		request_log("error: world: chest not started for %s: %s", p.id, r)
		return err("chest", "the chest store failed, try again")
	end
	return r
end

-- Shows one mailbox item to p (online), crediting its gold.
local function show_item(p, item)
	local ago = proto.secs(math.max(0, (core.walltime() - (item.sent or 0)) * 100))
	if item.kind == "chest" then
		p.gold = p.gold + item.gold
		push(p, sformat("chest opened gold=+%d total=%d ago=%s", item.gold, p.gold, ago))
	elseif item.kind == "daily" then
		push(p, sformat("daily reset quest=%s ago=%s", quest_text(p), ago))
	else
		push(p, sformat("mail %s %s", item.from, item.text))
	end
end

function REQ.mail(p, line)
	local w = proto.words(line)
	local text = proto.rest(line, 2)
	if text == nil then
		return err("mail", "usage: mail <name> <text>")
	end
	if #text > TEXT_MAX then
		return err("mail", "text too long (%d bytes, at most %d)", #text, TEXT_MAX)
	end
	local to = w[2]
	if not valid_name(to) then
		return err("mail", "no player can be called %s", to)
	end
	local item = { kind = "mail", from = p.id, text = text }
	if online[to] then
		show_item(online[to], item)
		return sformat("ok mail to=%s delivered=now", to)
	end
	if not mailbox.on() then
		return err("mail", "%s is offline and this server keeps no mail (no reminder_store)", to)
	end
	local ok, n = pcall(mailbox.count, to, MAILBOX_MAX)
	if ok and n >= MAILBOX_MAX then
		return err("mail", "the mailbox of %s is full (%d waiting)", to, MAILBOX_MAX)
	end
	if ok then
		ok, n = pcall(mailbox.post, to, item)
	end
	if not ok then
		request_log("error: world: mail to %s not kept: %s", to, n)
		return err("mail", "the mail store failed, try again")
	end
	return sformat("ok mail to=%s delivered=later", to)
end

function REQ.status(p)
	local chest = chest_left(p) -- first: it waits for the store, the rest may change meanwhile
	return sformat("ok status name=%s x=%d y=%d hp=%d/%d gold=%d kills=%d quest=%s dead=%s buffs=%s"
		.. " chest=%s", p.id, p.x, p.y, p.hp, p.maxhp, p.gold, p.kills, quest_text(p),
		p.dead and "yes" or "no", buff_list(p), chest)
end

---------------------------------------------------------------- lua commands

local function new_player(name)
	local x, y = parse_cell(S.player_spot)
	if x == nil then
		x, y = random_cell()
	end
	return {
		kind = "player", id = name, x = x, y = y, hp = S.player_hp, maxhp = S.player_hp,
		gold = 0, kills = 0, quest = 0, quest_done = false, buffs = {}, dead = false,
		online = false, fd = nil, agent = nil, reward_progress = 0, crowd_sent = 0, crowd_skipped = 0,
	}
end

function CMD.init(_, s)
	S = settings.make(s)
	math.randomseed(S.seed ~= 0 and S.seed or math.floor(skynet.time() * 1000))
	per_second = math.max(1, 100 // S.tick_cs)
	move_ticks = S.monster_move_cs > 0 and math.max(1, S.monster_move_cs // S.tick_cs) or 0
	attack_ticks = math.max(1, S.monster_attack_cs // S.tick_cs)
	local spots = {}
	for cell in S.monster_spots:gmatch "%S+" do
		spots[#spots + 1] = cell
	end
	for i = 1, S.monster_count do
		local hx, hy = parse_cell(spots[i] or "")
		local x, y = hx, hy
		if x == nil then
			x, y = random_cell()
		end
		local m = {
			kind = "monster", id = "m" .. i, n = i, x = x, y = y, hp = S.monster_hp,
			maxhp = S.monster_hp, buffs = {}, dead = false, home_x = hx, home_y = hy,
			next_move = move_ticks > 0 and random(1, move_ticks) or 0, next_attack = 0,
		}
		monsters[m.id] = m
		monster_list[i] = m
		grid_add(mgrid, m)
	end
	-- Both schedules last as long as the service: their handles are not kept.
	timer.every(S.tick_cs, tick, { name = "world tick" })
	timer.cron(settings.daily_spec(S), daily_reset, { tz = S.daily_tz, name = "daily reset" })
	-- The name the chests and the mailbox's reminders call.
	if S.world_name ~= "" then
		skynet.register(S.world_name)
		if skynet.localname(S.world_name) ~= skynet.self() then
			error(sformat("world: the name %s is taken", S.world_name))
		end
	end
	mailbox.init(S.world_name, S.mail_keep_cs)
	return true
end

-- How many mailbox items wait for name (0 when the store cannot tell).
local function mail_waiting(name)
	if not mailbox.on() then
		return 0
	end
	local ok, n = pcall(mailbox.count, name, mailbox.LIST_MAX)
	if not ok then
		request_log("warn: world: mailbox of %s unknown: %s", name, n)
		return 0
	end
	return n
end

-- A client logs in as name through agent `source`: the reply text, and
-- the saved reward progress (cs). A session already online under that name
-- is replaced (its agent kicks its client).
function CMD.login(source, name, fd)
	if not valid_name(name) then
		return "err login name must be 1-16 letters, digits or _, starting with a letter"
			.. " (and not m<number>)"
	end
	local p = players[name]
	local new = p == nil
	if new then
		p = new_player(name)
		players[name] = p
	end
	if p.online then
		local old = p.agent
		grid_remove(pgrid, p)
		online[name] = nil
		p.online, p.fd, p.agent = false, nil, nil -- requests from old are refused now
		local ok, progress = pcall(skynet.call, old, "lua", "replaced")
		if ok and math.type(progress) == "integer" then
			p.reward_progress = progress
		end
	end
	p.online, p.fd, p.agent = true, fd, source
	online[name] = p
	grid_add(pgrid, p)
	announce(p, sformat("enter %s %d %d", name, p.x, p.y), p)
	local reply = sformat("ok login name=%s new=%s x=%d y=%d hp=%d/%d gold=%d quest=%s buffs=%s",
		name, new and "yes" or "no", p.x, p.y, p.hp, p.maxhp, p.gold, quest_text(p), buff_list(p))
	return sformat("%s mail=%d", reply, mail_waiting(name)), p.reward_progress
end

-- Pushes what waits in the mailbox of name to its session (the agent asks
-- once it has written the login answer, so that the items come after it),
-- then drops each item from the store. An item is pushed again only if the
-- node dies between its push and its removal.
function CMD.deliver_mail(source, name)
	local p = players[name]
	if p == nil or p.agent ~= source or p.mail_busy or not mailbox.on() then
		return
	end
	p.mail_busy = true
	local ok, e = pcall(function()
		for _, m in ipairs(mailbox.waiting(name)) do
			if not p.online then
				break -- the rest waits for the next login
			end
			show_item(p, m.item)
			mailbox.remove(m.key)
		end
	end)
	p.mail_busy = nil
	if not ok then
		request_log("warn: world: mailbox of %s not delivered: %s", name, e)
	end
end

-- A reminder's run (from the reminder service): a chest opens, or a
-- mailbox item nobody collected expires. Any answer acknowledges the run;
-- an error makes the reminder service try again later.
function CMD.reminder(_, key, payload, info)
	if type(payload) == "string" and key == chest_key(payload) then
		local p = players[payload]
		if p and p.online then
			p.gold = p.gold + S.chest_gold
			push(p, sformat("chest opened gold=+%d total=%d", S.chest_gold, p.gold))
		else -- offline, or unknown since a restart: the gold waits for the login
			local item = { kind = "chest", gold = S.chest_gold, sent = info.due }
			mailbox.post(payload, item, mailbox.id(info.due, "chest"))
		end
		return true
	end
	local owner = mailbox.owner(key)
	if owner then
		local p = online[owner]
		if p then -- collected late (it was posted while a login was delivering)
			show_item(p, payload)
		else
			skynet.error(sformat("world: mail expired key=%s kind=%s", key, tostring(payload.kind)))
		end
		return true
	end
	skynet.error(sformat("warn: world: unknown reminder key=%s", key))
	return true
end

-- The session of name (through agent source) ended; progress: reward cs
-- (nil: unknown, the saved progress stays).
function CMD.logout(source, name, progress)
	local p = players[name]
	if p == nil or p.agent ~= source then
		return
	end
	p.reward_progress = progress or p.reward_progress
	grid_remove(pgrid, p)
	online[name] = nil
	p.online, p.fd, p.agent = false, nil, nil
	broadcast(p.x, p.y, sformat("leave %s", name), nil, nil, name)
end

-- A game request from the agent of name: the reply text.
function CMD.request(source, name, cmd, line)
	local p = players[name]
	if p == nil or p.agent ~= source then
		return err(tostring(cmd), "not logged in")
	end
	local f = REQ[cmd]
	if f == nil then
		return err(tostring(cmd), "unknown command (try help)")
	end
	local ok, r = xpcall(f, debug.traceback, p, line)
	if not ok then
		request_log("error: world: request failed cmd=%s: %s", cmd, r)
		return err(cmd, "internal error")
	end
	return r
end

function CMD.reward(_, name, gold)
	local p = players[name]
	if p == nil then
		return 0
	end
	p.gold = p.gold + gold
	return p.gold
end

function CMD.daily_reset()
	daily_reset()
end

-- Counters for tests and the console.
function CMD.stats()
	local n, alive = 0, 0
	for _ in pairs(players) do
		n = n + 1
	end
	local on = 0
	for _ in pairs(online) do
		on = on + 1
	end
	for _, m in ipairs(monster_list) do
		if not m.dead then
			alive = alive + 1
		end
	end
	return {
		timers = skynet.stat "timers", players = n, online = on, monsters_alive = alive,
		ticks = tick_n,
	}
end

-- What the debug console's `info <world>` shows.
skynet.info_func(CMD.stats)

-- A snapshot of one entity (tests): plain fields, buffs as skill -> cs left.
function CMD.inspect(_, id)
	local e = find(id)
	if e == nil then
		return nil
	end
	local t = {}
	for k, v in pairs(e) do
		if type(v) ~= "table" and type(v) ~= "thread" and type(v) ~= "function" then
			t[k] = v
		end
	end
	t.buffs = {}
	for skill, b in pairs(e.buffs) do
		t.buffs[skill] = b.ends - skynet.now()
	end
	return t
end

skynet.start(function()
	skynet.dispatch("lua", function(session, source, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			skynet.error(sformat("error: world: unknown command (%s) from %s", tostring(cmd),
				skynet.address(source)))
			if session ~= 0 then
				skynet.response()(false) -- the caller's call fails, not a nil answer
			end
			return
		end
		if session == 0 then
			f(source, ...)
		else
			skynet.retpack(f(source, ...))
		end
	end)
end)
