-- Helper of test_datasheet: a service that runs Lua snippets sent by the test.
--   svc_datasheet_peer reader   requires skynet.datasheet in its main chunk
--                               (so its start waits until a builder exists)
--   svc_datasheet_peer builder  requires skynet.datasheet.builder in its main
--                               chunk, the reader lazily
-- Requests: run(src, ...) -> the snippet's results (the snippet sees `ds`
-- (reader, nil until required), `builder`, `kept` (a table kept across
-- snippets) and skynet); exit() ends the service without answering.
local skynet = require "skynet"

local mode = ...
local env = setmetatable({ kept = {}, skynet = skynet }, { __index = _ENV })
if mode == "reader" then
	env.ds = require "skynet.datasheet"
else
	env.builder = require "skynet.datasheet.builder"
end

skynet.start(function()
	skynet.dispatch("lua", function(_, _, cmd, src, ...)
		if cmd == "run" then
			local f = assert(load(src, "=snippet", "t", env))
			skynet.retpack(f(...))
		elseif cmd == "exit" then
			skynet.exit()
		else
			error("svc_datasheet_peer: unknown command " .. tostring(cmd))
		end
	end)
end)
