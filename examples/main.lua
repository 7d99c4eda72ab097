-- Demo: a world service ticking at 10 Hz and a few players whose buffs
-- expire on skynet.timeout. Watch the log; stop it with Ctrl-C.
local skynet = require "skynet"

skynet.start(function()
	local world = skynet.newservice("demo_world")
	for i = 1, 3 do
		local player = skynet.newservice("demo_player", "player" .. i)
		skynet.call(world, "lua", "join", player, "player" .. i)
	end
	skynet.error("demo: world and 3 players started; Ctrl-C to stop")
end)
