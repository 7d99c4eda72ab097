-- A snax service for test_snax whose two handlers close over two different
-- locals called n (a patch declaring `local n` is ambiguous).
do
	local n = 1
	function response.a()
		return n
	end
end

do
	local n = 2
	function response.b()
		return n
	end
end
