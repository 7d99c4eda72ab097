-- Tiny assertion helpers for the smoke tests.
local M = {}

function M.eq(got, want, what)
	if got ~= want then
		error(string.format("%s: got %s, want %s", what, tostring(got), tostring(want)), 2)
	end
end

function M.ok(cond, what)
	if not cond then
		error(what, 2)
	end
	return cond
end

function M.raises(text, f, ...)
	local ok, err = pcall(f, ...)
	if ok or not tostring(err):find(text, 1, true) then
		error(string.format("expected error %q, got %s", text, ok and "success" or tostring(err)), 2)
	end
end

-- Runs the named cases in order; raises one report naming the failures.
function M.run(cases)
	local failed = {}
	for _, c in ipairs(cases) do
		local ok, err = xpcall(c[2], debug.traceback)
		if not ok then
			failed[#failed + 1] = c[1] .. ": " .. tostring(err)
		end
	end
	if #failed > 0 then
		error(table.concat(failed, "\n"), 0)
	end
	return #cases
end

return M
