-- Smoke test: standard services (launcher, service_mgr, global names through
-- cdummy) and the debug protocol.
local skynet = require "skynet"
local harbor = require "skynet.harbor"
local t = require "smoke_check"

local cases = {}

cases[#cases + 1] = { "newservice, launcher LIST/MEM/STAT, exit", function()
	local peer = skynet.newservice("smoke_peer")
	t.eq(skynet.call(peer, "lua", "echo", 1, "a"), 1, "echo")
	local list = skynet.call(".launcher", "lua", "LIST")
	t.eq(list[skynet.address(peer)], "snlua smoke_peer", "LIST entry")
	local mem = skynet.call(".launcher", "lua", "MEM", 100)
	t.ok(mem[skynet.address(peer)]:match "^[%d.]+ Kb %(snlua smoke_peer%)$", "MEM entry")
	local stat = skynet.call(".launcher", "lua", "STAT")
	t.eq(type(stat[skynet.address(peer)]), "table", "STAT entry")
	t.eq(skynet.call(".launcher", "lua", "NOSUCH")[1], "Unknown command", "unknown command")
	t.raises("call failed", skynet.call, peer, "lua", "exit")
	-- The exiting service answers its callers before it retires its handle, so
	-- a call right after the answer is either bounced by the dying service or
	-- finds the address gone: an error both ways, never an answer or a hang.
	local ok, err = pcall(skynet.call, peer, "lua", "echo")
	t.eq(ok, false, "call after exit fails")
	t.ok(tostring(err):find("call failed", 1, true) or tostring(err):find("call to invalid address", 1, true),
		"error text: " .. tostring(err))
	skynet.sleep(1)
	t.raises("call to invalid address", skynet.call, peer, "lua", "echo")
	t.eq(skynet.call(".launcher", "lua", "LIST")[skynet.address(peer)], nil, "removed from LIST")
end }

cases[#cases + 1] = { "newservice failures", function()
	t.raises("newservice no_such_service_file failed: cannot open", skynet.newservice, "no_such_service_file")
	local peer = skynet.newservice("smoke_peer")
	t.ok(peer, "still launching")
end }

cases[#cases + 1] = { "uniqueservice under concurrent requests", function()
	local got = {}
	local me = coroutine.running()
	for i = 1, 5 do
		skynet.fork(function()
			got[i] = skynet.uniqueservice("smoke_peer")
			if #got == 5 then
				skynet.wakeup(me)
			end
		end)
	end
	local q
	local q_token = {}
	skynet.fork(function()
		q = skynet.queryservice("smoke_peer")
		skynet.wakeup(q_token)
	end)
	skynet.wait(me)
	for i = 2, 5 do
		t.eq(got[i], got[1], "same handle " .. i)
	end
	if q == nil then
		skynet.wait(q_token) -- its answer may come after the five others
	end
	t.eq(q, got[1], "queryservice")
	local e1 = select(2, pcall(skynet.uniqueservice, "no_such_unique"))
	local e2 = select(2, pcall(skynet.uniqueservice, "no_such_unique"))
	t.ok(tostring(e1):find("newservice no_such_unique failed: cannot open", 1, true), "first error " .. tostring(e1))
	t.eq(e2, e1, "later requests raise the same text")
end }

cases[#cases + 1] = { "global names: calls queue until registered", function()
	local peer = skynet.newservice("smoke_peer", "SMOKEGLOBAL", 100)
	local t0 = skynet.now()
	t.eq(skynet.call("SMOKEGLOBAL", "lua", "echo", "hi"), "hi", "call by global name")
	t.ok(skynet.now() - t0 >= 100, "waited for the registration")
	t.eq(harbor.queryname("SMOKEGLOBAL"), peer, "queryname")
	t.eq(harbor.queryname(".launcher"), skynet.localname ".launcher", "queryname of a local name")
	harbor.link(0)
end }

cases[#cases + 1] = { "debug protocol", function()
	local peer = skynet.newservice("smoke_peer")
	t.eq(select("#", skynet.call(peer, "debug", "PING")), 0, "PING")
	t.eq(math.type(skynet.call(peer, "debug", "MEM")), "float", "MEM")
	local stat = skynet.call(peer, "debug", "STAT")
	t.eq(type(stat.task), "number", "STAT task")
	t.eq(skynet.call(peer, "debug", "SUPPORT", "lua"), true, "SUPPORT lua")
	t.eq(skynet.call(peer, "debug", "SUPPORT", "nosuch"), false, "SUPPORT nosuch")
	local a, b = skynet.call(peer, "debug", "INFO", 7)
	t.eq(a, "peer info", "INFO")
	t.eq(b, 7, "INFO argument")
	local ok, out = skynet.call(peer, "debug", "RUN", "print(type(CMD), held ~= nil) x = 1", "inject.lua")
	t.eq(ok, true, "RUN ok")
	t.eq(out, "table\ttrue", "RUN output")
	t.raises("call failed", skynet.call, peer, "debug", "NOSUCH")
	t.eq(type(skynet.call(peer, "debug", "TASK")), "table", "TASK")
	t.eq(skynet.call(peer, "debug", "KILLTASK", "thread: nosuch"), "Not found", "KILLTASK")
	local linked
	skynet.fork(function()
		linked = pcall(skynet.call, peer, "debug", "LINK")
	end)
	skynet.yield()
	t.eq(linked, nil, "LINK is not answered")
	skynet.send(peer, "debug", "EXIT")
	skynet.sleep(1)
	t.eq(linked, false, "LINK fails when the service exits")
end }

