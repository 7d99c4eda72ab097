-- Launched by console lines in test_stdin_console: sends its arguments
-- (joined by ",") as a mark to the address given first.
local skynet = require "skynet"

local args = { ... }
local addr = table.remove(args, 1)
local text = table.concat(args, ",")

skynet.start(function()
	skynet.send(addr, "lua", "mark", text)
end)
