-- test: real time
-- The priority lane (skynet.priority, the config's priority_lane): with it
-- on, timer expiries (skynet.timeout and skynet.timeout_us) and debug and
-- system messages overtake the ordinary backlog, each lane keeping its
-- order; with it off, skynet's single order.
-- Real time: the timer must fire while the service is busy with its backlog
-- queued (virtual time moves only when every queue is empty). The subject
-- spins until the messages are queued, so the order is the same every run.
local skynet = require "skynet"
local t = require "testlib"

local K <const> = 50

local subject, helper

local function expected(on)
	local want = {}
	if on then
		for i = 1, K do
			want[#want + 1] = "Y" .. i
			want[#want + 1] = "D" .. i
		end
		want[#want + 1] = "T"
		want[#want + 1] = "U"
		for i = 1, K do
			want[#want + 1] = "L" .. i
		end
	else
		for i = 1, K do
			want[#want + 1] = "L" .. i
			want[#want + 1] = "Y" .. i
			want[#want + 1] = "D" .. i
		end
		want[#want + 1] = "T"
		want[#want + 1] = "U"
	end
	return want
end

t.case("lane on: the timer, debug and system messages overtake the backlog, in order", function()
	t.same(skynet.call(subject, "lua", "scene", true, helper, K), expected(true), "order")
end)

t.case("lane off: skynet's order (one FIFO)", function()
	t.same(skynet.call(subject, "lua", "scene", false, helper, K), expected(false), "order")
end)

t.case("lane on: skynet.yield and a timeout of 0 still wait behind the backlog", function()
	local got = skynet.call(subject, "lua", "yield_scene", helper, K)
	t.eq(#got, K + 2, "messages")
	t.eq(got[K + 1], "U0", "timeout_us(0) after the backlog")
	t.eq(got[K + 2], "yielded", "last")
end)

t.case("skynet.priority: returns the previous setting; bad input raises", function()
	t.eq(skynet.priority(), false, "default")
	t.eq(skynet.priority(true), false, "previous")
	t.eq(skynet.priority(), true, "now on")
	t.eq(skynet.priority(false), true, "previous")
	t.raises("on must be a boolean", skynet.priority, "yes")
	t.eq(skynet.priority(), false, "unchanged by bad input")
end)

t.case("config priority_lane: a matching service starts with the lane on", function()
	local cfg = skynet.newservice("svc_priority_cfg")
	t.eq(skynet.call(cfg, "lua", "priority"), true, "svc_priority_cfg")
	t.eq(skynet.call(subject, "lua", "priority"), false, "svc_priority")
	skynet.kill(cfg)
end)

t.start(nil, function()
	subject = skynet.newservice("svc_priority")
	helper = skynet.newservice("svc_priority")
end)
