-- Worker of bench_sharedata: "plain" does nothing; "module" only requires
-- skynet.sharedata; "reader" queries the config table `name` and touches a
-- few fields, keeping the proxies.
local skynet = require "skynet"

local mode, name = ...
local kept

skynet.start(function()
	if mode == "module" then
		kept = require "skynet.sharedata"
	elseif mode == "reader" then
		local sharedata = require "skynet.sharedata"
		local cfg = sharedata.query(name)
		local items = cfg.items
		local a, b = items[1], items[#items]
		kept = { cfg, a, b, a.name, b.hp, cfg.meta.version }
	end
	skynet.dispatch("lua", function()
		skynet.retpack(kept ~= nil)
	end)
end)
