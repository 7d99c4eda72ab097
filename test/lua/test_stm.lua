-- skynet.stm: new/copy/newcopy, the writer call, reader(f, ud) results,
-- ownership of packed buffers, the argument errors, readers and writers in
-- other services, what readers see once the writer is collected or its
-- service exits, a writer and a reader running at once on two threads, and
-- the pre-1.0 name.
local skynet = require "skynet"
local stm = require "skynet.stm"
local t = require "testlib"

local function unpack_msg(msg, sz, ud)
	return ud, skynet.unpack(msg, sz)
end

local function as_string(msg, sz)
	return skynet.tostring(msg, sz)
end

t.case("module shape", function()
	t.eq(type(stm.new), "function", "new")
	t.eq(type(stm.copy), "function", "copy")
	t.eq(type(stm.newcopy), "function", "newcopy")
	t.ok(package.loaded["skynet.stm"] == stm, "loaded as skynet.stm")
end)

t.case("a reader sees each newer version once", function()
	local w = stm.new("first")
	t.eq(type(w), "userdata", "writer")
	local ptr = stm.copy(w)
	t.eq(type(ptr), "userdata", "copy pointer")
	local r = stm.newcopy(ptr)
	t.eq(type(r), "userdata", "reader")
	local got = table.pack(r(function(msg, sz, ud)
		t.eq(type(msg), "userdata", "msg is a light userdata")
		t.eq(math.type(sz), "integer", "sz")
		return skynet.tostring(msg, sz), sz, ud
	end, "UD"))
	t.eq(got.n, 4, "true + three results")
	t.eq(got[1], true, "new version")
	t.eq(got[2], "first", "content")
	t.eq(got[3], 5, "size")
	t.eq(got[4], "UD", "ud passed through")
	t.eq(select("#", r(as_string)), 1, "nothing new: one result")
	t.eq(r(as_string), false, "nothing new")
	w("second")
	w("third")
	local ok, s = r(as_string)
	t.eq(ok, true, "newer version")
	t.eq(s, "third", "only the latest is seen")
	t.eq(r(as_string), false, "seen")
	local ok2, n = r(function()
		return nil
	end)
	t.eq(ok2, false, "f not called when nothing is new")
	t.eq(n, nil, "no results")
	w("")
	local ok3, e, esz = r(function(msg, sz)
		return skynet.tostring(msg, sz), sz
	end)
	t.eq(ok3, true, "empty version")
	t.eq(e, "", "empty content")
	t.eq(esz, 0, "empty size")
end)

t.case("packed messages are taken over", function()
	local w = stm.new(skynet.pack(1, "one", { x = 1 }))
	local r = stm.newcopy(stm.copy(w))
	local ok, ud, a, b, c = r(unpack_msg, "u")
	t.eq(ok, true, "read")
	t.eq(ud, "u", "ud first")
	t.eq(a, 1, "value 1")
	t.eq(b, "one", "value 2")
	t.eq(c.x, 1, "value 3")
	for i = 1, 100 do
		w(skynet.pack(i))
	end
	local ok2, _, last = r(unpack_msg)
	t.eq(ok2, true, "read after a hundred writes")
	t.eq(last, 100, "latest")
end)

t.case("several readers of one box", function()
	local w = stm.new("a")
	local r1 = stm.newcopy(stm.copy(w))
	local r2 = stm.newcopy(stm.copy(w))
	t.eq(select(2, r1(as_string)), "a", "reader 1")
	w("b")
	t.eq(select(2, r2(as_string)), "b", "reader 2 starts at the current version")
	t.eq(select(2, r1(as_string)), "b", "reader 1 catches up")
	t.eq(r1(as_string), false, "reader 1 up to date")
	t.eq(r2(as_string), false, "reader 2 up to date")
end)

t.case("an error in f propagates and the version counts as seen", function()
	local w = stm.new("x")
	local r = stm.newcopy(stm.copy(w))
	t.raises("boom", r, function()
		error "boom"
	end)
	t.eq(r(as_string), false, "the failed version is not offered again")
	w("y")
	t.eq(select(2, r(as_string)), "y", "the next one is")
end)

