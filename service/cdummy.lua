-- cdummy (.cslave when harbor = 0): global names on a single node.
-- The core keeps the name table: GLOBALNAME binds a name and flushes the
-- messages queued for it. This service answers queries, waiting for names
-- that are not registered yet.
local skynet = require "skynet"
local core = require "skynet.core"
require "skynet.manager"

local globalname = {} -- name -> handle
local queryname = {} -- name -> { response closures waiting for it }
local pending = {} -- responses held forever (LINKMASTER, CONNECT)
local command = {}

function command.REGISTER(name, handle)
	assert(globalname[name] == nil, "cdummy: global name already registered (" .. tostring(name) .. ")")
	globalname[name] = handle
	core.command("GLOBALNAME", name .. " " .. skynet.address(handle))
	local waiters = queryname[name]
	if waiters then
		queryname[name] = nil
		for _, resp in ipairs(waiters) do
			resp(true, handle)
		end
	end
end

function command.QUERYNAME(name)
	if name:sub(1, 1) == "." then
		skynet.ret(skynet.pack(skynet.localname(name)))
		return
	end
	local handle = globalname[name]
	if handle then
		skynet.ret(skynet.pack(handle))
		return
	end
	local waiters = queryname[name]
	if waiters == nil then
		waiters = {}
		queryname[name] = waiters
	end
	waiters[#waiters + 1] = skynet.response()
end

function command.LINK()
	skynet.ret()
end

function command.LINKMASTER()
	-- no master in single-node mode: it never goes away
	pending[#pending + 1] = skynet.response()
end

function command.CONNECT(id)
	skynet.error("cdummy: can't connect to harbor " .. tostring(id) .. " in single-node mode")
	pending[#pending + 1] = skynet.response()
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = assert(command[cmd], cmd)
		f(...)
	end)
end)
