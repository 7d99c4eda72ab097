-- A load generator for the demo game: N bot players that log in over real
-- sockets, then each sends `rate` requests a second (moves, casts,
-- attacks, chat, status) for `seconds`, and reads everything the server
-- sends. It prints requests per second and the p50/p99 response latency
-- (request written -> its answer read, so the bots' own scheduling is in
-- the figure), and returns them.
--
-- Two ways to use it:
--   * from another service: skynet.newservice("bots"), then
--     skynet.call(bots, "lua", "run", { host, port, count, rate, seconds })
--     -> stats (bench/bench_game.lua does this);
--   * as a node of its own against a running server (make run):
--     ./skynet examples/config.bots, with the bots_* keys of that config.
-- A bot never has more than MAX_OUTSTANDING requests unanswered: when the
-- server falls behind the bots slow down (counted as `skipped`) instead of
-- piling up an unbounded queue.
local skynet = require "skynet"
require "skynet.manager"
local socket = require "skynet.socket"

local sformat = string.format
local spack, sunpack = string.pack, string.unpack
local hpc = skynet.hpc
local random = math.random

local MAX_OUTSTANDING <const> = 8
local DIRS <const> = { "n", "s", "e", "w", "ne", "nw", "se", "sw" }
local BUFFS <const> = { "shield", "rage", "regen" }

