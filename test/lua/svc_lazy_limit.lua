-- Helper: a service with a 2 MB Lua heap limit that fills its heap to
-- within 1 KB of the limit, then uses what it had not loaded yet: the standard libraries snlua
-- opens on first use (io, os, utf8, math, debug) and framework functions
-- skynet.lua loads on first use (skynet.tracetag, skynet.task,
-- skynet.request), then exits. The results go back to the caller in one
-- packed reply (built outside the Lua heap).
local skynet = require "skynet"

skynet.memlimit(2 * 1024 * 1024)

local hoard

-- Keeps everything it can allocate (big pieces first, then ever smaller
-- ones, so little room is left).
local function fill()
	for _, size in ipairs { 65536, 4096, 256, 48, 0 } do
		local ok = true
		while ok do
			ok = pcall(function()
				for i = 1, 1000 do
					hoard = { size > 0 and string.rep("x", size - 1) .. i or i, hoard }
				end
			end)
		end
	end
end

-- Gives back about 1 KB (the last small pieces), less than any of the parts
-- loaded below needs: a call with a few free stack slots to spare then
-- works, a load does only under snlua's grant.
local function leave_room()
	for _ = 1, 16 do
		hoard = hoard[2]
	end
	collectgarbage("collect")
end

local function full()
	return not pcall(string.rep, "y", 4096) -- 4 KB more does not fit
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		assert(cmd == "fill_use_exit")
		fill()
		leave_room()
		local was_full = full()
		local t = os.time()
		local f = math.floor(2.5)
		local n = utf8.len("abc")
		local hook = debug.gethook()
		local io_type = io.type(42)
		local tracetag = type(skynet.tracetag)
		local task = type(skynet.task)
		local request = type(skynet.request)
		-- the loads raised the limit by what they took (128 KB at most): no more
		local still_limited = not pcall(string.rep, "z", 256 * 1024)
		skynet.retpack(was_full, t, f, n, hook, io_type, tracetag, task, request, still_limited)
		skynet.exit()
	end)
end)
