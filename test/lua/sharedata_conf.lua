-- Data file for test_sharedata (the "@file" form of sharedata.new): assigns
-- globals from its argument.
local base = ...
level = base + 1
items = { "a", "b" }
local hidden = 3 -- luacheck: ignore (a local: not part of the data)

