-- test/node/test_login.sh's second login server, with the opt-in limits:
-- 1 s to reach the reply, then 1 s before the server closes.
local login = require "snax.loginserver"
local util = require "svc_login_util"

login(util.conf { name = "strict", instance = 1, timeout = 1, linger = 1 })
