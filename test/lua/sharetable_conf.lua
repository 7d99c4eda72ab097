-- Data file for test_sharetable (sharetable.loadfile): runs in a fresh
-- state with the standard libraries and the loader's extra arguments.
local n, flag = ...
return {
	n = n,
	flag = flag,
	list = { 1, 2, 3 },
	name = string.format("conf%d", n),
}
