-- The demo game's settings: every tunable number in one table, with its
-- default. main.lua reads them from the node config (a config key of the
-- same name overrides the default: `idle_kick_cs = 500`); tests and the
-- benchmark build them with settings.make { ... } and pass the table to the
-- world and the watchdog. Durations are in centiseconds (skynet ticks).
local M = {}

M.DEFAULTS = {
	-- network
	gate_address = "127.0.0.1",
	gate_port = 8888, -- 0: any free port (the watchdog reports it)
	maxclient = 1024,
	debug_console_port = 8000,
	max_request = 256, -- longest request payload in bytes
	web_address = "127.0.0.1", -- the browser arena (examples/web) and its WebSocket
	web_port = 8080, -- 0: no web server
	web_maxclient = 256, -- WebSockets at most, each one holds a gate connection (below maxclient)
	metrics_port = 9100, -- Prometheus metrics on 127.0.0.1; 0: none
	-- the arena
	map_width = 20,
	map_height = 20,
	view = 0, -- cells a player sees around itself; 0: the whole map
	tick_cs = 10, -- the world's fixed-rate tick (10 cs = 10 Hz)
	seed = 0, -- random seed of the world; 0: from the clock
	crowd_rate = 20, -- events between others sent to a player a second at most; 0: no limit
	-- players
	player_hp = 100,
	player_damage = 10,
	player_respawn_cs = 500,
	player_spot = "5,5", -- "x,y": where new players start and the dead respawn; "": a random cell
	idle_kick_cs = 3000, -- disconnect after this long without a message
	reward_cs = 6000, -- online time per reward
	reward_gold = 10,
	-- monsters
	monster_count = 6,
	monster_hp = 30,
	monster_damage = 4,
	monster_gold = 5,
	monster_move_cs = 100, -- a wandering step this often; 0: monsters stay put
	monster_attack_cs = 100, -- an adjacent player is hit this often
	monster_respawn_cs = 500,
	monster_spots = "", -- "x,y x,y ...": fixed start cells (tests), else random
	-- skills: buff and debuff durations
	shield_cs = 1000, -- buff: damage taken halved
	rage_cs = 800, -- buff: damage dealt doubled
	regen_cs = 600, -- buff: +5 hp per second
	poison_cs = 600, -- debuff on a monster: -3 hp per second
	freeze_cs = 400, -- debuff on a monster: no move, no attack
	skill_range = 3, -- cells
	-- daily quest: kill quest_kills monsters; reset every day at daily_reset
	quest_kills = 3,
	quest_gold = 50,
	daily_reset = "05:00", -- "HH:MM" local time, or a 5-field cron spec
	daily_tz = "local",
	-- durable (only when the node config sets reminder_store): chests and the mailbox
	chest_cs = 12000, -- a chest opens this long after `chest`, even across a restart
	chest_gold = 100,
	mail_keep_cs = 259200000, -- what waits for an offline player is dropped after 30 days
	world_name = ".world", -- the world's service name, which the reminders call; "": none
	-- tests only: launch the game's services through this wrapper service
	wrapper = "",
}

local function convert(key, value)
	local default = M.DEFAULTS[key]
	if type(default) == "number" then
		local n = math.tointeger(tonumber(value))
		if n == nil then
			error(string.format("settings: %s must be an integer (%s)", key, tostring(value)), 3)
		end
		return n
	end
	return tostring(value)
end

-- A full settings table: the defaults, overridden by the fields of t.
function M.make(t)
	local s = {}
	for k, v in pairs(M.DEFAULTS) do
		s[k] = v
	end
	for k, v in pairs(t or {}) do
		if M.DEFAULTS[k] == nil then
			error(string.format("settings: unknown key (%s)", tostring(k)), 2)
		end
		s[k] = convert(k, v)
	end
	return s
end

-- The settings from the node config: getenv(key) for every known key.
function M.from_env(getenv)
	local t = {}
	for k in pairs(M.DEFAULTS) do
		local v = getenv(k)
		if v ~= nil and v ~= "" then
			t[k] = v
		end
	end
	return M.make(t)
end

-- The cron spec of the daily reset: "HH:MM" becomes "MM HH * * *".
function M.daily_spec(s)
	local h, m = s.daily_reset:match "^(%d%d?):(%d%d)$"
	if h then
		return string.format("%d %d * * *", tonumber(m), tonumber(h))
	end
	return s.daily_reset
end

return M
