-- A snax file for test_snax that uses the string library at top level: a
-- client can only parse it with an environment holding `string`
-- (snax_interface_g). Its global label_global reaches that environment.
-- luacheck: globals label_global
local label = string.format("v%d", 1)
label_global = label

function response.label()
	return label, label_global
end
