-- skynet.task / skynet.uniqtask, loaded on first use.
local skynet = require "skynet"
local S = require "skynet.private"

local traceback = debug.traceback

local function describe(session, v)
	if type(v) == "thread" then
		return traceback(v)
	end
	local tb = S.timeout_tb[session]
	if tb then
		return tb
	end
	if type(v) == "function" then
		local info = debug.getinfo(v, "S")
		return string.format("pending timeout %s:%d", info.short_src, info.linedefined)
	end
	return "pending request"
end

local function key_of(session, v)
	if type(v) == "function" then
		return tostring(S.timer_object(session))
	end
	return tostring(v)
end

-- Calls f(session, v) for every pending session (timeouts included).
local function each_pending(f)
	for s, v in pairs(S.waiting) do
		if v ~= "BREAK" then
			f(s, v)
		end
	end
	for s, v in pairs(S.timers) do
		f(s, v)
	end
end

function skynet.task(ret)
	local waiting = S.waiting
	if ret == nil then
		local n = 0
		each_pending(function()
			n = n + 1
		end)
		return n
	end
	local t = type(ret)
	if t == "table" then
		each_pending(function(s, v)
			ret[key_of(s, v) .. " session: " .. s] = describe(s, v)
		end)
		return ret
	elseif t == "number" then
		local v = waiting[ret] or S.timers[ret]
		if v ~= nil and v ~= "BREAK" then
			return describe(ret, v)
		end
	elseif t == "thread" then
		for s, v in pairs(waiting) do
			if v == ret then
				return s
			end
		end
	elseif ret == "init" then
		local co = S.init_thread
		if co then
			return traceback(co)
		end
	end
end

function skynet.uniqtask()
	local groups = {}
	each_pending(function(s, v)
		local tb = describe(s, v)
		local list = groups[tb]
		if list == nil then
			list = {}
			groups[tb] = list
		end
		list[#list + 1] = s
	end)
	local r = {}
	for tb, list in pairs(groups) do
		table.sort(list)
		r[string.format("%d\tsessions:[%s]\n", #list, table.concat(list, ","))] = tb
	end
	return r
end

return true
