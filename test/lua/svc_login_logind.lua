-- test/node/test_login.sh's login server with skynet's defaults: no
-- timeouts, connections left open after the reply (see svc_login_util.lua).
local login = require "snax.loginserver"
local util = require "svc_login_util"

login(util.conf { name = "login" })
