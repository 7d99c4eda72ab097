-- sproto encode / decode rate of a typical game message: a player struct of
-- a dozen scalar fields and an array of 20 item structs (~600 bytes
-- encoded). Prints
--   BENCH name=libs.sproto.encode_per_s   (sp:encode, not packed)
--   BENCH name=libs.sproto.decode_per_s   (sp:decode)
--   BENCH name=libs.sproto.pencode_per_s  (encode + 0-pack)
--   BENCH name=libs.sproto.pdecode_per_s  (unpack + decode)
-- then aborts the node. Each figure is the best of three runs of ~0.3 s.
local skynet = require "skynet"
local report = require "bench_report"
local sproto = require "sproto"
require "skynet.manager"

local hpc = skynet.hpc

local SCHEMA = [[
.Item { id 0 : integer count 1 : integer name 2 : string quality 3 : integer bound 4 : boolean }
.Player {
	id 0 : integer name 1 : string level 2 : integer exp 3 : integer gold 4 : integer
	hp 5 : integer mp 6 : integer x 7 : double y 8 : double online 9 : boolean
	guild 10 : string vip 11 : integer items 12 : *Item
}
]]

local function message()
	local items = {}
	for i = 1, 20 do
		items[i] = { id = 1000 + i, count = i * 3, name = "item" .. i, quality = i % 5,
			bound = i % 2 == 0 }
	end
	return { id = 123456789, name = "player-one", level = 57, exp = 1234567, gold = 99999999,
		hp = 3200, mp = 800, x = 105.25, y = -33.5, online = true, guild = "the guild",
		vip = 3, items = items }
end

-- Calls f() in batches for about `seconds`; returns calls per second.
local function rate(f, seconds)
	local batch = 200
	local n = 0
	local t0 = hpc()
	local limit = seconds * 1e9
	repeat
		for _ = 1, batch do
			f()
		end
		n = n + batch
	until hpc() - t0 >= limit
	return n / ((hpc() - t0) / 1e9)
end

local function best(f)
	local r = 0
	for _ = 1, 3 do
		r = math.max(r, rate(f, 0.3))
	end
	return r
end

skynet.start(function()
	local ok, err = xpcall(function()
		local sp = sproto.parse(SCHEMA)
		local msg = message()
		local bin = sp:encode("Player", msg)
		local packed = sp:pencode("Player", msg)
		assert(#sp:decode("Player", bin).items == 20)
		report("libs.sproto.encode_per_s", best(function()
			sp:encode("Player", msg)
		end), "msgs/s")
		report("libs.sproto.decode_per_s", best(function()
			sp:decode("Player", bin)
		end), "msgs/s")
		report("libs.sproto.pencode_per_s", best(function()
			sp:pencode("Player", msg)
		end), "msgs/s")
		report("libs.sproto.pdecode_per_s", best(function()
			sp:pdecode("Player", packed)
		end), "msgs/s")
		print(string.format("bench: sproto message %d bytes, %d packed", #bin, #packed))
	end, debug.traceback)
	if not ok then
		print("bench: sproto benchmark failed: " .. tostring(err))
	end
	skynet.abort()
end)
