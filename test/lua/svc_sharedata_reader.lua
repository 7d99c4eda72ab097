-- Helper service for test_sharedata: a sharedata reader in a service of its
-- own. It keeps the proxies it got (root and children) in `held` by a label,
-- so the test can look at them again after updates.
local skynet = require "skynet"
local sharedata = require "skynet.sharedata"
local core = require "skynet.sharedata.core"

local held = {} -- label -> proxy
local CMD = {}

-- Queries name; returns the number of top-level pairs it sees.
function CMD.query(name)
	local p = sharedata.query(name)
	held[name] = p
	local n = 0
	for _ in pairs(p) do
		n = n + 1
	end
	return n
end

-- Walks label's proxy by the keys; a table shows as "table".
local function walk(label, ...)
	local v = held[label]
	for i = 1, select("#", ...) do
		v = v[select(i, ...)]
	end
	return v
end

function CMD.get(label, ...)
	local v = walk(label, ...)
	if type(v) == "table" then
		return "table"
	end
	return v
end

-- Keeps the child proxy at the path under a new label.
function CMD.keep(newlabel, label, ...)
	held[newlabel] = walk(label, ...)
	return type(held[newlabel])
end

-- pcall(get) as (ok, value or error text).
function CMD.try(label, ...)
	local ok, v = pcall(walk, label, ...)
	if type(v) == "table" then
		v = "table"
	end
	return ok, tostring(v)
end

function CMD.len(label, ...)
	return #walk(label, ...)
end

-- Plain copy of label's proxy (via pairs), for comparing.
function CMD.plain(label, ...)
	local function copy(p)
		local r = {}
		for k, v in pairs(p) do
			r[k] = type(v) == "table" and copy(v) or v
		end
		return r
	end
	return copy(walk(label, ...))
end

function CMD.drop(label)
	held[label] = nil
	collectgarbage()
end

function CMD.deepcopy(name, ...)
	return sharedata.deepcopy(name, ...)
end

function CMD.flush()
	sharedata.flush()
end

-- Reads label.key, tells `addr` to update (a send), then spins without
-- yielding until the C version of handle h is marked dirty, and reads
-- again: the switch must wait for this service to handle its monitor
-- answer, which cannot happen inside this handler.
function CMD.read_across_update(label, key, h, addr)
	local before = held[label][key]
	local v = core.open(h)
	skynet.send(addr, "lua", "do_update")
	local t0 = os.clock()
	local spins = 0
	while not core.isdirty(v) do
		spins = spins + 1
		if spins % 1000 == 0 and os.clock() - t0 > 20 then
			error("the update never landed")
		end
	end
	core.close(v)
	local during = held[label][key]
	return before, during
end

-- Iterates label's proxy with pairs, yielding (a sleep) after the first
-- key so that an update can land mid-loop; returns the keys and values seen.
function CMD.pairs_with_sleep(label, ti)
	local seen = {}
	for k, v in pairs(held[label]) do
		seen[#seen + 1] = tostring(k) .. "=" .. tostring(v)
		if #seen == 1 then
			skynet.sleep(ti)
		end
	end
	return seen
end

function CMD.exit()
	skynet.exit()
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = CMD[cmd]
		if not f then
			error(string.format("svc_sharedata_reader: unknown command (%s)", tostring(cmd)))
		end
		skynet.retpack(f(...))
	end)
end)
