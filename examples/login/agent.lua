-- One player's agent in the login example: answers the player's requests
-- (`client` messages from gated.lua): "time" gives the node's time,
-- anything else is echoed. Argument: the player's uid.
local skynet = require "skynet"

local uid = ...

skynet.register_protocol {
	name = "client",
	id = skynet.PTYPE_CLIENT,
	unpack = skynet.tostring,
}

skynet.start(function()
	skynet.dispatch("client", function(_, _, msg)
		local answer
		if msg == "time" then
			answer = os.date("%H:%M:%S", math.floor(skynet.time()))
		else
			answer = string.format("%s said: %s", uid, msg)
		end
		skynet.ret(answer)
	end)
	skynet.dispatch("lua", function(_, _, cmd)
		if cmd == "afk" then
			skynet.error(string.format("%s is away (connection closed)", uid))
		elseif cmd == "exit" then
			skynet.exit()
		end
	end)
end)
