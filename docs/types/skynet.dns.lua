---@meta skynet.dns
-- Editor help: `require "skynet.dns"`, an asynchronous stub resolver (hosts
-- file, cache, then UDP queries from this service).

local dns = {}

---Sets the name server (ip, port 53 by default); without ip, reads /etc/resolv.conf again.
---@param ip? string
---@param port? integer
function dns.server(ip, port) end

---Resolves a name: its first address and the list (an IP literal is returned as is). Returns
---nil, "illegal name" for a bad name; raises "timeout or no answer". Blocks.
---@async
---@param name string
---@param ipv6? boolean AAAA instead of A
---@return string? ip, string[]|string ips
function dns.resolve(name, ipv6) end

---Empties the answer cache.
function dns.flush() end

return dns
