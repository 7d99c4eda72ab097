-- skynet.snax, snaxd, snax.interface and snax.hotfix: method ids, definition
-- errors, objects, every launch and lookup function, init/exit rules,
-- profiling, hotfix of a running service (state kept through joined
-- upvalues, mismatch, ambiguity, compile errors), the refusal of an accept
-- method called as a request, and the config keys snax_loader and
-- snax_interface_g (set last: config keys cannot be unset).
local skynet = require "skynet"
local snax = require "skynet.snax"
local parse = require "snax.interface"
local t = require "testlib"

local me -- this service's address as ":hex", passed to snax_counter's init

local COUNTER_ACCEPT <const> = { inc = 5, quit = 8, total = 15 }
local COUNTER_RESPONSE <const> = {
	get = 6, fail = 7, echo = 9, whoami = 10, paths = 11, block = 12, say = 13, cluster = 14,
}

-- Parses Lua text as a snax file (through a loader) in G.
local function parse_text(src, G)
	return parse("inline", G or {}, function(_, name, env)
		return assert(load(src, "=" .. name, "t", env)), "inline/?.lua"
	end)
end

local function wait_mark(text)
	local deadline = skynet.now() + 100
	while not t.has_mark(text) and skynet.now() < deadline do
		skynet.sleep(1)
	end
	t.ok(t.has_mark(text), "mark " .. text)
end

local function count_marks(text)
	local n = 0
	for _, m in ipairs(t.marks) do
		if m == text then
			n = n + 1
		end
	end
	return n
end

-- Launcher descriptions of running snaxd services.
local function snaxd_count(name)
	local n = 0
	for _, desc in pairs(skynet.call(".launcher", "lua", "LIST")) do
		if desc == "snlua snaxd " .. name then
			n = n + 1
		end
	end
	return n
end

local function gone(obj)
	t.quiesce()
	t.raises("call to invalid address", skynet.call, obj.handle, "snax", 6)
end

