-- A crowded arena (examples/world.lua, crowd_rate): a player is sent every
-- event about itself, and at most crowd_rate events between others a
-- second; the rest are counted in one "skipped <n>" push a second, so
-- what was sent plus what was skipped is everything that happened.
local t = require "testlib"
local game = require "svc_game_util"

local MOVES <const> = 30

-- Reads w's messages until none comes for limit cs: the "move <who>" pushes
-- and the sum of the skipped counts.
local function drain(w, who, limit)
	local moves, skipped, others = 0, 0, {}
	for _, msg in ipairs(w.pushes) do
		others[#others + 1] = msg
	end
	w:flush()
	while true do
		local msg = w:next(limit)
		if msg == nil then
			break
		end
		others[#others + 1] = msg
	end
	local rest = {}
	for _, msg in ipairs(others) do
		if msg:match("^move " .. who .. " ") then
			moves = moves + 1
		elseif msg:match "^skipped %d+$" then
			skipped = skipped + tonumber(msg:match "%d+")
		else
			rest[#rest + 1] = msg
		end
	end
	return moves, skipped, rest
end

t.case("events between others: at most crowd_rate a second, the rest counted", function()
	local g = game.start { crowd_rate = 5 }
	local w = game.login(g, "watcher")
	local a = game.login(g, "actor")
	w:expect "^enter actor "
	for i = 1, MOVES do
		a:send(i % 2 == 1 and "move e" or "move w")
	end
	for _ = 1, MOVES do
		t.ok(a:answer():match "^ok move ", "move answered")
	end
	-- an event about the watcher comes through though its budget is spent
	t.ok(a:request("cast shield watcher"):match "^ok cast ", "shield on the watcher")
	w:expect "^buff watcher shield [%d.]+ actor$"
	local moves, skipped, rest = drain(w, "actor", 300)
	t.eq(moves + skipped, MOVES, string.format("sent %d + skipped %d: every move", moves, skipped))
	t.ok(skipped > 0, "some moves were skipped")
	t.ok(moves < MOVES, "fewer moves sent than made")
	t.eq(#rest, 0, "nothing else: " .. table.concat(rest, " | "))
	-- the actor's own moves are never limited for itself: it has its answers,
	-- and an event about it (the watcher's shield on it) comes at once
	t.ok(w:request("cast shield actor"):match "^ok cast ", "shield on the actor")
	a:expect "^buff actor shield [%d.]+ watcher$"
	w:close()
	a:close()
end)

t.case("crowd_rate = 0: no limit", function()
	local g = game.start { crowd_rate = 0 }
	local w = game.login(g, "watcher")
	local a = game.login(g, "actor")
	w:expect "^enter actor "
	for i = 1, MOVES do
		a:send(i % 2 == 1 and "move e" or "move w")
	end
	for _ = 1, MOVES do
		a:answer()
	end
	local moves, skipped = drain(w, "actor", 300)
	t.eq(moves, MOVES, "every move sent")
	t.eq(skipped, 0, "nothing skipped")
	w:close()
	a:close()
end)
t.start()
