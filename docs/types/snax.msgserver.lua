---@meta snax.msgserver
-- Editor help: `require "snax.msgserver"`, the message server of the login
-- pair: a gate (snax.gateserver) whose clients authenticate with the secret
-- of their login and exchange session-tagged requests.

---@class snax.msgserver.conf
---@field login_handler fun(uid: any, secret: string): ... command `login`; by convention returns the subid
---@field logout_handler fun(uid: any, subid: any) command `logout`
---@field kick_handler fun(uid: any, subid: any) command `kick`
---@field request_handler fun(username: string, msg: string): string|number|nil a new request's response content
---@field register_handler fun(servername: string): ... called by command `open`; its results are the reply
---@field disconnect_handler? fun(username: string) an authenticated connection closed
---@field expired_number? integer response cache size parameter, default 128
---@field cache_bytes? integer cap on the bytes of a user's cached responses (off)
---@field timeout? number seconds to complete the handshake, else closed (off)

local msgserver = {}

---`b64(uid) .. "@" .. b64(server) .. "#" .. b64(tostring(subid))`.
---@param uid string
---@param subid string|integer
---@param server string
---@return string
function msgserver.username(uid, subid, server) end

---Splits a username: uid, subid (a string), server.
---@param username string
---@return string uid
---@return string subid
---@return string server
function msgserver.userid(username) end

---Records a user who may now handshake with secret (raises if already recorded).
---@param username string
---@param secret string the 8-byte secret of the login
function msgserver.login(username, secret) end

---Forgets a user and closes its current connection (no disconnect_handler).
---@param username string
function msgserver.logout(username) end

---"ip:port" of the user's current connection, or nil.
---@param username string
---@return string|nil
function msgserver.ip(username) end

---Starts the gate service (calls skynet.start); commands open, close, login, logout, kick.
---@param conf snax.msgserver.conf
function msgserver.start(conf) end

return msgserver
