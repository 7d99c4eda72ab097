-- The snax_loader of test_snax: serves snax_virtual from a string (no such
-- file exists) and every other name through the usual template search.
local sources = {
	snax_virtual = [[
function response.hello(who)
	return "virtual " .. who, SERVICE_NAME, SERVICE_PATH
end
function accept.nothing() end
]],
}

return function(path, name, G)
	local src = sources[name]
	if src then
		return load(src, "=" .. name, "t", G), "virtual/?.lua"
	end
	local errors = {}
	for template in path:gmatch "[^;]+" do
		local f, err = loadfile((template:gsub("%?", name)), "bt", G)
		if f then
			return f, template
		end
		errors[#errors + 1] = err
	end
	return nil, table.concat(errors, "\n")
end