t.case("argument errors", function()
	t.raises("stm.new: bad argument #1 (string or lightuserdata expected, got no value)", stm.new)
	t.raises("stm.new: bad argument #1 (string or lightuserdata expected, got number)", stm.new, 1)
	t.raises("string or lightuserdata expected, got table", stm.new, {})
	local msg, sz = skynet.pack("p")
	t.raises("stm.new: bad argument #2 (integer size expected, got nil)", stm.new, msg)
	t.raises("stm.new: bad argument #2 (integer size expected, got string)", stm.new, msg, "x")
	t.raises("stm.new: bad argument #2 (invalid size -1)", stm.new, msg, -1)
	t.raises("bad argument #1 (null message)", stm.new, skynet.unpack(string.pack("<Bj", 3, 0)), 0)
	local w = stm.new(msg, sz) -- still usable after the refusals: ownership moves now
	t.raises("stm writer: bad argument #2 (string or lightuserdata expected, got nil)", w, nil)
	t.raises("stm writer: bad argument #3 (integer size expected", w, msg)
	t.raises("stm.copy", stm.copy, "writer")
	t.raises("skynet.stm.writer expected", stm.copy, {})
	local r = stm.newcopy(stm.copy(w))
	t.raises("skynet.stm.writer expected", stm.copy, r)
	t.raises("stm.newcopy: bad argument #1 (lightuserdata expected, got string)", stm.newcopy, "p")
	t.raises("stm.newcopy: bad argument #1 (lightuserdata expected, got userdata)", stm.newcopy, w)
	t.raises("not a pointer from stm.copy", stm.newcopy, skynet.unpack(string.pack("<Bj", 3, 0)))
	local other, osz = skynet.pack("not a box, but long enough to read a magic")
	t.raises("not a pointer from stm.copy", stm.newcopy, other)
	skynet.trash(other, osz)
	t.raises("function expected", r)
	t.raises("function expected", r, "f")
	t.eq(select(2, r(unpack_msg)), nil, "the reader still works")
end)

t.case("a reader in another service", function()
	local svc = skynet.newservice "svc_stm"
	local w = stm.new(skynet.pack("v1"))
	skynet.call(svc, "lua", "new_reader", stm.copy(w))
	local got = skynet.call(svc, "lua", "read", "ud")
	t.eq(got[1], true, "first read")
	t.eq(got[2], "ud", "ud")
	t.eq(got[3], "v1", "value")
	t.eq(skynet.call(svc, "lua", "read")[1], false, "nothing new")
	w(skynet.pack("v2", 2))
	got = skynet.call(svc, "lua", "read")
	t.eq(got[1], true, "second read")
	t.eq(got[3], "v2", "new value")
	t.eq(got[4], 2, "second field")
	w(skynet.pack("v3"))
	w = nil -- luacheck: ignore 311 (dropped for the collector)
	collectgarbage()
	got = skynet.call(svc, "lua", "read")
	t.eq(got.n, 1, "after the writer is collected: one result")
	t.eq(got[1], false, "a version published before the collection is lost with it")
	t.eq(skynet.call(svc, "lua", "read")[1], false, "still false")
	skynet.call(svc, "lua", "drop_reader")
	skynet.kill(svc)
end)

t.case("a writer in another service that exits", function()
	local svc = skynet.newservice "svc_stm"
	local r = stm.newcopy(skynet.call(svc, "lua", "new_writer", "w1"))
	local spare = stm.newcopy(skynet.call(svc, "lua", "copy"))
	t.eq(select(3, r(unpack_msg)), "w1", "first version from the other service")
	skynet.call(svc, "lua", "write", "w2", { 2 })
	local ok, _, v, tbl = r(unpack_msg)
	t.eq(ok, true, "update seen")
	t.eq(v, "w2", "value")
	t.eq(tbl[1], 2, "table value")
	skynet.kill(svc)
	t.quiesce() -- the killed service's state closes once its worker lets go of it
	t.eq(r(unpack_msg), false, "writer gone: false")
	t.eq(r(unpack_msg), false, "from then on")
	t.eq(spare(unpack_msg), false, "a reader that never read gets false too")
	r, spare = nil, nil -- luacheck: ignore 311 (dropped for the collector)
	collectgarbage()
end)

t.case("a writer dropped in its own service", function()
	local svc = skynet.newservice "svc_stm"
	local r = stm.newcopy(skynet.call(svc, "lua", "new_writer", 1))
	t.eq(select(3, r(unpack_msg)), 1, "read")
	skynet.call(svc, "lua", "drop_writer")
	t.eq(r(unpack_msg), false, "false once the writer is collected")
	skynet.kill(svc)
end)

t.case("a writer and a reader run at once on two threads", function()
	local wsvc = skynet.newservice "svc_stm"
	local rsvc = skynet.newservice "svc_stm"
	local ptr = skynet.call(wsvc, "lua", "new_writer", 0, "")
	skynet.call(rsvc, "lua", "new_reader", ptr)
	local n = t.under_tsan and 3000 or 30000
	local me = coroutine.running()
	local result
	skynet.fork(function()
		result = table.pack(pcall(skynet.call, rsvc, "lua", "read_loop", n, n * 100))
		skynet.wakeup(me)
	end)
	skynet.call(wsvc, "lua", "write_loop", n)
	if result == nil then
		skynet.wait(me)
	end
	t.eq(result[1], true, "reader loop: " .. tostring(result[2]))
	t.eq(result[4], n, "the reader reached the last version")
	t.ok(result[3] >= 1, "versions seen")
	skynet.kill(wsvc)
	skynet.kill(rsvc)
end)

t.case("the pre-1.0 name is the same module", function()
	local saved = package.path
	package.path = "./lualib/compat10/?.lua;" .. saved
	local ok, mod = pcall(require, "stm")
	package.path = saved
	t.ok(ok, "require 'stm': " .. tostring(mod))
	t.ok(mod == stm, "same table as skynet.stm")
end)

t.start()
