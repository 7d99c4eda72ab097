-- What keeps a service small: snlua opens io, os, utf8, math and debug on
-- first use, skynet.lua loads its rarer parts on first use, the message
-- path is C (skynet.kernel) and fills the skynet table on first use, and both work
-- for a service at its skynet.memlimit. Also the two checks skynet.lua now
-- makes without the math library (timeout times, protocol ids).
local skynet = require "skynet"
local t = require "testlib"

t.case("a fresh service starts with the five libraries unopened", function()
	local svc = skynet.newservice("svc_lazylib")
	t.same({ skynet.call(svc, "lua", "stubs_at_main") }, { true, true, true, true, true },
		"stub (io, os, utf8, math, debug)")
	skynet.kill(svc)
end)

t.case("pairs on an untouched library lists all of it", function()
	for _, name in ipairs { "io", "os", "utf8", "math", "debug" } do
		local svc = skynet.newservice("svc_lazylib")
		local ok, what = skynet.call(svc, "lua", "pairs_first", name)
		t.ok(ok, name .. ": missing or still a stub: " .. tostring(what))
		skynet.kill(svc)
	end
end)

t.case("a write before the first read keeps the library", function()
	local svc = skynet.newservice("svc_lazylib")
	local v, char, raw, plain = skynet.call(svc, "lua", "write_first")
	t.eq(v, 42, "utf8.extra")
	t.eq(char, "function", "utf8.char")
	t.eq(raw, 42, "rawget after the write")
	t.eq(plain, true, "no metatable left")
	skynet.kill(svc)
end)

t.case("global, package.loaded and require name one table", function()
	local svc = skynet.newservice("svc_lazylib")
	local before, after, time_type, raw = skynet.call(svc, "lua", "same_table")
	t.eq(before, true, "before the first read")
	t.eq(after, true, "after it")
	t.eq(time_type, "integer", "os.time() through the filled table")
	t.eq(raw, true, "the field is in the table itself")
	local missing, write = skynet.call(svc, "lua", "missing_field")
	t.eq(missing, nil, "an absent field reads nil")
	t.eq(write, "function", "and the library filled in")
	skynet.kill(svc)
end)

t.case("at its memory limit a service can still load what it never used, then exit", function()
	local svc = skynet.newservice("svc_lazy_limit")
	local r = table.pack(skynet.call(svc, "lua", "fill_use_exit"))
	t.eq(r[1], true, "the heap was full")
	t.eq(math.type(r[2]), "integer", "os.time()")
	t.eq(r[3], 2, "math.floor(2.5)")
	t.eq(r[4], 3, "utf8.len")
	t.eq(r[5], nil, "debug.gethook()")
	t.eq(r[6], nil, "io.type(42)")
	t.eq(r[7], "function", "skynet.tracetag")
	t.eq(r[8], "function", "skynet.task")
	t.eq(r[9], "function", "skynet.request")
	t.eq(r[10], true, "the limit still holds after the loads")
	t.quiesce()
	t.raises("call to invalid address", skynet.call, svc, "lua", "fill_use_exit")
end)

t.case("the message path is C and a service holds only the framework names it uses", function()
	local svc = skynet.newservice("svc_kernel")
	local unused_name, unused_private, is_function, kept, send_in_c, kib, only_functions =
		skynet.call(svc, "lua", "probe")
	t.eq(unused_name, true, "skynet.wakeup is not in the table before its first use")
	t.eq(unused_private, true, "S.killthread is not stored before its first use")
	t.eq(is_function, true, "skynet.wakeup on first use")
	t.eq(kept, true, "and stored in the table")
	t.eq(send_in_c, true, "skynet.send is a C function (skynet.kernel)")
	t.eq(only_functions, true, "skynet.private hands out functions, no table of the kernel")
	-- the framework's Lua code was most of an idle service (over 70 KiB of heap)
	t.ok(kib < 45, "heap of an idle service: " .. kib .. " KiB")
	skynet.kill(svc)
end)

t.case("timeout times: integers, floats and numeric strings (floored); others raise", function()
	local fired = {}
	local token = {}
	for _, ti in ipairs { 1, 1.9, "2", "0.5", -3.5 } do
		skynet.timeout(ti, function()
			fired[#fired + 1] = tostring(ti)
			if #fired == 5 then
				skynet.wakeup(token)
			end
		end)
	end
	skynet.wait(token)
	t.eq(#fired, 5, "all fired")
	t.raises("skynet.timeout: time must be a number", skynet.timeout, {}, print)
	t.raises("skynet.timeout: time must be a number", skynet.timeout, "soon", print)
	t.raises("number has no integer representation", skynet.timeout, 1e300, print)
	local t0 = skynet.now()
	skynet.sleep(2.7)
	t.eq(skynet.now() - t0, 2, "sleep(2.7) sleeps 2 cs")
end)

t.case("protocol ids must be integers (a float with an integral value is refused)", function()
	t.raises("skynet.register_protocol: bad name or id", skynet.register_protocol,
		{ name = "fp_float", id = 200.0 })
	t.raises("skynet.register_protocol: bad name or id", skynet.register_protocol,
		{ name = "fp_big", id = 256 })
	t.raises("skynet.register_protocol: bad name or id", skynet.register_protocol,
		{ name = "fp_str", id = "200" })
	skynet.register_protocol { name = "fp_ok", id = 200 }
	t.ok(skynet.dispatch("fp_ok") == nil, "registered without a dispatch")
end)

t.start()
