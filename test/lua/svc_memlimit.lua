-- Helper: a service with a 4 MB Lua heap limit (set in the main chunk).
local skynet = require "skynet"

local LIMIT <const> = 4 * 1024 * 1024

skynet.memlimit(LIMIT)

local CMD = {}

function CMD.limit()
	return LIMIT, skynet.memlimit
end

function CMD.kb()
	collectgarbage("collect")
	return collectgarbage("count")
end

-- One big string: returns (ok, length or error text).
function CMD.alloc(n)
	local ok, r = pcall(string.rep, "x", n)
	if ok then
		return true, #r
	end
	return false, tostring(r)
end

-- Many small tables until the limit bites; everything is garbage after.
function CMD.fill()
	local ok, err = pcall(function()
		local t = {} -- luacheck: ignore (only filled, to use memory)
		for i = 1, 10000000 do
			t[i] = { i }
		end
	end)
	return ok, tostring(err)
end

function CMD.ping()
	return "pong"
end

-- Keeps everything it can allocate (big pieces first, then ever smaller
-- ones, so little room is left), then exits. Never answers: exit fails the
-- request. A coroutine parked in skynet.wait holds a to-be-closed variable
-- whose handler (run by exit) needs a few KB and sends `source` a mark.
local hoard
function CMD.fill_exit(source)
	skynet.fork(function()
		local guard <close> = setmetatable({}, { -- luacheck: ignore (only closed)
			__close = function()
				local text = string.rep("c", 4096)
				skynet.send(source, "lua", "mark", "closed " .. #text)
			end,
		})
		skynet.wait()
	end)
	skynet.yield()
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
	skynet.exit()
end

skynet.start(function()
	skynet.dispatch("lua", function(_, source, cmd, ...)
		if cmd == "fill_exit" then
			return CMD.fill_exit(source)
		end
		skynet.retpack(CMD[cmd](...))
	end)
end)
