-- skynet.loglimit under virtual time: at most `lines` lines a period, the
-- rest counted without being formatted, one count line when the period ends
-- (even when no other call comes, or the service exits first), no timer
-- while under the limit, a long flood loses no count, the defaults, and the
-- argument errors. The log is
-- observed by replacing skynet.error in this service (the limiter looks it up
-- at each write).
local skynet = require "skynet"
local loglimit = require "skynet.loglimit"
local t = require "testlib"

local logged = {}

local function pending()
	return skynet.stat "timers"
end

-- Calls f with skynet.error writing to `logged` (emptied first).
local function capture(f)
	for i = #logged, 1, -1 do
		logged[i] = nil
	end
	local old = skynet.error
	skynet.error = function(...)
		logged[#logged + 1] = table.concat({ ... }, " ")
	end
	local ok, err = pcall(f)
	skynet.error = old
	assert(ok, err)
end

-- N in "... (first of N lines suppressed in S s)", and S; nil if not a count line.
local function count_of(line)
	local n, s = line:match "%(first of (%d+) lines suppressed in ([%d.]+) s%)$"
	return tonumber(n), tonumber(s)
end

t.case("lines pass, the rest are counted unformatted, the count comes at the period's end",
	function()
		capture(function()
			local formatted = 0
			local arg = setmetatable({}, {
				__tostring = function()
					formatted = formatted + 1
					return "x"
				end,
			})
			local log = loglimit.new(3, 1)
			local timers = pending()
			for i = 1, 10 do
				log("flood: frame %d refused (%s)", i, arg)
			end
			t.eq(#logged, 3, "lines written at once")
			t.eq(logged[1], "flood: frame 1 refused (x)", "first line")
			t.eq(logged[3], "flood: frame 3 refused (x)", "third line")
			t.eq(formatted, 4, "formatted: 3 lines and the sample")
			t.eq(pending(), timers + 1, "one timer for the count")
			skynet.sleep(99)
			t.eq(#logged, 3, "no count before the period ends")
			skynet.sleep(1)
			t.eq(#logged, 4, "the count line at the period's end")
			local n, s = count_of(logged[4])
			t.eq(n, 7, "suppressed count")
			t.eq(s, 1.0, "seconds")
			t.ok(logged[4]:find("flood: frame 4 refused (x)", 1, true) == 1,
				"the sample is the first suppressed line: " .. logged[4])
			t.eq(pending(), timers, "timer gone")
			-- a new period: lines pass again
			log("flood: again")
			t.eq(logged[5], "flood: again", "next period writes at once")
		end)
	end)

t.case("under the limit: every line written, no timer", function()
	capture(function()
		local log = loglimit.new(5, 1)
		local timers = pending()
		for round = 1, 4 do
			for i = 1, 5 do
				log("quiet %d.%d", round, i)
			end
			t.eq(pending(), timers, "no timer in round " .. round)
			skynet.sleep(100)
		end
		t.eq(#logged, 20, "all written")
		for _, line in ipairs(logged) do
			t.eq(count_of(line), nil, "no count line: " .. line)
		end
	end)
end)

t.case("a flood over many periods: bounded lines, no count lost", function()
	capture(function()
		local log = loglimit.new(10, 1)
		local calls = 0
		local t0 = skynet.now()
		while skynet.now() - t0 < 500 do -- 5 s: 100 calls every 5 cs
			for _ = 1, 100 do
				calls = calls + 1
				log("flood %d", calls)
			end
			skynet.sleep(5)
		end
		skynet.sleep(100) -- the last period's count
		local lines, counted = 0, 0
		for _, line in ipairs(logged) do
			local n = count_of(line)
			if n then
				counted = counted + n
			else
				lines = lines + 1
			end
		end
		t.eq(lines + counted, calls, "written + counted = calls")
		t.ok(#logged <= 6 * 11, "at most 11 lines per period, got " .. #logged)
		t.eq(calls, 10000, "calls made")
	end)
end)

t.case("two limiters are independent; defaults are 10 lines per 1 s", function()
	capture(function()
		local a, b = loglimit.new(), loglimit.new(2)
		for i = 1, 20 do
			a("a %d", i)
			b("b %d", i)
		end
		local na, nb = 0, 0
		for _, line in ipairs(logged) do
			if line:sub(1, 1) == "a" then
				na = na + 1
			else
				nb = nb + 1
			end
		end
		t.eq(na, 10, "a: default lines")
		t.eq(nb, 2, "b: 2 lines")
		skynet.sleep(99)
		t.eq(#logged, 12, "default period: nothing before 1 s")
		skynet.sleep(1)
		t.eq(#logged, 14, "both counts at 1 s")
	end)
end)

t.case("a period given in seconds (0.25 s, 2.5 s)", function()
	capture(function()
		local quick, slow = loglimit.new(1, 0.25), loglimit.new(1, 2.5)
		quick("q")
		quick("q")
		slow("s")
		slow("s")
		skynet.sleep(25)
		t.eq(#logged, 3, "quick count at 25 cs")
		t.eq(select(2, count_of(logged[3])), 0.25, "quick seconds")
		skynet.sleep(225)
		t.eq(#logged, 4, "slow count at 250 cs")
		t.eq(select(2, count_of(logged[4])), 2.5, "slow seconds")
	end)
end)

t.case("a service that exits before the period ends still writes its count", function()
	local t0 = skynet.now()
	skynet.newservice("svc_loglimit_exit", skynet.self())
	t.ok(t.wait_marks(3, 50), "3 lines, got " .. #t.marks)
	t.eq(t.marks[1], "exiting 1", "first line")
	t.eq(t.marks[2], "exiting 2", "second line")
	t.eq(count_of(t.marks[3]), 3, "the count at exit: " .. tostring(t.marks[3]))
	t.ok(t.marks[3]:find("exiting 3", 1, true) == 1, "sample: " .. t.marks[3])
	t.ok(skynet.now() - t0 < 100, "written at exit, not at the period's end")
end)

t.case("argument errors", function()
	t.raises("loglimit.new: lines must be an integer >= 1 (0)", loglimit.new, 0)
	t.raises("loglimit.new: lines must be an integer >= 1 (1.5)", loglimit.new, 1.5)
	t.raises("loglimit.new: lines must be an integer >= 1 (x)", loglimit.new, "x")
	t.raises("loglimit.new: period_s must be a number of seconds in (0, 86400] (0)",
		loglimit.new, 1, 0)
	t.raises("(-1)", loglimit.new, 1, -1)
	t.raises("nan)", loglimit.new, 1, 0 / 0)
	t.raises("(inf)", loglimit.new, 1, math.huge)
	t.raises("(s)", loglimit.new, 1, "s")
	local err = t.raises("lines must be", function()
		loglimit.new(-3)
	end)
	t.ok(err:find("test_loglimit.lua", 1, true), "blames the caller: " .. err)
	t.eq(type(loglimit.new(2.0)), "function", "an integral float is an integer")
end)

t.start()
