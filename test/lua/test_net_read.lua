-- test: real time (a paused socket keeps data in the kernel while the node
-- looks idle, so virtual time would jump past the test's deadline)
-- skynet.socket reading: read(n), read(), readline, readall and
-- block, on data split across writes and on close; one reader at a time;
-- close while a coroutine reads; onclose, limit, auto-pause, pause,
-- shutdown, abandon/start handover, close_fd and header. Both ends of each
-- connection live in this service (util.pair).
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"
local util = require "svc_net_util"

-- Runs f(...) in a fork; returns a function that waits for and returns its results.
local function async(f, ...)
	local result
	local token = {}
	local waiting = false
	skynet.fork(function(...)
		result = table.pack(f(...))
		if waiting then
			skynet.wakeup(token)
		end
	end, ...)
	return function()
		if result == nil then
			waiting = true
			skynet.wait(token)
		end
		return table.unpack(result, 1, result.n)
	end
end

t.case("read(n) returns exactly n bytes across writes", function()
	local s, c = util.pair()
	local r = async(socket.read, s, 5)
	socket.write(c, "hel")
	t.quiesce()
	socket.write(c, "lo wor")
	t.eq(r(), "hello", "first read")
	socket.write(c, "ld")
	t.eq(socket.read(s, 6), " world", "second read")
	t.eq(socket.read(s, 0), "", "read 0")
	socket.close(c)
	socket.close(s)
end)

t.case("read() returns what is buffered, waiting for some", function()
	local s, c = util.pair()
	local r = async(socket.read, s)
	socket.write(c, "abc")
	t.eq(r(), "abc", "blocked read")
	socket.write(c, "de")
	socket.write(c, "f")
	t.quiesce()
	t.eq(socket.read(s), "def", "buffered read")
	socket.close(c)
	socket.close(s)
end)

t.case("readline splits on the separator, also across writes", function()
	local s, c = util.pair()
	socket.write(c, "one\ntw")
	t.eq(socket.readline(s), "one", "first line")
	local r = async(socket.readline, s)
	socket.write(c, "o")
	t.quiesce()
	socket.write(c, "\nthree\r")
	t.eq(r(), "two", "second line")
	r = async(socket.readline, s, "\r\n")
	t.quiesce()
	socket.write(c, "\nfour\r\n\r\n")
	t.eq(r(), "three", "separator split across writes")
	t.eq(socket.readline(s, "\r\n"), "four", "fourth")
	t.eq(socket.readline(s, "\r\n"), "", "empty line")
	socket.close(c)
	socket.close(s)
end)

t.case("readline over many small writes", function()
	local s, c = util.pair()
	local r = async(socket.readline, s, "END")
	local want = {}
	for i = 1, 300 do
		want[i] = tostring(i % 10)
		socket.write(c, want[i])
		if i % 50 == 0 then
			t.quiesce()
		end
	end
	socket.write(c, "EN")
	t.quiesce()
	socket.write(c, "Dtail")
	t.eq(r(), table.concat(want), "line")
	t.eq(socket.read(s, 4), "tail", "rest")
	socket.close(c)
	socket.close(s)
end)

t.case("on close: read(n), read(), readline return false and the rest", function()
	local s, c = util.pair()
	local closed = 0
	socket.onclose(s, function(id)
		t.eq(id, s, "onclose id")
		closed = closed + 1
	end)
	socket.write(c, "abc")
	socket.close(c)
	local ok, rest = socket.read(s, 5)
	t.eq(ok, false, "read(n) result")
	t.eq(rest, "abc", "rest")
	t.eq(closed, 1, "onclose called once")
	t.eq(socket.disconnected(s), true, "disconnected")
	t.eq(socket.invalid(s), false, "still known until closed")
	ok, rest = socket.read(s)
	t.eq(ok, false, "read() after close")
	t.eq(rest, "", "read() rest")
	ok, rest = socket.readline(s)
	t.eq(ok, false, "readline after close")
	t.eq(rest, "", "readline rest")
	socket.close(s)
	t.eq(socket.invalid(s), true, "forgotten after close")
end)

t.case("read(n) blocked when the peer closes gets false and the partial data", function()
	local s, c = util.pair()
	local r = async(socket.read, s, 10)
	socket.write(c, "12345")
	t.quiesce()
	socket.close(c)
	local ok, rest = r()
	t.eq(ok, false, "result")
	t.eq(rest, "12345", "partial data")
	socket.close(s)
end)

t.case("readline blocked when the peer closes gets false and the rest", function()
	local s, c = util.pair()
	local r = async(socket.readline, s)
	socket.write(c, "no newline")
	t.quiesce()
	socket.close(c)
	local ok, rest = r()
	t.eq(ok, false, "result")
	t.eq(rest, "no newline", "rest")
	socket.close(s)
end)

t.case("readall waits for the close; on a closed socket returns data or false", function()
	local s, c = util.pair()
	local r = async(socket.readall, s)
	for i = 1, 10 do
		socket.write(c, string.rep(tostring(i % 10), 1000))
	end
	t.quiesce()
	socket.close(c)
	local all = r()
	t.eq(#all, 10000, "size")
	t.eq(all:sub(1001, 1001), "2", "order")
	t.eq(socket.readall(s), false, "closed and empty")
	socket.close(s)

	s, c = util.pair()
	socket.write(c, "xyz")
	socket.close(c)
	t.quiesce()
	t.eq(socket.readall(s), "xyz", "closed with data")
	socket.close(s)
end)

t.case("block waits for data or close", function()
	local s, c = util.pair()
	local r = async(socket.block, s)
	socket.write(c, "x")
	t.eq(r(), true, "data")
	t.eq(socket.block(s), true, "buffered data: at once")
	t.eq(socket.read(s), "x", "read")
	r = async(socket.block, s)
	socket.close(c)
	t.eq(r(), false, "close")
	socket.close(s)
	t.eq(socket.block(s), false, "unknown id")
end)

t.case("a second concurrent reader raises", function()
	local s, c = util.pair()
	local r = async(socket.read, s, 3)
	t.quiesce()
	t.raises("already being read", socket.read, s, 1)
	socket.write(c, "abc")
	t.eq(r(), "abc", "first reader unaffected")
	socket.close(c)
	socket.close(s)
end)

t.case("close waits for a blocked reader; the reader gets false", function()
	local s, c = util.pair()
	local order = {}
	local r = async(function()
		local ok, rest = socket.read(s, 4)
		order[#order + 1] = "reader"
		return ok, rest
	end)
	socket.write(c, "ab")
	t.quiesce()
	socket.close(s)
	order[#order + 1] = "closer"
	local ok, rest = r()
	t.eq(ok, false, "reader result")
	t.eq(rest, "ab", "reader rest")
	t.eq(table.concat(order, ","), "reader,closer", "order")
	t.eq(socket.invalid(s), true, "forgotten")
	t.eq(socket.write(s, "late"), false, "write after close")
	t.eq(socket.read(c), false, "peer sees the close")
	socket.close(c)
	socket.close(c) -- twice: nothing
end)

t.case("limit closes a socket whose unread data passes it", function()
	local s, c = util.pair()
	socket.limit(s, 1000)
	socket.write(c, string.rep("x", 600))
	t.quiesce()
	t.eq(socket.disconnected(s), false, "under the limit")
	socket.write(c, string.rep("y", 600))
	t.ok(util.wait_for(function()
		return socket.disconnected(s)
	end), "closed after the overflow")
	t.eq(socket.read(s), false, "read after overflow")
	socket.close(s)
	socket.close(c)
end)

t.case("a sized read may pass the limit", function()
	local s, c = util.pair()
	socket.limit(s, 100)
	local r = async(socket.read, s, 5000)
	for _ = 1, 5 do
		socket.write(c, string.rep("z", 1000))
	end
	t.eq(r(), string.rep("z", 5000), "read")
	socket.close(c)
	socket.close(s)
end)

t.case("more than 128 KB unread pauses reading; a reader resumes it", function()
	local s, c = util.pair()
	local data = util.bytes(1024 * 1024, 7)
	socket.write(c, data)
	t.ok(util.wait_for(function()
		local i = util.info(s)
		return i and not i.reading
	end), "paused")
	t.eq(socket.read(s, #data) == data, true, "all data after resume")
	socket.close(c)
	socket.close(s)
end)

t.case("pause stops reading until the next blocking read", function()
	local s, c = util.pair()
	socket.pause(s)
	t.quiesce()
	socket.write(c, "held")
	t.quiesce()
	t.eq(util.info(s).read, 0, "nothing read while paused")
	t.eq(socket.read(s, 4), "held", "read resumes")
	socket.close(c)
	socket.close(s)
end)

t.case("shutdown closes at once; the close event still follows", function()
	local s, c = util.pair()
	local closed = false
	socket.onclose(s, function()
		closed = true
	end)
	socket.shutdown(s)
	t.ok(util.wait_for(function()
		return closed
	end), "close event")
	t.eq(socket.read(c), false, "peer sees the close")
	socket.close(s)
	socket.close(c)
end)

t.case("abandon hands a socket to another service", function()
	local s, c = util.pair()
	local svc = skynet.newservice("svc_net_echo")
	socket.abandon(s)
	t.eq(socket.invalid(s), true, "forgotten here")
	skynet.call(svc, "lua", "serve", s)
	socket.write(c, "ping\n")
	t.eq(socket.readline(c), "ping", "echoed by the new owner")
	socket.close(c)
	skynet.call(svc, "lua", "wait_idle")
	skynet.kill(svc)
end)

t.case("close_fd closes an accepted socket never started", function()
	local lid, _, port = socket.listen("127.0.0.1", 0)
	local got
	socket.start(lid, function(id)
		got = id
	end)
	local c = assert(socket.open("127.0.0.1", port))
	t.ok(util.wait_for(function()
		return got ~= nil
	end), "accepted")
	socket.close_fd(got)
	t.eq(socket.read(c), false, "peer sees the close")
	t.raises("use socket.close", socket.close_fd, c)
	socket.close(c)
	socket.close(lid)
end)

t.case("write takes strings, tables of strings and buffers", function()
	local s, c = util.pair()
	t.eq(socket.write(c, "a"), true, "string")
	t.eq(socket.write(c, { "b", "cd", "" }), true, "table")
	local p, sz = skynet.pack("e")
	t.eq(socket.write(c, p, sz), true, "buffer")
	t.eq(socket.lwrite(c, "f"), true, "lwrite")
	local want = "abcd" .. skynet.packstring("e") .. "f"
	t.eq(socket.read(s, #want), want, "bytes")
	socket.close(c)
	socket.close(s)
end)

t.case("header decodes big-endian integers of 1 to 4 bytes", function()
	t.eq(socket.header("\1"), 1, "1 byte")
	t.eq(socket.header("\1\2"), 0x102, "2 bytes")
	t.eq(socket.header("\1\2\3"), 0x10203, "3 bytes")
	t.eq(socket.header("\255\255\255\255"), 0xffffffff, "4 bytes")
	t.raises("bad header length", socket.header, "")
	t.raises("bad header length", socket.header, "12345")
end)

t.case("unknown ids raise for reads and do nothing for close", function()
	t.raises("unknown socket", socket.read, 123456)
	t.raises("unknown socket", socket.readline, 123456)
	socket.close(123456)
	t.eq(socket.invalid(123456), true, "invalid")
	t.eq(socket.disconnected(123456), nil, "disconnected of unknown")
end)

t.start()
