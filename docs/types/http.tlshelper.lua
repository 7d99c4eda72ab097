---@meta http.tlshelper
-- Editor help: `require "http.tlshelper"`, closures that run TLS (ltls.c)
-- over a socket id for httpc, http.server and websocket.

local tlshelper = {}

---The client handshake function: init(hostname) sets SNI and runs the handshake. Blocks.
---@param fd integer
---@param tls_ctx ltls.tls
---@return async fun(hostname?: string)
function tlshelper.init_requestfunc(fd, tls_ctx) end

---The server handshake function. Blocks.
---@param fd integer
---@param tls_ctx ltls.tls
---@return async fun()
function tlshelper.init_responsefunc(fd, tls_ctx) end

---A function that frees the TLS connection.
---@param tls_ctx ltls.tls
---@return fun()
function tlshelper.closefunc(tls_ctx) end

---A plaintext read closure: read(n) exactly n bytes, read() what is available. Blocks.
---@param fd integer
---@param tls_ctx ltls.tls
---@return async fun(n?: integer): string
function tlshelper.readfunc(fd, tls_ctx) end

---A plaintext write closure.
---@param fd integer
---@param tls_ctx ltls.tls
---@return fun(s: string)
function tlshelper.writefunc(fd, tls_ctx) end

---A closure reading plaintext until the peer closes. Blocks.
---@param fd integer
---@param tls_ctx ltls.tls
---@return async fun(): string
function tlshelper.readallfunc(fd, tls_ctx) end

---ltls.c.newctx.
---@return ltls.ctx
function tlshelper.newctx() end

---ltls.c.newtls.
---@param method "server"|"client"
---@param ssl_ctx ltls.ctx
---@param hostname? string
---@return ltls.tls
function tlshelper.newtls(method, ssl_ctx, hostname) end

return tlshelper
