-- Helper service for test_stm: the other side of an stm box. It can hold a
-- writer (its copy pointers go back to the caller) or a reader made from a
-- pointer the caller sends, and runs the writer/reader loops of the
-- concurrency case.
local skynet = require "skynet"
local stm = require "skynet.stm"

local writer, reader
local CMD = {}

local function decode(msg, sz, ud)
	return ud, skynet.unpack(msg, sz)
end

function CMD.new_writer(...)
	writer = stm.new(skynet.pack(...))
	return stm.copy(writer)
end

function CMD.copy()
	return stm.copy(writer)
end

function CMD.write(...)
	writer(skynet.pack(...))
end

function CMD.drop_writer()
	writer = nil
	collectgarbage()
end

function CMD.new_reader(ptr)
	reader = stm.newcopy(ptr)
end

function CMD.read(ud)
	return table.pack(reader(decode, ud))
end

function CMD.drop_reader()
	reader = nil
	collectgarbage()
end

-- Publishes 1..n with no yield in between (runs while another service reads).
function CMD.write_loop(n)
	for i = 1, n do
		writer(skynet.pack(i, string.rep("v", i % 64)))
	end
end

-- Reads until value n shows up (or `limit` reads); checks that the values
-- only grow and that each message is whole. Returns reads, distinct values.
function CMD.read_loop(n, limit)
	local last, seen, reads = -1, 0, 0
	while last < n and reads < limit do
		reads = reads + 1
		local ok, v, pad = reader(function(msg, sz)
			return skynet.unpack(msg, sz)
		end)
		if ok then
			assert(v > last, "svc_stm: version went back")
			assert(pad == string.rep("v", v % 64), "svc_stm: torn message")
			last = v
			seen = seen + 1
		end
	end
	return reads, seen, last
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, ...)
		local f = assert(CMD[cmd], "svc_stm: unknown command")
		skynet.retpack(f(...))
	end)
end)
