-- What the Lua benchmarks read of their own process (a library, not a
-- service): resident memory and CPU time, from /proc/self.
--   local proc = require "bench_proc"
--   proc.vmrss_kib()  -- VmRSS, KiB
--   proc.cpu_s([pid]) -- user + system CPU time of every thread, seconds (of
--                        this process, or of process pid)
local M = {}

local clk_tck -- clock ticks per second of the /proc/self/stat times

function M.vmrss_kib()
	local f = assert(io.open("/proc/self/status", "r"))
	local text = f:read("a")
	f:close()
	return tonumber(text:match("VmRSS:%s*(%d+)"))
end

function M.cpu_s(pid)
	if clk_tck == nil then
		local p = io.popen("getconf CLK_TCK 2>/dev/null")
		clk_tck = p and tonumber(p:read("l")) or 100
		if p then
			p:close()
		end
	end
	local f = assert(io.open("/proc/" .. (pid or "self") .. "/stat", "r"))
	local text = f:read("a")
	f:close()
	-- fields after the ")" closing the command name: state is field 3
	local fields = {}
	for w in text:match("%)%s+(.*)$"):gmatch("%S+") do
		fields[#fields + 1] = w
	end
	return (tonumber(fields[12]) + tonumber(fields[13])) / clk_tck -- utime, stime
end

return M
