-- sprotoloader: the 16 slots are one array per process. A schema saved by
-- one service is loaded by others, survives the exit of the service that
-- saved it (even when no other service had the library loaded), and the
-- slot index errors. This service itself loads sproto only in the last
-- cases, so that the first ones see the library loaded by peers alone.
local skynet = require "skynet"
local t = require "testlib"

local SCHEMA = ".Person { name 0 : string age 1 : integer marital 2 : boolean }"
local ALICE = "\3\0\0\0\28\0\2\0\5\0\0\0Alice"

local function peer()
	return skynet.newservice("svc_sproto_peer")
end

t.case("save in one service, load in another", function()
	local a, b = peer(), peer()
	skynet.call(a, "lua", "save", SCHEMA, 3)
	local bin = skynet.call(b, "lua", "encode", 3, "Person", { name = "Alice", age = 13,
		marital = false })
	t.eq(bin, ALICE, "bytes from the loading service")
	t.same(skynet.call(a, "lua", "decode", 3, "Person", bin), { name = "Alice", age = 13,
		marital = false },
		"decoded by the saving service")
	skynet.kill(a)
	skynet.kill(b)
end)

t.case("a slot outlives the services that used it", function()
	-- a was the only service with sproto loaded when it saved slot 4
	local a = peer()
	skynet.call(a, "lua", "save", ".Q { x 0 : integer }", 4)
	skynet.kill(a)
	t.quiesce()
	local b = peer()
	t.eq(skynet.call(b, "lua", "encode", 4, "Q", { x = 1 }), "\1\0\4\0", "slot 4 still there")
	t.eq(skynet.call(b, "lua", "encode", 3, "Person", { age = 13 }), "\2\0\1\0\28\0",
		"slot 3 too")
	skynet.kill(b)
end)

t.case("register from a text file; replacing a slot", function()
	local name = os.tmpname()
	local f = assert(io.open(name, "w"))
	f:write(".Person { age 0 : integer }\n")
	f:close()
	local a, b = peer(), peer()
	local old = skynet.call(b, "lua", "encode", 3, "Person", { age = 13 })
	skynet.call(a, "lua", "register", name, 3)
	os.remove(name)
	t.eq(skynet.call(b, "lua", "encode", 3, "Person", { age = 13 }), "\1\0\28\0", "new schema")
	t.eq(old, "\2\0\1\0\28\0", "old schema's bytes")
	local ok, err = pcall(skynet.call, a, "lua", "register", "/nonexistent/x.sproto", 5)
	t.ok(not ok, "missing file fails")
	skynet.kill(a)
	skynet.kill(b)
	t.ok(err ~= nil, "error")
end)

t.case("slot errors", function()
	local loader = require "sprotoloader"
	local parser = require "sprotoparser"
	local bin = parser.parse(SCHEMA)
	t.raises("Invalid global slot index 16", loader.save, bin, 16)
	t.raises("Invalid global slot index -1", loader.save, bin, -1)
	t.raises("Invalid global slot index 16", loader.load, 16)
	t.raises("nil sproto at index 9", loader.load, 9)
	t.raises("bad argument #1 to 'assert' (value expected)", loader.save, "\1\0", 1)
	-- a missing file: the reference's text
	t.raises("Can't open sproto file", loader.register, "/nonexistent/x.sproto", 5)
	-- slot 0 by default
	loader.save(bin)
	t.eq(loader.load():encode("Person", { age = 13 }), "\2\0\1\0\28\0", "slot 0")
	local p = peer()
	local err = skynet.call(p, "lua", "load_error", 10)
	t.ok(err and err:find("nil sproto at index 10", 1, true), "peer sees empty")
	skynet.kill(p)
	-- loaded objects do not own the schema: collecting them changes nothing
	for _ = 1, 20 do
		loader.load(0)
	end
	collectgarbage()
	t.eq(loader.load(0):encode("Person", { age = 13 }), "\2\0\1\0\28\0", "still valid")
end)

t.start()
