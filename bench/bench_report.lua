-- The one BENCH line format of the Lua benchmarks (a library, not a service):
--   local report = require "bench_report"
--   report("lua.call_per_s", 123456.7, "calls/s")
-- prints "BENCH name=lua.call_per_s value=123457 unit=calls/s"; values under
-- 100 keep three decimals; NaN and infinity print as 0.
return function(name, value, unit)
	local text
	if value ~= value or value == math.huge or value == -math.huge then
		text = "0"
	elseif math.abs(value) >= 100 then
		text = string.format("%.0f", value)
	else
		text = string.format("%.3f", value)
	end
	print(string.format("BENCH name=%s value=%s unit=%s", name, text, unit))
end
