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
		local t = {}
		for i = 1, 10000000 do
			t[i] = { i }
		end
	end)
	return ok, tostring(err)
end

function CMD.ping()
	return "pong"
end

skynet.start(function()
	skynet.dispatch("lua", function(session, source, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
end)