local function action(i)
	local r = random(100)
	if r <= 45 then
		return "move " .. DIRS[random(#DIRS)]
	elseif r <= 60 then
		return "cast " .. BUFFS[random(#BUFFS)]
	elseif r <= 65 then
		return "cast dispel"
	elseif r <= 80 then
		return "attack"
	elseif r <= 90 then
		return sformat("say hello from bot %d", i)
	end
	return "status"
end

-- Process CPU time in seconds (Linux /proc), or nil.
local clk_tck
local function cpu_seconds()
	local f = io.open("/proc/self/stat")
	if f == nil then
		return nil
	end
	local s = f:read "a"
	f:close()
	local rest = s:match "%) (.*)$"
	if rest == nil then
		return nil
	end
	local w = {}
	for x in rest:gmatch "%S+" do
		w[#w + 1] = x
	end
	if clk_tck == nil then
		local p = io.popen "getconf CLK_TCK 2>/dev/null"
		clk_tck = p and tonumber(p:read "a") or 100
		if p then
			p:close()
		end
	end
	-- after ") ": state is field 3 of stat, utime 14 and stime 15
	return (tonumber(w[12]) + tonumber(w[13])) / clk_tck
end

local function percentile(sorted, q)
	if #sorted == 0 then
		return 0
	end
	local k = math.max(1, math.ceil(#sorted * q))
	return sorted[k]
end

-- One bot: logs in as name, then sends on its period until run.stop.
local function bot(i, run)
	local name = sformat("%s%d", run.prefix, i)
	local id = socket.open(run.host, run.port)
	if not id then
		run.failed = run.failed + 1
		run.ready = run.ready + 1
		return
	end
	local sent = {} -- hpc times of the unanswered requests, oldest first
	local head, tail = 1, 0
	local closed = false
	local logged_in = false
	skynet.fork(function()
		while true do
			local h = socket.read(id, 2)
			if not h then
				break
			end
			local n = sunpack(">I2", h)
			local msg = n > 0 and socket.read(id, n) or ""
			if not msg then
				break
			end
			local c = msg:byte(1)
			if (c == 111 and msg:sub(1, 3) == "ok ") or (c == 101 and msg:sub(1, 4) == "err ") then
				local t0 = sent[head]
				if t0 then
					sent[head] = nil
					head = head + 1
					if run.measuring then
						run.lat[#run.lat + 1] = hpc() - t0
						run.answers = run.answers + 1
						if c == 101 then
							run.errors = run.errors + 1
						end
					end
				end
				if not logged_in then
					logged_in = true
					run.ready = run.ready + 1
				end
			elseif run.measuring then
				run.pushes = run.pushes + 1
			end
		end
		closed = true
		if not logged_in then
			run.ready = run.ready + 1
		end
	end)
	local function send(text)
		tail = tail + 1
		sent[tail] = hpc()
		socket.write(id, spack(">s2", text))
	end
	send("login " .. name)
	local period = math.max(1, 100 // run.rate)
	skynet.sleep(random(period))
	while not run.stop and not closed do
		if tail - head + 1 >= MAX_OUTSTANDING then
			if run.measuring then
				run.skipped = run.skipped + 1
			end
		else
			send(action(i))
			if run.measuring then
				run.requests = run.requests + 1
			end
		end
		skynet.sleep(period)
	end
	if closed then
		run.dropped = run.dropped + 1
	end
	socket.close(id)
	run.done = run.done + 1
end

local CMD = {}

-- Runs the bots; opts: host, port, count, rate (requests/s per bot),
-- seconds (measured), ramp_cs (logins spread over it), prefix (names).
function CMD.run(opts)
	local run = {
		host = opts.host or "127.0.0.1", port = assert(math.tointeger(opts.port), "bots: port"),
		rate = math.max(1, opts.rate or 2), prefix = opts.prefix or "bot",
		ready = 0, done = 0, failed = 0, dropped = 0, stop = false, measuring = false,
		lat = {}, answers = 0, errors = 0, pushes = 0, requests = 0, skipped = 0,
	}
	local count = opts.count or 100
	local ramp = opts.ramp_cs or 200
	math.randomseed(opts.seed or 1)
	for i = 1, count do
		skynet.fork(bot, i, run)
		if i % 50 == 0 then
			skynet.sleep(math.max(1, ramp * 50 // count))
		end
	end
	local deadline = skynet.now() + 3000
	while run.ready < count and skynet.now() < deadline do
		skynet.sleep(10)
	end
	skynet.sleep(100) -- settle
	local cpu0, t0 = cpu_seconds(), hpc()
	run.measuring = true
	skynet.sleep((opts.seconds or 10) * 100)
	run.measuring = false
	local wall = (hpc() - t0) / 1e9
	local cpu1 = cpu_seconds()
	run.stop = true
	deadline = skynet.now() + 1000
	while run.done + run.failed < count and skynet.now() < deadline do
		skynet.sleep(10)
	end
	table.sort(run.lat)
	local stats = {
		bots = count, logged_in = run.ready - run.failed, failed = run.failed,
		dropped = run.dropped, seconds = wall, requests = run.requests, answers = run.answers,
		errors = run.errors, pushes = run.pushes, skipped = run.skipped,
		req_per_s = run.answers / wall, pushes_per_s = run.pushes / wall,
		p50_ms = percentile(run.lat, 0.50) / 1e6, p99_ms = percentile(run.lat, 0.99) / 1e6,
		max_ms = percentile(run.lat, 1) / 1e6,
		cpu_pct = cpu0 and cpu1 and (cpu1 - cpu0) * 100 / wall or nil,
	}
	print(sformat("bots: %d bots, %.1f s: %.0f req/s (%d answers, %d errors), %.0f pushes/s,"
		.. " latency p50 %.2f ms p99 %.2f ms max %.2f ms, skipped %d, failed %d, dropped %d%s",
		count, wall, stats.req_per_s, stats.answers, stats.errors, stats.pushes_per_s,
		stats.p50_ms, stats.p99_ms, stats.max_ms, stats.skipped, stats.failed, stats.dropped,
		stats.cpu_pct and sformat(", process cpu %.0f%%", stats.cpu_pct) or ""))
	return stats
end

local mode = ...

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = assert(CMD[cmd], cmd)
		skynet.retpack(f(...))
	end)
	if mode == "standalone" then
		-- ./skynet examples/config.bots: settings from the config, then stop
		skynet.fork(function()
			local getenv = skynet.getenv
			CMD.run {
				host = getenv "bots_host" or "127.0.0.1",
				port = math.tointeger(tonumber(getenv "bots_port" or "8888")),
				count = math.tointeger(tonumber(getenv "bots_count" or "100")),
				rate = math.tointeger(tonumber(getenv "bots_rate" or "2")),
				seconds = math.tointeger(tonumber(getenv "bots_seconds" or "10")),
				prefix = getenv "bots_prefix" or "bot",
			}
			skynet.abort()
		end)
	end
end)
