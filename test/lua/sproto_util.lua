-- Helpers shared by the sproto tests (not a test itself): hex in and out,
-- byte comparison with a readable failure.
local M = {}

-- "03 00 1c" -> "\3\0\28" (blanks ignored)
function M.unhex(s)
	s = s:gsub("%s+", "")
	assert(#s % 2 == 0, "odd hex string")
	return (s:gsub("%x%x", function(h)
		return string.char(tonumber(h, 16))
	end))
end

function M.hex(s)
	local out = {}
	for i = 1, #s do
		out[i] = string.format("%02x", s:byte(i))
	end
	return table.concat(out, " ")
end

function M.bytes(got, want, what)
	if got ~= want then
		error(string.format("%s:\n got  [%s]\n want [%s]", what or "bytes", M.hex(got),
			M.hex(want)), 2)
	end
end

-- Compares with the hex text `want`.
function M.hexeq(got, want, what)
	want = M.unhex(want)
	if got ~= want then
		error(string.format("%s:\n got  [%s]\n want [%s]", what or "bytes", M.hex(got),
			M.hex(want)), 2)
	end
end

return M
