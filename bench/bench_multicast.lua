-- skynet.multicast publish rate: one publisher (this service) publishes a
-- small table to a channel with 100 subscriber services (this file started
-- with the argument "sub"), one publish after the other (each returns once
-- multicastd has handed it to all 100). A run publishes for ~1 s, then a
-- final marker; it ends when every subscriber has handled everything, and
-- each must have counted every message. Prints
--   BENCH name=libs.multicast.publish_per_s     (publishes, each to 100)
--   BENCH name=libs.multicast.delivered_per_s   (messages handled by subscribers)
-- (best of three runs), then aborts the node.
local skynet = require "skynet"
local mc = require "skynet.multicast"
require "skynet.manager"

local SUBSCRIBERS <const> = 100
local RUN_NS <const> = 1e9

local mode = ...

if mode == "sub" then
	local count = 0
	local owner
	local ch
	skynet.start(function()
		skynet.dispatch("lua", function(_, source, _, channel)
			owner = source
			ch = mc.new {
				channel = channel,
				dispatch = function(_, _, _, final)
					if final then
						skynet.send(owner, "lua", "done", count)
						count = 0
					else
						count = count + 1
					end
				end,
			}
			ch:subscribe()
			skynet.retpack(true)
		end)
	end)
	return
end

local report = require "bench_report"
local hpc = skynet.hpc

local done_token = {}
local done_n = 0
local bad = 0
local expect = 0

local function run(ch)
	local msg = { id = 0, x = 1.5, name = "event" }
	done_n = 0
	local n = 0
	local t0 = hpc()
	repeat
		for _ = 1, 50 do
			n = n + 1
			msg.id = n
			ch:publish(msg)
		end
	until hpc() - t0 >= RUN_NS
	expect = n
	ch:publish(msg, true)
	if done_n < SUBSCRIBERS then
		skynet.wait(done_token)
	end
	local seconds = (hpc() - t0) / 1e9
	return n / seconds, n * SUBSCRIBERS / seconds
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, _, count)
		if count ~= expect then
			bad = bad + 1
		end
		done_n = done_n + 1
		if done_n == SUBSCRIBERS then
			skynet.wakeup(done_token)
		end
	end)
	local ok, err = xpcall(function()
		local ch = mc.new()
		for _ = 1, SUBSCRIBERS do
			skynet.call(skynet.newservice("bench_multicast", "sub"), "lua", "join", ch.channel)
		end
		local best_pub, best_del = 0, 0
		for _ = 1, 3 do
			local p, d = run(ch)
			best_pub = math.max(best_pub, p)
			best_del = math.max(best_del, d)
		end
		assert(bad == 0, "a subscriber missed messages")
		report("libs.multicast.publish_per_s", best_pub, "msg/s")
		report("libs.multicast.delivered_per_s", best_del, "msg/s")
		print(string.format("bench: multicast to %d subscriber services", SUBSCRIBERS))
	end, debug.traceback)
	if not ok then
		print("bench: multicast benchmark failed: " .. tostring(err))
	end
	skynet.sleep(5)
	skynet.abort()
end)
