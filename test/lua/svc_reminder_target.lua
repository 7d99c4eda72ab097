-- Helper of test_reminder: a reminder target registered under the name of
-- its first argument. Each "reminder" delivery is logged with the wall
-- clock it arrived at; "fail" key n makes the next n deliveries of key
-- raise; "mute" key n leaves the next n unanswered (the caller times out);
-- "log" [key] returns the deliveries so far (of key only, when given),
-- "clear" forgets them.
local skynet = require "skynet"
require "skynet.manager"
local core = require "skynet.core"

local name = ...
local log = {}
local failing, muted = {}, {}

local CMD = {}

function CMD.reminder(key, payload, info)
	log[#log + 1] = { key = key, payload = payload, info = info, at = core.walltime() }
	if (failing[key] or 0) > 0 then
		failing[key] = failing[key] - 1
		error("the handler of " .. key .. " raised on purpose")
	end
	if (muted[key] or 0) > 0 then
		muted[key] = muted[key] - 1
		skynet.wait() -- never answers
	end
	return true
end

function CMD.fail(key, n)
	failing[key] = n
end

function CMD.mute(key, n)
	muted[key] = n
end

function CMD.log(key)
	if key == nil then
		return log
	end
	local r = {}
	for _, d in ipairs(log) do
		if d.key == key then
			r[#r + 1] = d
		end
	end
	return r
end

function CMD.clear()
	log = {}
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
	skynet.register(name)
end)
