---@meta ltls.c
-- Editor help: `require "ltls.c"`, TLS over OpenSSL memory buffers, for
-- http and websocket (needs config enablessl = true).

---One SSL_CTX.
---@class ltls.ctx: userdata
local ctx_methods = {}

---Loads a PEM certificate chain and its private key (raises on failure).
---@param certfile string
---@param keyfile string
function ctx_methods:set_cert(certfile, keyfile) end

---Sets the OpenSSL cipher list.
---@param list string
function ctx_methods:set_ciphers(list) end

---Turns peer certificate checks on (system CA store, or cafile) or off.
---@param on boolean
---@param cafile? string
function ctx_methods:set_verify(on, cafile) end

---One TLS connection; every call is synchronous and moves bytes in memory.
---@class ltls.tls: userdata
local tls_methods = {}

---Feeds the peer's handshake bytes; returns the bytes to send (nothing when none).
---@param input? string
---@return string?
function tls_methods:handshake(input) end

---True once the handshake is complete.
---@return boolean
function tls_methods:finished() end

---Feeds ciphertext; returns all plaintext that can be decrypted now (maybe "").
---@param cipher? string
---@return string
function tls_methods:read(cipher) end

---Encrypts plaintext; returns the ciphertext to send.
---@param plain? string
---@return string
function tls_methods:write(plain) end

---Sets the SNI host name; returns OpenSSL's result.
---@param name string
---@return integer
function tls_methods:set_ext_host_name(name) end

---Frees the connection; every later call raises.
function tls_methods:close() end

local ltls = {}

---A new context.
---@return ltls.ctx
function ltls.newctx() end

---A new connection on ctx, as "server" or "client" (hostname: SNI and verification).
---@param method "server"|"client"
---@param ctx ltls.ctx
---@param hostname? string
---@return ltls.tls
function ltls.newtls(method, ctx, hostname) end

return ltls