cases[#cases + 1] = { "forward_type + redirect, filter", function()
	local peer = skynet.newservice("smoke_peer")
	local proxy = skynet.newservice("smoke_fwd", "forward", peer)
	t.eq(skynet.call(proxy, "lua", "echo", "through"), "through", "reply from the target")
	local f = skynet.newservice("smoke_fwd", "filter")
	t.ok(skynet.call(f, "lua", "seen") >= 2, "filter saw the messages")
end }

cases[#cases + 1] = { "trace tags travel with calls", function()
	local peer = skynet.newservice("smoke_peer")
	skynet.trace("smoke")
	local tag = skynet.tracetag()
	t.ok(type(tag) == "string", "tag")
	t.eq(skynet.call(peer, "lua", "tracetag"), tag, "tag seen by the callee")
end }

cases[#cases + 1] = { "a traced call through a forward_type proxy keeps its trace", function()
	local peer = skynet.newservice("smoke_peer")
	local proxy = skynet.newservice("smoke_fwd", "forward", peer)
	local untraced, done = "not answered", {}
	skynet.fork(function() -- a coroutine with no trace tag of its own
		untraced = skynet.call(proxy, "lua", "tracetag")
		skynet.wakeup(done)
	end)
	skynet.wait(done)
	t.eq(untraced, nil, "an untraced call stays untraced")
	skynet.trace("forwarded")
	local tag = skynet.tracetag()
	t.eq(skynet.call(proxy, "lua", "tracetag"), tag, "the target sees the caller's tag")
	t.eq(skynet.call(proxy, "lua", "echo", "x"), "x", "and answers the caller")
end }

cases[#cases + 1] = { "traceproto: the callee tags each request of a protocol itself", function()
	local peer = skynet.newservice("smoke_peer")
	local tags = {}
	local done = {}
	skynet.fork(function() -- a coroutine with no trace tag of its own
		skynet.call(peer, "lua", "traceproto", true)
		tags[1] = skynet.call(peer, "lua", "tracetag")
		tags[2] = skynet.call(peer, "lua", "tracetag")
		skynet.call(peer, "lua", "traceproto", nil)
		tags[3] = skynet.call(peer, "lua", "tracetag")
		skynet.wakeup(done)
	end)
	skynet.wait(done)
	-- a forced tag is a new trace id (skynet's is ":<callee>-<n>")
	t.ok(tostring(tags[1]):match("^" .. string.rep("%x", 32) .. "$"), "a tag of the callee: " .. tostring(tags[1]))
	t.ok(tostring(tags[2]):match("^" .. string.rep("%x", 32) .. "$") and tags[2] ~= tags[1], "the next one")
	t.eq(tags[3], nil, "no tag once the protocol is not traced")
end }

cases[#cases + 1] = { "term and debug TERM fail calls to a never registered name", function()
	local r1, r2
	skynet.fork(function()
		r1 = table.pack(pcall(skynet.call, "SMOKE_NOBODY", "lua", "x"))
	end)
	skynet.fork(function()
		r2 = table.pack(pcall(skynet.call, "SMOKE_NOBODY2", "lua", "x"))
	end)
	skynet.sleep(10)
	t.eq(r1, nil, "still blocked")
	skynet.term("SMOKE_NOBODY")
	skynet.call(skynet.self(), "debug", "TERM", "SMOKE_NOBODY2")
	skynet.yield()
	t.eq(r1[1], false, "term")
	t.ok(tostring(r1[2]):find("call failed", 1, true), "error " .. tostring(r1[2]))
	t.eq(r2[1], false, "debug TERM")
end }

cases[#cases + 1] = { "global unique services", function()
	local a = skynet.uniqueservice(true, "smoke_peer")
	t.eq(skynet.uniqueservice(true, "smoke_peer"), a, "same handle")
	t.eq(skynet.queryservice(true, "smoke_peer"), a, "query")
	t.ok(a ~= skynet.uniqueservice("smoke_peer"), "local and global are distinct")
end }

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd)
		assert(cmd == "run")
		skynet.retpack(t.run(cases))
	end)
end)
