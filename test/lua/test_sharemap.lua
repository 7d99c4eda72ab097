-- skynet.sharemap: register (slot 0), writer fields/commit/copy, reader
-- fields/update, read-only readers, a reader and a writer in another
-- service, a writer whose service exits, the errors, the pre-1.0 name.
local skynet = require "skynet"
local sharemap = require "skynet.sharemap"
local t = require "testlib"

local SCHEMA <const> = "test/lua/sharemap.sp"

t.case("register reads the schema file into slot 0", function()
	t.raises("Can't open sproto file", sharemap.register, "test/lua/no_such_file.sp")
	sharemap.register(SCHEMA)
	local sp = require("sprotoloader").load(0)
	t.ok(sp:exist_type "Record", "Record in slot 0")
end)

t.case("writer fields go to its table, commit publishes", function()
	local data = { name = "hero", level = 1 }
	local w = sharemap.writer("Record", data)
	t.eq(w.name, "hero", "field read through the writer")
	w.level = 2
	t.eq(data.level, 2, "field write lands in the table")
	data.alive = true
	t.eq(w.alive, true, "the table is the writer's data")
	local ptr = w:copy()
	t.eq(type(ptr), "userdata", "copy pointer")
	local r = sharemap.reader("Record", ptr)
	t.eq(r.name, "hero", "reader field")
	t.eq(r.level, 1, "the reader sees what the writer had when it was created")
	t.eq(r.alive, nil, "fields set after creation wait for a commit")
	t.eq(r:update(), false, "nothing committed")
	w:commit()
	local res = table.pack(r:update())
	t.eq(res[1], true, "update after commit")
	t.eq(type(res[2]), "table", "decoded table")
	t.eq(res[2].level, 2, "decoded level")
	t.eq(math.type(res[3]), "integer", "bytes decoded")
	t.eq(r.level, 2, "field shows the new data")
	t.eq(r.alive, true, "new field")
	t.eq(r:update(), false, "nothing new")
	w.name = nil
	w.tags = { "a", "b" }
	w.pos = { x = 3, y = -4 }
	w:commit()
	local ok, same = r:update()
	t.eq(ok, true, "second update")
	t.ok(same == res[2], "the data table is refilled, not replaced")
	t.eq(r.name, nil, "removed field gone")
	t.eq(r.tags[2], "b", "array field")
	t.eq(r.pos.y, -4, "struct field")
	local keys = {}
	for k in pairs(r) do
		keys[#keys + 1] = k
	end
	table.sort(keys)
	t.eq(table.concat(keys, ","), "alive,level,pos,tags", "pairs(reader) walks the record")
	keys = {}
	for k in pairs(w) do
		keys[#keys + 1] = k
	end
	table.sort(keys)
	t.eq(table.concat(keys, ","), "alive,level,pos,tags", "pairs(writer) walks the record")
end)

t.case("a writer made without a table starts empty", function()
	local w = sharemap.writer "Record"
	local r = sharemap.reader("Record", w:copy())
	t.eq(r:update(), false, "nothing committed yet")
	t.eq(r.name, nil, "empty record")
	w.name = "late"
	w:commit()
	t.eq(r:update(), true, "update")
	t.eq(r.name, "late", "field")
end)

t.case("readers are read-only", function()
	local w = sharemap.writer("Record", { level = 7 })
	local r = sharemap.reader("Record", w:copy())
	t.raises("sharemap: a reader is read-only (field level)", function()
		r.level = 8
	end)
	t.eq(r.level, 7, "unchanged")
end)

t.case("argument errors", function()
	t.raises("sharemap.writer: typename must be a string (nil)", sharemap.writer)
	t.raises("sharemap.writer: no type Nope in sproto slot 0", sharemap.writer, "Nope")
	t.raises("sharemap.writer: data must be a table (number)", sharemap.writer, "Record", 5)
	t.raises("Record.level[0] is not an integer", sharemap.writer, "Record", { level = "high" })
	local w = sharemap.writer("Record", {})
	t.raises("sharemap.reader: no type Nope in sproto slot 0", sharemap.reader, "Nope", w:copy())
	t.raises("stm.newcopy: bad argument #1", sharemap.reader, "Record", "ptr")
	w.level = "bad"
	t.raises("Record.level[0] is not an integer", w.commit, w)
	w.level = 1
	w:commit()
end)

t.case("a reader in another service", function()
	local svc = skynet.newservice "svc_sharemap"
	local w = sharemap.writer("Record", { name = "shared", level = 1 })
	skynet.call(svc, "lua", "reader", "Record", w:copy())
	t.eq(skynet.call(svc, "lua", "field", "name"), "shared", "remote read")
	t.eq(skynet.call(svc, "lua", "update")[1], false, "nothing new")
	w.level = 5
	w:commit()
	local res = skynet.call(svc, "lua", "update")
	t.eq(res[1], true, "remote update")
	t.eq(res[2].level, 5, "decoded in the other service")
	t.eq(skynet.call(svc, "lua", "field", "level"), 5, "remote field")
	skynet.kill(svc)
end)

t.case("a writer in another service that exits", function()
	local svc = skynet.newservice "svc_sharemap"
	local r = sharemap.reader("Record", skynet.call(svc, "lua", "writer", "Record", { level = 1 }))
	t.eq(r.level, 1, "first version")
	skynet.call(svc, "lua", "set", "level", 2)
	t.eq(r:update(), true, "update from the other service")
	t.eq(r.level, 2, "new level")
	local spare = skynet.call(svc, "lua", "writer", "Record", { level = 9 })
	skynet.kill(svc)
	t.quiesce() -- the killed service's state closes once its worker lets go of it
	t.eq(r:update(), false, "writer gone")
	t.eq(r.level, 2, "the last data stays")
	t.raises("sharemap.reader: no data (the writer is gone)", sharemap.reader, "Record", spare)
end)

t.case("the pre-1.0 name is the same module", function()
	local saved = package.path
	package.path = "./lualib/compat10/?.lua;" .. saved
	local ok, mod = pcall(require, "sharemap")
	package.path = saved
	t.ok(ok, "require 'sharemap': " .. tostring(mod))
	t.ok(mod == sharemap, "same table as skynet.sharemap")
end)

t.start()
