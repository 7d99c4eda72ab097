-- The `datasheet` cell (made by skynet.datasheet.builder through
-- skynet.service.new): owner of every published image.
--
-- An image arrives as the bytes of a string and is copied into C memory
-- (skynet.datasheet.core load), so it lives in no builder's Lua heap: a
-- builder that exits leaves its readers working. The cell counts, per image
-- and per holder service, the references it handed out (query and monitor
-- answers give one; release and close take them back) and drops its own C
-- reference to an image once it is no longer the current version of its name
-- and nobody holds it. Readers hold C references of their own while they
-- read an image, so the last one of all frees it; when the cell's Lua state
-- closes it drops its references to every image.
--
-- Requests (lua protocol):
--   call new(name, image)       version 1 of name; the caller becomes its builder
--   call update(name, image)    a new version, only from the builder of name;
--                               answers every monitor of the old version first
--   call query(name) -> ptr     the current version (+1 reference)
--   call monitor(ptr) -> ptr    answered once a version newer than ptr exists,
--                               with it (+1 reference)
--   send release(ptr)           gives one reference back
--   send close()                the sender's Lua state is closing: drops all
--                               its references and pending monitors
-- Errors (the caller sees `call failed`): "create data first" for an unknown
-- name, "Invalid data handle" for an unknown ptr, and the single-builder
-- rule. Debug INFO: { [name] = { handle = ptr, monitors = refs of the
-- current version }, [old ptr] = refs }.
local skynet = require "skynet"
local core = require "skynet.datasheet.core"

local sheets = {} -- name -> { current = ptr, builder = address, monitors = { {address, response} } }
-- ptr -> { name = name, refs = count }. Its finaliser drops the cell's
-- reference to every image when the cell's Lua state closes.
local images = setmetatable({}, {
	__gc = function(t)
		for ptr in pairs(t) do
			core.release(ptr)
		end
	end,
})
local holders = {} -- address -> { [ptr] = count }

local function hold(address, ptr)
	local held = holders[address]
	if held == nil then
		held = {}
		holders[address] = held
	end
	held[ptr] = (held[ptr] or 0) + 1
	local img = images[ptr]
	img.refs = img.refs + 1
end

local function collect(ptr)
	local img = images[ptr]
	if img and img.refs == 0 and sheets[img.name].current ~= ptr then
		images[ptr] = nil
		core.release(ptr)
	end
end

-- Gives back n references of address on ptr (all of them if n is nil).
local function unhold(address, ptr, n)
	local held = holders[address]
	local count = held and held[ptr]
	if count == nil then
		skynet.error(string.format("warn: datasheet: release of an unheld image from %s",
			skynet.address(address)))
		return
	end
	n = n or count
	held[ptr] = count > n and count - n or nil
	local img = images[ptr]
	img.refs = img.refs - n
	collect(ptr)
end

local function publish(name, image, address)
	local ptr = core.load(image)
	images[ptr] = { name = name, refs = 0 }
	local sheet = sheets[name]
	if sheet == nil then
		sheets[name] = { current = ptr, builder = address, monitors = {} }
		return
	end
	local old = sheet.current
	local monitors = sheet.monitors
	sheet.current = ptr
	sheet.monitors = {}
	for _, m in ipairs(monitors) do
		hold(m[1], ptr)
		if not m[2](true, ptr) then
			unhold(m[1], ptr, 1)
		end
	end
	collect(old)
end

local CMD = {}

function CMD.new(source, name, image)
	if sheets[name] then
		error(string.format("datasheet %s exists, built by %s", tostring(name),
			skynet.address(sheets[name].builder)))
	end
	publish(name, image, source)
	skynet.retpack()
end

function CMD.update(source, name, image)
	local sheet = sheets[name] or error(string.format("datasheet %s: create data first",
		tostring(name)))
	if sheet.builder ~= source then
		error(string.format("datasheet %s: only its builder %s may update it", tostring(name),
			skynet.address(sheet.builder)))
	end
	publish(name, image, source)
	skynet.retpack()
end

function CMD.query(source, name)
	local sheet = sheets[name] or error "create data first"
	hold(source, sheet.current)
	skynet.retpack(sheet.current)
end

function CMD.monitor(source, ptr)
	local img = images[ptr] or error "Invalid data handle"
	local sheet = sheets[img.name]
	if sheet.current ~= ptr then
		hold(source, sheet.current)
		skynet.retpack(sheet.current)
	else
		local m = sheet.monitors
		m[#m + 1] = { source, skynet.response() }
	end
end

function CMD.release(source, ptr)
	if images[ptr] then
		unhold(source, ptr, 1)
	end
end

function CMD.close(source)
	for _, sheet in pairs(sheets) do
		local kept = {}
		for _, m in ipairs(sheet.monitors) do
			if m[1] == source then
				m[2](false) -- frees the pending response; the service is gone
			else
				kept[#kept + 1] = m
			end
		end
		sheet.monitors = kept
	end
	local held = holders[source]
	holders[source] = nil
	for ptr, n in pairs(held or {}) do
		local img = images[ptr]
		img.refs = img.refs - n
		collect(ptr)
	end
end

skynet.start(function()
	skynet.info_func(function()
		local info = {}
		for name, sheet in pairs(sheets) do
			info[name] = { handle = sheet.current, monitors = images[sheet.current].refs }
		end
		for ptr, img in pairs(images) do
			if sheets[img.name].current ~= ptr then
				info[ptr] = img.refs
			end
		end
		return info
	end)
	skynet.dispatch("lua", function(_, source, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			error(string.format("datasheet: unknown command %s", tostring(cmd)))
		end
		f(source, ...)
	end)
end)
