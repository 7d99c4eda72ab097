-- skynet.stat (the STAT command): a number for every key STAT knows,
-- nothing for a key it does not know.
local skynet = require "skynet"
local t = require "testlib"

t.case("known keys return numbers", function()
	t.eq(math.type(skynet.stat("mqlen")), "integer", "mqlen")
	t.ok(skynet.stat("message") >= 1, "message count")
	t.eq(type(skynet.stat("cpu")), "number", "cpu")
	t.eq(type(skynet.stat("time")), "number", "time")
	t.eq(skynet.stat("endless"), 0, "endless")
end)

t.case("an unknown key returns nothing", function()
	t.eq(select("#", skynet.stat("no such key")), 0, "no values")
	t.eq(select("#", skynet.stat("")), 0, "empty key")
end)

t.start()
