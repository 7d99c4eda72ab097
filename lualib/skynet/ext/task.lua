-- skynet.task / skynet.uniqtask, loaded on first use. What waits comes
-- from the kernel: S.pending (a new table each time), S.creation, S.init_thread.
local skynet = require "skynet"
local S = require "skynet.private"

local traceback = debug.traceback

local function describe(session, v)
	if type(v) == "thread" then
		return traceback(v)
	end
	local tb = S.creation(session)
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

function skynet.task(ret)
	if ret == nil then
		return S.pending_count()
	end
	local t = type(ret)
	if t == "table" then
		for s, v in pairs(S.pending()) do
			ret[key_of(s, v) .. " session: " .. s] = describe(s, v)
		end
		return ret
	elseif t == "number" then
		local v = S.pending()[ret]
		if v ~= nil then
			return describe(ret, v)
		end
	elseif t == "thread" then
		for s, v in pairs(S.pending()) do
			if v == ret then
				return s
			end
		end
	elseif ret == "init" then
		local co = S.init_thread()
		if co then
			return traceback(co)
		end
	end
end

function skynet.uniqtask()
	local groups = {}
	for s, v in pairs(S.pending()) do
		local tb = describe(s, v)
		local list = groups[tb]
		if list == nil then
			list = {}
			groups[tb] = list
		end
		list[#list + 1] = s
	end
	local r = {}
	for tb, list in pairs(groups) do
		table.sort(list)
		r[string.format("%d\tsessions:[%s]\n", #list, table.concat(list, ","))] = tb
	end
	return r
end

return true
