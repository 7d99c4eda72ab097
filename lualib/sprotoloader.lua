-- sprotoloader: schemas shared by every service of the process.
--
--   loader.save(bin [, slot])           schema binary -> slot (default 0)
--   loader.register(filename [, slot])  schema text file -> slot
--   loader.load([slot])                 -> sproto object over the slot's schema
--
-- sproto.core keeps 16 slots (0..15) in the process, not in a Lua state: a
-- schema saved by one service is loaded by any other. A saved schema is
-- never freed and never changes, so the objects load returns (sharenew:
-- they do not own it) stay valid in every service, on any thread.
local parser = require "sprotoparser"
local core = require "sproto.core"
local sproto = require "sproto"

local loader = {}

function loader.save(bin, slot)
	local cobj = assert(core.newproto(bin))
	local ok, err = pcall(core.saveproto, cobj, slot or 0)
	if not ok then
		core.deleteproto(cobj)
		error(err, 0)
	end
end

function loader.register(filename, slot)
	local f = assert(io.open(filename), "Can't open sproto file")
	local text = f:read "a"
	f:close()
	loader.save(parser.parse(text, filename), slot)
end

function loader.load(slot)
	return sproto.sharenew(core.loadproto(slot or 0))
end

return loader
