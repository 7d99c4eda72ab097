-- The node of test/node/test_login.sh: two login servers (snax.loginserver;
-- svc_login_logind.lua with skynet's defaults, svc_login_strict.lua with
-- the opt-in limits) and one message server (svc_login_gated.lua:
-- expired_number 2, cache_bytes 100000, a 1 s handshake timeout), all on
-- 127.0.0.1 and free ports. The script reads the ports from the log:
--   "login server listen at : 127.0.0.1 <port>"   logind, then strict
--   "msgserver listen at : 127.0.0.1 <port> (sample)"
local skynet = require "skynet"

skynet.start(function()
	local logind = skynet.newservice("svc_login_logind")
	local strict = skynet.newservice("svc_login_strict")
	local gate = skynet.newservice("svc_login_gated", logind, strict, 2, 100000, 1)
	skynet.call(gate, "lua", "open", {
		address = "127.0.0.1",
		port = 0,
		maxclient = 256,
		servername = "sample",
	})
	skynet.error("login test: ready")
end)
