-- skynet.datasheet.builder: publishing datasheets.
--
--   builder.new(name, v)     version 1 of name (v: a table, or an image
--                            string from compile); once per name per service
--   builder.update(name, v)  a new version, only in the service that called
--                            new(name); subtables at key paths that are
--                            tables in both versions keep their identity
--                            for readers
--   builder.compile(v)       the image string of table v (no blocking)
--
-- Requiring it creates (or finds) the `datasheet` cell in an init function.
-- The cell copies each image into C memory and owns it, so the builder
-- service may exit while readers go on reading. A string given to new or
-- update is checked as an image before anything is sent.
local skynet = require "skynet"
local service = require "skynet.service"
local dump = require "skynet.datasheet.dump"
local core = require "skynet.datasheet.core"

local builder = {}
local address
local published = {} -- name -> the image string of the last version sent

local function datasheet_cell()
	require "skynet.datasheet.cell"
end

skynet.init(function()
	address = service.new("datasheet", datasheet_cell)
end)

local function image_of(v, fname)
	local ty = type(v)
	if ty == "string" then
		core.check(v)
		return v
	elseif ty == "table" then
		return dump.dump(v)
	end
	error(string.format("datasheet.builder.%s: table or image string expected (got %s)", fname,
		ty), 3)
end

local function check_name(name, fname)
	if type(name) ~= "string" then
		error(string.format("datasheet.builder.%s: name must be a string (got %s)", fname,
			type(name)), 3)
	end
end

function builder.new(name, v)
	check_name(name, "new")
	assert(published[name] == nil)
	local image = image_of(v, "new")
	published[name] = image
	local ok, err = pcall(skynet.call, address, "lua", "new", name, image)
	if not ok then
		published[name] = nil
		error(err, 0)
	end
end

function builder.update(name, v)
	check_name(name, "update")
	local last = published[name]
	assert(last)
	local image = dump.diff(last, image_of(v, "update"))
	published[name] = image
	local ok, err = pcall(skynet.call, address, "lua", "update", name, image)
	if not ok then
		if published[name] == image then
			published[name] = last
		end
		error(err, 0)
	end
end

function builder.compile(v)
	return dump.dump(v)
end

return builder
