-- Helper service for test_sproto_slots: uses sprotoloader's process-wide
-- slots from a service of its own. Requires sproto only when a command
-- needs it, so that a test can tell which services have the library loaded.
local skynet = require "skynet"

local CMD = {}

function CMD.save(text, slot)
	local parser = require "sprotoparser"
	require("sprotoloader").save(parser.parse(text), slot)
end

function CMD.register(filename, slot)
	require("sprotoloader").register(filename, slot)
end

-- Loads the slot and encodes tbl as typename; returns the bytes.
function CMD.encode(slot, typename, tbl)
	local sp = require("sprotoloader").load(slot)
	return sp:encode(typename, tbl)
end

function CMD.decode(slot, typename, bin)
	local sp = require("sprotoloader").load(slot)
	return (sp:decode(typename, bin))
end

-- The error text of load(slot), or nil when it succeeds.
function CMD.load_error(slot)
	local ok, err = pcall(require("sprotoloader").load, slot)
	if ok then
		return nil
	end
	return tostring(err)
end

function CMD.exit()
	skynet.exit()
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = CMD[cmd]
		if not f then
			error(string.format("svc_sproto_peer: unknown command (%s)", tostring(cmd)))
		end
		skynet.retpack(f(...))
	end)
end)
