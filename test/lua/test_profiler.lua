-- test: real time (the profiler samples on the wall clock)
-- skynet.profiler: a service with a known hot function shows it as the
-- widest frame under its own prefix; a profile of one service holds only
-- its samples; stop and start again gives a fresh profile; a service that
-- exits while sampled keeps its samples; a C function is named; bad
-- arguments raise and a second start or a stop with nothing running
-- answer nil and why.
local skynet = require "skynet"
local profiler = require "skynet.profiler"
local socket = require "skynet.socket"
local t = require "testlib"

local HZ <const> = 250

-- Folded text -> array of { frames = {...}, count = n }.
local function parse(text)
	local out = {}
	for line in text:gmatch "[^\n]+" do
		local stack, count = line:match "^(.*) (%d+)$"
		t.ok(stack, "folded line: " .. line)
		local frames = {}
		for f in stack:gmatch "[^;]+" do
			frames[#frames + 1] = f
		end
		out[#out + 1] = { frames = frames, count = tonumber(count) }
	end
	return out
end

-- The newest Lua frame of each sample (C frames skipped), with counts.
local function leaf_lua(stacks)
	local by = {}
	for _, s in ipairs(stacks) do
		for i = #s.frames, 2, -1 do
			if not s.frames[i]:find(" [C]", 1, true) then
				by[s.frames[i]] = (by[s.frames[i]] or 0) + s.count
				break
			end
		end
	end
	return by
end

local function widest(by)
	local best, n, total = nil, -1, 0
	for k, v in pairs(by) do
		total = total + v
		if v > n then
			best, n = k, v
		end
	end
	return best, n, total
end

local function prefix(addr)
	return string.format("svc_prof_hot :%08x", addr)
end

local function samples_of(stacks, addr)
	local n = 0
	for _, s in ipairs(stacks) do
		if s.frames[1] == prefix(addr) then
			n = n + s.count
		end
	end
	return n
end

t.case("the hot function is the widest frame under its service", function()
	local hot = skynet.newservice "svc_prof_hot"
	assert(profiler.start(nil, HZ))
	skynet.call(hot, "lua", "burn", 60)
	local text, samples = profiler.stop()
	t.ok(samples > 0, "samples taken")
	local stacks = parse(text)
	local mine = {}
	for _, s in ipairs(stacks) do
		if s.frames[1] == prefix(hot) then
			mine[#mine + 1] = s
		end
	end
	local name, n, total = widest(leaf_lua(mine))
	t.ok(name and name:match "^burn_hot %(", "widest frame is burn_hot, got " .. tostring(name))
	t.ok(n * 2 > total, string.format("burn_hot holds most samples (%d of %d)", n, total))
	-- root first: the caller comes before the callee
	local joined = table.concat(mine[1].frames, ";")
	t.ok(joined:find("outer_work %(.-;burn_hot %(") ~= nil, "outer_work before burn_hot: " .. joined)
	skynet.kill(hot)
end)

t.case("a C function is named in the stack", function()
	local hot = skynet.newservice "svc_prof_hot"
	assert(profiler.start(hot, HZ))
	skynet.call(hot, "lua", "burn_c", 50)
	local text = profiler.stop()
	t.ok(text:find(";burn_c (", 1, true) and text:find(";string.rep [C]", 1, true),
		"string.rep under burn_c:\n" .. text:sub(1, 2000))
	skynet.kill(hot)
end)

t.case("a profile of one service holds only its samples", function()
	local a = skynet.newservice "svc_prof_hot"
	local b = skynet.newservice "svc_prof_hot"
	assert(profiler.start(skynet.address(b), HZ))
	local wait = t.spawn(2, function(i)
		return skynet.call(i == 1 and a or b, "lua", "burn", 40)
	end)
	wait()
	local text = profiler.stop()
	local stacks = parse(text)
	t.ok(#stacks > 0, "some samples")
	for _, s in ipairs(stacks) do
		t.eq(s.frames[1], prefix(b), "every stack is b's")
	end
	t.eq(profiler.status().target, b, "status names the target")
	skynet.kill(a)
	skynet.kill(b)
end)

t.case("stop and start again gives a fresh profile", function()
	local a = skynet.newservice "svc_prof_hot"
	local b = skynet.newservice "svc_prof_hot"
	assert(profiler.start(nil, HZ))
	skynet.call(a, "lua", "burn", 30)
	local first = parse((profiler.stop()))
	t.ok(samples_of(first, a) > 0, "a in the first profile")
	assert(profiler.start(nil, HZ))
	t.eq(profiler.status().samples < samples_of(first, a), true, "the count restarts")
	skynet.call(b, "lua", "burn", 30)
	local text = profiler.stop()
	local second = parse(text)
	t.eq(samples_of(second, a), 0, "nothing of a in the second profile")
	t.ok(samples_of(second, b) > 0, "b in the second profile")
	t.eq(profiler.dump(), text, "dump returns the last profile")
	skynet.kill(a)
	skynet.kill(b)
end)

t.case("a service that exits while sampled keeps its samples", function()
	local dying = skynet.newservice "svc_prof_hot"
	local other = skynet.newservice "svc_prof_hot"
	assert(profiler.start(nil, HZ))
	skynet.call(dying, "lua", "burn_exit", 40)
	t.ok(t.wait_until(function()
		return skynet.send(dying, "debug", "PING") == nil
	end, 300), "the service exited")
	skynet.call(other, "lua", "burn", 20) -- sampling goes on after the exit
	local stacks = parse((profiler.stop()))
	t.ok(samples_of(stacks, dying) > 0, "the exited service's samples stay")
	t.ok(samples_of(stacks, other) > 0, "the other service sampled after the exit")
	skynet.kill(other)
end)

t.case("bad arguments raise; a second start and an idle stop say why", function()
	t.raises("bad hz", profiler.start, nil, 0)
	t.raises("bad hz", profiler.start, nil, 1001)
	t.raises("bad hz", profiler.start, nil, 1.5)
	t.raises("bad address", profiler.start, "nowhere")
	t.raises("unknown name", profiler.start, ".no_such_name")
	t.raises("bad file", profiler.stop, 42)
	local ok, err = profiler.stop()
	t.eq(ok, nil, "stop with nothing running")
	t.eq(err, "no profile is running", "why")
	assert(profiler.start())
	t.eq(profiler.status().hz, 100, "default hz")
	t.eq(profiler.status().running, true, "running")
	ok, err = profiler.start()
	t.eq(ok, nil, "second start")
	t.ok(err:find("running already", 1, true), "why: " .. tostring(err))
	local dir = t.tmpdir()
	local text = assert(profiler.stop(dir .. "/p.folded"))
	local f = assert(io.open(dir .. "/p.folded"))
	t.eq(f:read "a", text, "the file holds the profile")
	f:close()
	t.eq(profiler.stop(dir .. "/p.folded"), nil, "stop again")
	ok, err = profiler.dump(dir .. "/no/such/dir/x")
	t.eq(ok, nil, "an unwritable file")
	t.ok(err:find("cannot write", 1, true), "why: " .. tostring(err))
	os.execute("rm -rf " .. dir)
	t.eq(profiler.status().running, false, "stopped")
end)

---------------------------------------------------------------- console

local console_fd

-- One console command: its output lines joined by "\n", and whether it ended in <CMD OK>.
local function console(line)
	if console_fd == nil then
		local c = skynet.newservice("debug_console", "127.0.0.1", 0)
		local _, port = skynet.call(c, "lua", "ADDRESS")
		console_fd = assert(socket.open("127.0.0.1", port))
		t.eq(socket.readline(console_fd), "Welcome to skynet console", "welcome")
	end
	socket.write(console_fd, line .. "\n")
	local out = {}
	while true do
		local l = assert(socket.readline(console_fd), "console closed")
		if l == "<CMD OK>" or l == "<CMD Error>" then
			return table.concat(out, "\n"), l == "<CMD OK>"
		end
		out[#out + 1] = l
	end
end

local function console_ok(line)
	local out, ok = console(line)
	t.ok(ok, string.format("%q failed: %s", line, out))
	return out
end

local function console_err(line, want)
	local out, ok = console(line)
	t.ok(not ok, string.format("%q should fail, got %s", line, out))
	t.ok(out:find(want, 1, true), string.format("%q: want %q in %q", line, want, out))
end

t.case("console: profile start, status and stop to a file", function()
	local hot = skynet.newservice "svc_prof_hot"
	local addr = skynet.address(hot)
	t.eq(console_ok("profile start " .. addr .. " 200"), "Profiling " .. addr .. " at 200 Hz, until profile stop",
		"start line")
	skynet.call(hot, "lua", "burn", 30)
	local status = console_ok "profile status"
	t.ok(status:find("running\ttrue", 1, true) and status:find("target\t" .. addr, 1, true),
		"status: " .. status)
	local dir = t.tmpdir()
	local out = console_ok("profile stop " .. dir .. "/c.folded")
	t.ok(out:match "^%d+ samples in %d+ stacks, written to .*c%.folded; hottest first:\n", "stop: " .. out)
	t.ok(out:find("burn_hot (", 1, true), "the hottest stack shown: " .. out)
	local f = assert(io.open(dir .. "/c.folded"))
	t.eq(f:read "a", profiler.dump(), "the file is the last profile")
	f:close()
	console_ok "profile start all 50"
	out = console_ok "profile stop"
	t.ok(out:match "^%d+ samples in %d+ stacks; hottest first:", "stop without a file: " .. out)
	os.execute("rm -rf " .. dir)
	skynet.kill(hot)
end)

t.case("console: bad arguments get clear errors", function()
	local usage = "Usage: profile start [address|all] [hz], profile stop [file], profile status"
	console_err("profile", usage)
	console_err("profile frob", usage)
	console_err("profile stop", "No profile is running (profile start begins one)")
	console_err("profile start :00ffffff", "No service at :00ffffff")
	console_err("profile start nothex", "Invalid address nothex")
	console_err("profile start all 0", "Invalid rate 0 (1 to 1000 samples a second)")
	console_err("profile start all 1001", "Invalid rate 1001")
	console_err("profile start all fast", "Invalid rate fast")
	console_ok "profile start"
	console_err("profile start", "Cannot start a profile: a profile is running already (stop it first)")
	console_err("profile stop /nonexistent/dir/p.folded", "The profile is kept, but cannot write "
		.. "/nonexistent/dir/p.folded")
	t.ok(profiler.dump(), "kept as the last profile")
	console_err("profile stop", "No profile is running")
end)

t.start()