t.case("ids: system hooks 1-4, then handlers in definition order", function()
	local it = snax.interface("snax_counter")
	t.eq(it.name, "snax_counter", "name")
	t.same(it.system, { init = 1, exit = 2, hotfix = 3, profile = 4 }, "system ids")
	t.same(it.accept, COUNTER_ACCEPT, "accept ids")
	t.same(it.response, COUNTER_RESPONSE, "response ids")
	t.ok(snax.interface("snax_counter") == it, "interface is cached")

	local funcs = parse_text [[
function response.r1() end
function accept.a1() end
function accept.same() end
function response.same() end
function init() end
]]
	t.eq(#funcs, 8, "records")
	local want = {
		{ 1, "system", "init" }, { 2, "system", "exit" }, { 3, "system", "hotfix" },
		{ 4, "system", "profile" }, { 5, "response", "r1" }, { 6, "accept", "a1" },
		{ 7, "accept", "same" }, { 8, "response", "same" },
	}
	for i, w in ipairs(want) do
		t.eq(funcs[i][1], w[1], "id " .. i)
		t.eq(funcs[i][2], w[2], "group " .. i)
		t.eq(funcs[i][3], w[3], "name " .. i)
	end
	t.eq(type(funcs[1][4]), "function", "init defined")
	t.eq(funcs[2][4], nil, "exit not defined")
end)

t.case("definition errors", function()
	local cases = {
		{ "accept[1] = function() end", "accept method only support string" },
		{ "response[true] = function() end", "response method only support string" },
		{ "accept.x = 1", "accept.x must be function" },
		{ "response.y = {}", "response.y must be function" },
		{ "function accept.x() end function accept.x() end", "accept.x duplicate definition" },
		{ "function response.x() end response.x = function() end", "response.x duplicate definition" },
		{ "init = 1", "init must be a function" },
		{ "exit = 'no'", "exit must be a function" },
		{ "hotfix = {}", "hotfix must be a function" },
		{ "profile = true", "profile must be a function" },
	}
	for _, c in ipairs(cases) do
		local err = t.raises(c[2], parse_text, c[1])
		t.ok(err:find("inline:1:", 1, true), "position of " .. c[2] .. ": " .. err)
	end
	-- The same errors through a file, before any snaxd is launched.
	local before = snaxd_count("snax_dup")
	t.raises("accept.twice duplicate definition", snax.newservice, "snax_dup")
	t.eq(snaxd_count("snax_dup"), before, "no snaxd left behind")
	-- A loader that fails, or returns no function.
	t.raises("snax: can't load inline: gone", parse, "inline", {}, function()
		return nil, "gone"
	end)
	-- Every template tried is reported, one per line.
	local err = t.raises("test/lua/snax_nothere.lua", snax.interface, "snax_nothere")
	t.ok(err:find("\n", 1, true) and err:find("test/lua/snax_snax_nothere.lua", 1, true),
		"both templates in " .. err)
end)

t.case("the parse environment: no-op require only; G's metatable restored", function()
	-- Top-level use of a library fails in the client.
	t.raises("attempt to index a nil value (global 'string')", snax.interface, "snax_topstr")
	local G = setmetatable({ require = function() end }, {
		__index = function(_, k)
			return "fallback " .. k
		end,
	})
	local mt = getmetatable(G)
	local funcs = parse_text([[
local skynet = require "skynet"
seen_require = skynet
seen_other = other_name
plain_global = 42
function init() end
]], G)
	t.eq(#funcs, 4, "records")
	t.eq(G.plain_global, 42, "other globals land in G")
	t.eq(rawget(G, "seen_require"), nil, "require returned nothing")
	t.eq(rawget(G, "init"), nil, "hooks are not stored in G")
	t.eq(G.seen_other, "fallback other_name", "reads fall back to G's own metatable")
	t.ok(getmetatable(G) == mt, "metatable restored")
	t.raises("accept.x must be function", parse_text, "accept.x = 1", G)
	t.ok(getmetatable(G) == mt, "metatable restored after an error")
	-- snax.interface's default environment: require returns nothing.
	local saw = parse_text("seen = require 'skynet'", { require = function() end })
	t.eq(#saw, 4, "records")
end)

t.case("objects: post, req, handle, type, tostring, unknown methods", function()
	local obj = snax.newservice("snax_counter", me, "a", "b")
	wait_mark("init a,b")
	t.eq(math.type(obj.handle), "integer", "handle")
	t.eq(obj.type, "snax_counter", "type")
	t.eq(tostring(obj), string.format("[snax_counter:%x]", obj.handle), "tostring")
	t.eq(select("#", obj.post.inc(2)), 0, "post returns nothing")
	t.eq(obj.req.get(), 2, "req result")
	local r = table.pack(obj.req.echo(1, "x", nil, true))
	t.eq(r.n, 4, "echo count")
	t.eq(r[2], "x", "echo 2")
	t.eq(r[4], true, "echo 4")
	t.raises("call failed", obj.req.fail, "handler error")
	obj.post.inc()
	obj.post.total(10)
	t.eq(obj.req.get(), 23, "posts in order before the next req")
	t.raises("post snax_counter:nope no exist", function()
		return obj.post.nope
	end)
	t.raises("request snax_counter:nope no exist", function()
		return obj.req.nope
	end)
	t.raises("request snax_counter:inc no exist", function()
		return obj.req.inc
	end)
	t.raises("post snax_counter:get no exist", function()
		return obj.post.get
	end)
	t.ok(obj.req.get == obj.req.get, "method functions are kept")
	snax.kill(obj)
end)

t.case("rawnewservice, bind (same object, type check), self", function()
	local h = snax.rawnewservice("snax_counter", me, "raw")
	wait_mark("init raw")
	t.eq(math.type(h), "integer", "rawnewservice returns a handle")
	local obj = snax.bind(h, "snax_counter")
	t.ok(snax.bind(h, "snax_counter") == obj, "bind returns the same object")
	t.raises("assertion failed!", snax.bind, h, "snax_ambig")
	local s, same_handle, ty, same_obj = obj.req.whoami()
	t.eq(s, tostring(obj), "self tostring")
	t.eq(same_handle, true, "self handle")
	t.eq(ty, "snax_counter", "self type")
	t.eq(same_obj, true, "self is cached in the service")
	snax.kill(obj)
end)

t.case("SERVICE_NAME, SERVICE_PATH and the service folder on package.path", function()
	local obj = snax.newservice("snax_counter", me, "paths")
	local name, path, tag, prefix = obj.req.paths()
	t.eq(name, "snax_counter", "SERVICE_NAME")
	t.eq(path, "./test/lua/snax_counter/", "SERVICE_PATH")
	t.eq(tag, "from the service folder", "module from the folder (required at top level)")
	t.eq(prefix, "./test/lua/snax_counter/?.lua", "package.path prefix")
	snax.kill(obj)
end)

t.case("kill runs exit(...) then the service is gone; posts to it are dropped", function()
	local obj = snax.newservice("snax_counter", me, "k")
	t.eq(select("#", snax.kill(obj, "k1", "k2")), 0, "kill returns nothing")
	wait_mark("exit k1,k2")
	gone(obj)
	obj.post.inc() -- dropped, no error
	t.raises("call to invalid address", obj.req.get)
end)

t.case("snax.exit from an accept handler", function()
	local obj = snax.newservice("snax_counter", me, "q")
	obj.post.quit("q1")
	wait_mark("exit q1")
	gone(obj)
end)

t.case("pending requests fail when the service exits", function()
	local obj = snax.newservice("snax_counter", me, "pending")
	local result
	skynet.fork(function()
		result = table.pack(pcall(obj.req.block))
	end)
	t.quiesce()
	t.eq(result, nil, "block is pending")
	snax.kill(obj)
	t.quiesce()
	t.ok(result, "the pending request returned")
	t.eq(result[1], false, "it failed")
	t.ok(tostring(result[2]):find("call failed", 1, true), "call failed: " .. tostring(result[2]))
end)

t.case("printf, profile_info and debug INFO", function()
	local obj = snax.newservice("snax_counter", me, "prof")
	t.eq(obj.req.say("%d-%s", 7, "x"), "7-x", "printf formats into skynet.error")
	for _ = 1, 3 do
		obj.post.inc()
	end
	for _ = 1, 2 do
		obj.req.get()
	end
	pcall(obj.req.fail, "counted too")
	local info = snax.profile_info(obj)
	t.eq(info.inc.count, 3, "inc count")
	t.eq(info.get.count, 2, "get count")
	t.eq(info.fail.count, 1, "a failing handler is counted")
	t.eq(info.say.count, 1, "say count")
	t.eq(math.type(info.get.time), "float", "time is seconds")
	t.ok(info.get.time >= 0, "time >= 0")
	t.eq(info.init, nil, "hooks are not profiled")
	local dbg = skynet.call(obj.handle, "debug", "INFO")
	t.eq(dbg.inc.count, 3, "debug INFO is the profile table")
	snax.kill(obj)
end)

t.case("Already init, Init first, Never init", function()
	local obj = snax.newservice("snax_counter", me, "once")
	wait_mark("init once")
	t.raises("call failed", skynet.call, obj.handle, "snax", 1, me, "again")
	t.quiesce()
	t.eq(count_marks("init again"), 0, "init did not run twice")
	t.eq(obj.req.get(), 0, "still serving")
	snax.kill(obj)

	local h = skynet.newservice("snaxd", "snax_counter")
	t.raises("call failed", skynet.call, h, "snax", COUNTER_RESPONSE.get)
	skynet.send(h, "snax", COUNTER_ACCEPT.inc, 5)
	t.raises("call failed", skynet.call, h, "snax", 2, "early")
	t.eq(skynet.call(h, "snax", 4).inc, nil, "profile works before init; nothing ran")
	skynet.call(h, "snax", 1, me, "late")
	wait_mark("init late")
	t.eq(count_marks("exit early"), 0, "exit did not run before init")
	t.eq(skynet.call(h, "snax", COUNTER_RESPONSE.get), 0, "the early post was refused")
	skynet.call(h, "snax", 2)
	t.quiesce()
	t.raises("call to invalid address", skynet.call, h, "snax", COUNTER_RESPONSE.get)
end)

t.case("a failing init leaves no snaxd behind", function()
	local before = snaxd_count("snax_counter")
	-- init(nil) cannot send its mark: it raises
	t.raises("call failed", snax.newservice, "snax_counter")
	t.quiesce()
	t.eq(snaxd_count("snax_counter"), before, "snaxd services")
end)

t.case("an accept method called as a request gets an error reply", function()
	local obj = snax.newservice("snax_counter", me, "acc")
	obj.post.inc(1)
	t.raises("call failed", skynet.call, obj.handle, "snax", COUNTER_ACCEPT.inc, 100)
	t.eq(obj.req.get(), 1, "the handler did not run")
	snax.kill(obj)
end)

t.case("enablecluster: the lua protocol reaches the handlers", function()
	local obj = snax.newservice("snax_counter", me, "lua")
	obj.post.inc(4)
	obj.req.cluster()
	t.eq(skynet.call(obj.handle, "lua", COUNTER_RESPONSE.get), 4, "call over lua")
	skynet.send(obj.handle, "lua", COUNTER_ACCEPT.inc, 1)
	t.eq(obj.req.get(), 5, "send over lua")
	snax.kill(obj)
end)

t.case("uniqueservice, queryservice, globalservice, queryglobal", function()
	local queried
	skynet.fork(function()
		queried = snax.queryservice("snax_counter")
	end)
	t.quiesce()
	t.eq(queried, nil, "queryservice waits for the launch")
	local u = snax.uniqueservice("snax_counter", me, "u1")
	local u2 = snax.uniqueservice("snax_counter", me, "u2")
	t.ok(u == u2, "same object")
	t.quiesce()
	t.ok(queried == u, "queryservice got it")
	t.ok(snax.queryservice("snax_counter") == u, "queryservice later")
	t.eq(count_marks("init u1"), 1, "first launch's arguments")
	t.eq(count_marks("init u2"), 0, "later arguments unused")

	local gq
	skynet.fork(function()
		gq = snax.queryglobal("snax_counter")
	end)
	t.quiesce()
	t.eq(gq, nil, "queryglobal waits")
	local g = snax.globalservice("snax_counter", me, "g1")
	t.ok(g ~= u, "the global one is another service")
	t.ok(snax.globalservice("snax_counter", me, "g2") == g, "same global object")
	t.quiesce()
	t.ok(gq == g, "queryglobal got it")
	t.ok(snax.queryglobal("snax_counter") == g, "queryglobal later")
	local list = skynet.call(".service", "lua", "LIST")
	t.eq(list["snaxd.snax_counter"], skynet.address(u.handle), "LIST unique")
	t.eq(list["@snaxd.snax_counter"], skynet.address(g.handle), "LIST global")

	local err = t.raises("accept.twice duplicate definition", snax.uniqueservice, "snax_dup")
	local err2 = t.raises("accept.twice duplicate definition", snax.uniqueservice, "snax_dup")
	t.eq(err2, err, "failure remembered")
	t.raises("accept.twice duplicate definition", snax.queryservice, "snax_dup")
	t.raises("accept.twice duplicate definition", snax.globalservice, "snax_dup")
end)

t.case("hotfix of a running service keeps its state", function()
	local obj = snax.newservice("snax_counter", me, "hf")
	obj.post.inc(3)
	t.eq(obj.req.get(), 3, "before")
	local a, b = snax.hotfix(obj, [[
local count
function response.get()
	return count * 10
end
function hotfix(x, y)
	return "hf-ret", x + y
end
]], 3, 4)
	t.eq(a, "hf-ret", "hotfix result 1")
	t.eq(b, 7, "hotfix result 2")
	t.eq(obj.req.get(), 30, "patched get reads the service's count")
	obj.post.inc(1)
	t.eq(obj.req.get(), 40, "the old inc and the new get share count")

	-- Locals reached through a patch helper are joined too; valued ones stay private.
	t.eq(select("#", snax.hotfix(obj, [[
local count
local k = 100
local function scaled()
	return count * k
end
function response.get()
	return scaled()
end
function accept.inc(n)
	count = count + 2 * (n or 1)
end
]])), 0, "a patch without hotfix returns nothing")
	obj.post.inc(1)
	t.eq(obj.req.get(), 600, "helper joined, k private, new inc")
	obj.post.total(1) -- an unpatched handler still updates the same count
	t.eq(obj.req.get(), 800, "unpatched handler")
	t.eq(snax.profile_info(obj).get.count, 5, "profile counts go on")
	snax.kill(obj)
end)

t.case("hotfix errors: mismatch, ambiguity, compile, patch run, hook", function()
	local obj = snax.newservice("snax_counter", me, "hf2")
	obj.post.inc(2)
	t.raises("Patch mismatch accept.nope", snax.hotfix, obj, "function accept.nope() end")
	t.raises("Patch mismatch response.inc", snax.hotfix, obj, "function response.inc() end")
	t.raises("Patch mismatch accept.nope", snax.hotfix, obj, [[
function response.get() return -1 end
function accept.nope() end
]])
	t.eq(obj.req.get(), 2, "a failed patch changes nothing")

	local err = t.raises("patch:1:", snax.hotfix, obj, "function (")
	t.ok(not err:find("attempt to call a nil value", 1, true), "compile error kept: " .. err)
	t.ok(err:find("<name> expected", 1, true) or err:find("near", 1, true), "compile message: " .. err)
	t.raises("accept.inc must be function", snax.hotfix, obj, "accept.inc = 1")
	t.raises("patch top level", snax.hotfix, obj, "error('patch top level')")
	t.raises("hook failed", snax.hotfix, obj, "function hotfix() error('hook failed') end")
	t.raises("snax.hotfix: bad patch source (nil)", snax.hotfix, obj, nil)
	t.raises("snax.hotfix: bad patch source (nil)", require "snax.hotfix", {}, nil)
	t.raises("snax.interface: bad service name (nil)", snax.interface, nil)
	t.raises("snax: bad service name (1)", snax.uniqueservice, 1)
	t.raises("snax.bind: bad handle (true)", snax.bind, true, "snax_counter")
	t.eq(obj.req.get(), 2, "still serving")
	snax.kill(obj)

	local amb = snax.newservice("snax_ambig")
	t.raises("ambiguity local value n", snax.hotfix, amb, [[
local n
function response.a() return n + 100 end
]])
	t.eq(amb.req.a(), 1, "unchanged after the ambiguity")
	snax.hotfix(amb, [[
local n = 5
function response.a() return n end
]])
	t.eq(amb.req.a(), 5, "a valued local stays the patch's own")
	t.eq(amb.req.b(), 2, "the other handler untouched")
	snax.kill(amb)
end)

t.case("snax.hotfix on its own: variables of several chunks", function()
	local hotfix = require "snax.hotfix"
	local count = 1
	local function one()
		return count, tostring(count)
	end
	-- A handler from another chunk: its _ENV is another variable holding the same table.
	local two = load("return function() return type(nil) end", "=other")()
	local function records(...)
		local funcs = {
			{ 1, "system", "init" }, { 2, "system", "exit" }, { 3, "system", "hotfix" },
			{ 4, "system", "profile" },
		}
		for i, f in ipairs { ... } do
			funcs[#funcs + 1] = { 4 + i, "response", i == 1 and "one" or "two", f }
		end
		return funcs
	end
	local funcs = records(one, two)
	t.eq(hotfix(funcs, [[
local count
function response.one()
	return count + 1, tostring(count)
end
function hotfix()
	return "joined"
end
]]), "joined", "hook result")
	local patched = funcs[5][4]
	t.eq(patched(), 2, "reads the local of this test")
	count = 5
	local n, s = patched()
	t.eq(n, 6, "the same variable")
	t.eq(s, "5", "globals through the joined _ENV")
	t.ok(funcs[6][4] == two, "the other handler untouched")

	-- Two _ENV variables holding different tables are ambiguous.
	local foreign = load("return function() return type(nil) end", "=other", "t", { type = type })()
	funcs = records(one, foreign)
	t.raises("ambiguity local value _ENV", hotfix, funcs, "function response.one() return tostring(1) end")
	t.ok(funcs[5][4] == one, "unchanged")
end)

t.case("compat10 name", function()
	local saved = package.path
	package.path = "./lualib/compat10/?.lua;" .. saved
	local ok, compat = pcall(require, "snax")
	package.path = saved
	t.ok(ok, "require snax: " .. tostring(compat))
	t.ok(compat == snax, "require 'snax' is the skynet.snax table")
end)

-- Config keys are write-once: these cases come last.
t.case("snax_interface_g: clients parse in that module's table", function()
	t.raises("attempt to index a nil value (global 'string')", snax.interface, "snax_topstr")
	skynet.setenv("snax_interface_g", "snax_test_g")
	local obj = snax.newservice("snax_topstr")
	local label, global = obj.req.label()
	t.eq(label, "v1", "label")
	t.eq(global, "v1", "the service's own global")
	t.eq(require("snax_test_g").label_global, "v1", "the module table received the file's global")
	snax.kill(obj)
end)

t.case("snax_loader: used by snaxd and by clients", function()
	t.raises("snax_virtual", snax.interface, "snax_virtual")
	skynet.setenv("snax_loader", "./test/lua/snax_test_loader.lua")
	local it = snax.interface("snax_virtual")
	t.same(it.response, { hello = 5 }, "ids from the loader")
	t.same(it.accept, { nothing = 6 }, "ids from the loader")
	local obj = snax.newservice("snax_virtual")
	local text, name, path = obj.req.hello("x")
	t.eq(text, "virtual x", "handler from the loader")
	t.eq(name, "snax_virtual", "SERVICE_NAME")
	t.eq(path, "virtual/snax_virtual/", "SERVICE_PATH from the loader's template")
	snax.kill(obj)
	local other = snax.newservice("snax_ambig")
	t.eq(other.req.b(), 2, "the loader's template search")
	snax.kill(other)
end)

t.start(nil, function()
	me = skynet.address(skynet.self())
end)
