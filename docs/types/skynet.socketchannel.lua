---@meta skynet.socketchannel
-- Editor help: `require "skynet.socketchannel"`, a request/response channel
-- over one TCP connection that reconnects on demand.

---What a response function reads from.
---@class skynet.socketchannel.sock
local sock = {}

---Exactly n bytes; raises socketchannel.error when the connection ends. Blocks.
---@async
---@param n integer
---@return string
function sock:read(n) end

---A line without its separator (default "\n"); raises socketchannel.error. Blocks.
---@async
---@param sep? string
---@return string
function sock:readline(sep) end

---Session mode: reads one answer and returns its session, ok, data and whether more parts follow.
---@alias skynet.socketchannel.session_reader async fun(sock: skynet.socketchannel.sock): integer, boolean, any, any

---@class skynet.socketchannel.desc
---@field host string
---@field port integer
---@field backup? table[] other { host =, port = } to try
---@field auth? async fun(channel: skynet.socketchannel) runs after every connect
---@field response? skynet.socketchannel.session_reader session mode (default: order mode)
---@field nodelay? boolean
---@field overload? fun(overload: boolean) told when output piles up
---@field timeout? integer request timeout in centiseconds
---@field socket_read? fun(sock: table, n: integer): string custom reader
---@field socket_readline? fun(sock: table, sep: string): string custom line reader

---@class skynet.socketchannel
local channel = {}

---Connects now (once: a single attempt). Returns true when connected. Blocks.
---@async
---@param once? boolean
---@return boolean
function channel:connect(once) end

---Writes req (and the padding parts); with response, waits for the answer: order mode calls
---response(sock) -> ok, data; session mode matches the session the channel's response reads.
---Raises on failure. Blocks.
---@async
---@param req string|string[]
---@param response? (async fun(sock: skynet.socketchannel.sock): boolean, any)|integer
---@param padding? string[]
---@return any
function channel:request(req, response, padding) end

---Waits for an answer without sending anything (order mode). Blocks.
---@async
---@param response async fun(sock: skynet.socketchannel.sock): boolean, any
---@return any
function channel:response(response) end

---Closes the connection; every waiting caller fails.
function channel:close() end

---Moves to another host (the current connection is dropped).
---@param host string
---@param port? integer
function channel:changehost(host, port) end

---Replaces the backup list.
---@param list table[]
function channel:changebackup(list) end

---@class skynet.socketchannel.module
local sc = {}

---The value raised when the connection fails (compare with ==).
---@type table
sc.error = {}

---A new channel (nothing is connected until the first use).
---@param desc skynet.socketchannel.desc
---@return skynet.socketchannel
function sc.channel(desc) end

return sc
