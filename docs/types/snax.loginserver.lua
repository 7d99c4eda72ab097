---@meta snax.loginserver
-- Editor help: `require "snax.loginserver"` returns one function, login(conf),
-- which a login service's main chunk calls instead of skynet.start. The first
-- service to run the script becomes the master (it listens), the copies it
-- starts become slaves (they run auth_handler).

---@class snax.loginserver.conf
---@field port integer|string required; 0 picks a free port (logged)
---@field host? string default "0.0.0.0"
---@field instance? integer slave services, default 8
---@field multilogin? boolean false (default): 406 for a second login of a uid in progress
---@field name? string the master's local name is "." .. name (default "login")
---@field timeout? number seconds from accept until the reply is written, else closed (off)
---@field linger? number seconds a connection stays open after its reply (off: until the client closes)
---@field auth_handler fun(token: string): string, any server, uid (runs in a slave; raising: 401)
---@field login_handler fun(server: string, uid: any, secret: string): any subid (master; raising: 403)
---@field command_handler fun(cmd: any, ...): ... the master's `lua` requests (no source)

---Makes the calling service a login master or slave (calls skynet.start).
---@param conf snax.loginserver.conf
local function login(conf) end

return login
