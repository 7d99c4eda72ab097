-- service_provider: the node's registry of skynet.service cells (unique
-- services made from a Lua function shipped as bytecode). It is a
-- uniqueservice; lualib/skynet/service.lua talks to it.
--
-- cell[name] is one table per name:
--   { handle = h }                     launched and running
--   { failed = "message" }             the launch failed; remembered, every
--                                      later test/launch/query raises it
--   { booting = true, waits = {...} }  being launched
--   { waits = {...} }                  only queried so far
-- plus init (the launch arguments as text) and time (when it was launched)
-- for debug INFO. waits holds skynet.response closures answered with the
-- handle once the launch ends, or with an error when it fails or when the
-- name is closed.
--
-- Requests (lua protocol, all calls):
--   test(name)              -> handle | nil, true (booting) | nothing
--   launch(name, code, ...) -> handle (waits for a launch under way)
--   query(name)             -> handle, held until someone launches name
--   close(name)             -> handle | nil (unknown, failed or booting)
local skynet = require "skynet"
require "skynet.manager"

local cell = {}
local cmd = {}
local HELD = {} -- returned by a command whose answer wait_for keeps for later

local function answer_waits(s, ok, handle)
	local waits = s.waits
	s.waits = nil
	for _, resp in ipairs(waits or {}) do
		resp(ok, handle)
	end
end

local function wait_for(name)
	local s = cell[name]
	if s == nil then
		s = {}
		cell[name] = s
	end
	s.waits = s.waits or {}
	table.insert(s.waits, skynet.response())
	return HELD
end

local function describe_args(...)
	local n = select("#", ...)
	local t = {}
	for i = 1, n do
		t[i] = tostring((select(i, ...)))
	end
	return table.concat(t, ",")
end

function cmd.test(name)
	local s = cell[name]
	if s == nil then
		return
	elseif s.handle then
		return s.handle
	elseif s.failed then
		error(s.failed, 0)
	elseif s.booting then
		return nil, true
	end
end

function cmd.launch(name, code, ...)
	local s = cell[name]
	if s and s.handle then
		return s.handle
	elseif s and s.failed then
		error(s.failed, 0)
	elseif s and s.booting then
		return wait_for(name)
	end
	s = s or {}
	cell[name] = s
	s.booting = true
	s.init = describe_args(...)
	s.time = os.date("%Y %b %d %T %z", math.floor(skynet.time()))
	-- Why a launch failed is logged by the launcher or by the cell itself.
	local ok, handle = pcall(skynet.newservice, "service_cell", name)
	if ok then
		local init_ok = pcall(skynet.call, handle, "lua", "init", code, ...)
		if not init_ok then
			skynet.kill(handle)
			ok = false
		end
	end
	s.booting = nil
	if not ok then
		s.failed = string.format("launch of service cell %s failed", name)
		skynet.error(s.failed)
		answer_waits(s, false)
		error(s.failed, 0)
	end
	s.handle = handle
	answer_waits(s, true, handle)
	return handle
end

function cmd.query(name)
	local s = cell[name]
	if s and s.handle then
		return s.handle
	elseif s and s.failed then
		error(s.failed, 0)
	end
	return wait_for(name)
end

-- A name that was only queried is forgotten and its waiters get an error
-- (they would otherwise wait forever); a failed name is forgotten so a later
-- new() may try again.
function cmd.close(name)
	local s = cell[name]
	if s == nil or s.booting then
		return
	end
	cell[name] = nil
	if s.handle then
		skynet.kill(s.handle)
		return s.handle
	end
	answer_waits(s, false)
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, command, ...)
		local f = cmd[command]
		if f == nil then
			error("service_provider: unknown command " .. tostring(command))
		end
		local r = table.pack(f(...))
		if r[1] ~= HELD then
			skynet.retpack(table.unpack(r, 1, r.n))
		end
	end)
	skynet.info_func(function()
		local info = {}
		for name, s in pairs(cell) do
			local status
			if s.booting then
				status = "booting"
			elseif s.failed then
				status = "failed: " .. s.failed
			elseif s.waits and #s.waits > 0 then
				status = string.format("waiting(%d)", #s.waits)
			end
			local key = s.handle and skynet.address(s.handle) or name
			info[key] = { name, init = s.init, time = s.time, status = status }
		end
		return info
	end)
end)
