-- Helper service for test_sharetable: a reader in a service of its own.
-- It keeps what it got (roots and subtables) in `held` by a label.
local skynet = require "skynet"
local sharetable = require "skynet.sharetable"

local held = {}
local CMD = {}

local function walk(label, ...)
	local v = held[label]
	for i = 1, select("#", ...) do
		v = v[select(i, ...)]
	end
	return v
end

-- Queries name and keeps the root under the label name; returns #pairs.
function CMD.query(name)
	local t = sharetable.query(name)
	held[name] = t
	if t == nil then
		return nil
	end
	local n = 0
	for _ in pairs(t) do
		n = n + 1
	end
	return n
end

function CMD.get(label, ...)
	local v = walk(label, ...)
	if type(v) == "table" then
		return "table"
	end
	return v
end

function CMD.keep(newlabel, label, ...)
	held[newlabel] = walk(label, ...)
	return type(held[newlabel])
end

function CMD.try(label, ...)
	local ok, v = pcall(walk, label, ...)
	if type(v) == "table" then
		v = "table"
	end
	return ok, tostring(v)
end

function CMD.rawset(label, k, v)
	rawset(held[label], k, v)
end

function CMD.update(...)
	sharetable.update(...)
end

function CMD.same(a, b)
	return rawequal(held[a], held[b])
end

function CMD.drop(label)
	held[label] = nil
	collectgarbage()
end

function CMD.exit()
	skynet.exit()
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = CMD[cmd]
		if not f then
			error(string.format("svc_sharetable_reader: unknown command (%s)", tostring(cmd)))
		end
		skynet.retpack(f(...))
	end)
end)
