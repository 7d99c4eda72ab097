-- skynet.dns: an asynchronous stub resolver. Queries go out on a UDP
-- socket of this service through the socket thread, so neither the socket
-- thread nor a worker ever blocks on a lookup; the resolving coroutine
-- yields until the answer or the deadline.
--
-- State (per service): `servers` (from dns.server or the nameserver lines
-- of DEFAULT_RESOLV_CONF), one connected UDP socket per server opened on
-- first use (`links`), `pending` queries by 16-bit id, the hosts file
-- (parsed once), and the answer cache per family: name -> {ips, expire}.
-- The cache is strong and bounded: entries live until their TTL (expired
-- ones are kept as a fallback for a failed query) and the whole family is
-- cleared when it passes CACHE_MAX names.
--
-- A query waits at most QUERY_TIMEOUT_CS (30 s) in all; within that it is
-- sent again after 2, 4, 8 ... s, to the next server each time. resolv.conf
-- options "timeout:n" / "attempts:n" replace that schedule by attempts
-- tries of n seconds each. An answer wakes the query whose id AND question
-- match; any well-formed answer updates the cache. A failure returns an
-- expired cached entry if there is one, else raises "timeout or no answer".
--
-- A bad datagram is logged through one skynet.loglimit limiter per service
-- (datagrams with a forged source can come at any rate).
--
-- Units: centiseconds (skynet.now), TTLs in seconds from the wire.
local skynet = require "skynet"
local socket = require "skynet.socket"
local loglimit = require "skynet.loglimit"

local sbyte = string.byte
local schar = string.char
local ssub = string.sub
local spack = string.pack
local sunpack = string.unpack
local sformat = string.format
local tconcat = table.concat

local dns = {
	DEFAULT_HOSTS = "/etc/hosts",
	DEFAULT_RESOLV_CONF = "/etc/resolv.conf",
}

local QTYPE_A <const> = 1
local QTYPE_AAAA <const> = 28
local QUERY_TIMEOUT_CS <const> = 3000
local FIRST_RETRY_CS <const> = 200
local CACHE_MAX <const> = 4096
local IDLE_CLOSE_CS <const> = 6000
local MAX_NAME <const> = 1024

local servers -- array of {ip, port}; nil until dns.server or the first query
local schedule -- per-attempt timeouts in cs, from resolv.conf options
local links = {} -- server index -> {id = udp socket id, used = now}
local pending = {} -- query id -> query
local next_id = 1
local hosts -- name -> {[QTYPE_A] = {ip...}, [QTYPE_AAAA] = {ip...}}
local cache = { [QTYPE_A] = {}, [QTYPE_AAAA] = {} }
local cache_size = { [QTYPE_A] = 0, [QTYPE_AAAA] = 0 }
local log = loglimit.new() -- bad datagrams

---------------------------------------------------------------- files

local function read_file(path)
	if not path then
		return nil
	end
	local f = io.open(path, "r")
	if f == nil then
		return nil
	end
	local text = f:read "a"
	f:close()
	return text
end

local function parse_resolv_conf()
	local list, opts = {}, {}
	for line in (read_file(dns.DEFAULT_RESOLV_CONF) or ""):gmatch "[^\n]+" do
		line = line:gsub("[#;].*", "")
		local ns = line:match "^%s*nameserver%s+(%S+)"
		if ns then
			list[#list + 1] = { ns, 53 }
		end
		local options = line:match "^%s*options%s+(.*)"
		if options then
			opts.timeout = tonumber(options:match "timeout:(%d+)") or opts.timeout
			opts.attempts = tonumber(options:match "attempts:(%d+)") or opts.attempts
		end
	end
	local sched
	if opts.timeout or opts.attempts then
		sched = {}
		for i = 1, math.max(1, math.min(opts.attempts or 2, 5)) do
			sched[i] = math.max(1, math.min(opts.timeout or 5, 30)) * 100
		end
	end
	return list, sched
end

local function is_ipv4(s)
	return s:match "^%d+%.%d+%.%d+%.%d+$" ~= nil
end

local function parse_hosts()
	local map = {}
	for line in (read_file(dns.DEFAULT_HOSTS) or ""):gmatch "[^\n]+" do
		line = line:gsub("[#;].*", "")
		local addr, names = line:match "^%s*(%S+)%s+(.+)$"
		if addr then
			local family = is_ipv4(addr) and QTYPE_A or addr:find(":", 1, true) and QTYPE_AAAA
			if family then
				for name in names:gmatch "%S+" do
					name = name:lower()
					local e = map[name] or {}
					map[name] = e
					local ips = e[family] or {}
					e[family] = ips
					ips[#ips + 1] = addr
				end
			end
		end
	end
	return map
end

---------------------------------------------------------------- cache

local function cache_put(family, name, ips, ttl)
	local c = cache[family]
	if c[name] == nil then
		if cache_size[family] >= CACHE_MAX then
			c = {}
			cache[family] = c
			cache_size[family] = 0
		end
		cache_size[family] = cache_size[family] + 1
	end
	c[name] = { ips = ips, expire = skynet.now() + ttl * 100 }
end

function dns.flush()
	cache = { [QTYPE_A] = {}, [QTYPE_AAAA] = {} }
	cache_size = { [QTYPE_A] = 0, [QTYPE_AAAA] = 0 }
end

---------------------------------------------------------------- wire

local function encode_name(name)
	local parts = {}
	for label in name:gmatch "[^%.]+" do
		parts[#parts + 1] = schar(#label) .. label
	end
	parts[#parts + 1] = "\0"
	return tconcat(parts)
end

local function encode_query(id, name, qtype)
	return spack(">I2I2I2I2I2I2", id, 0x0100, 1, 0, 0, 0) .. encode_name(name)
		.. spack(">I2I2", qtype, 1)
end

-- A (possibly compressed) name at pos: name, position after it. Raises on
-- a malformed name; pointer chains are bounded.
local function decode_name(msg, pos)
	local labels, after, jumps = {}, nil, 0
	while true do
		local len = sbyte(msg, pos)
		if len == nil then
			error "truncated name"
		elseif len == 0 then
			pos = pos + 1
			break
		elseif len >= 0xc0 then
			local lo = sbyte(msg, pos + 1)
			if lo == nil then
				error "truncated pointer"
			end
			jumps = jumps + 1
			if jumps > 32 then
				error "name pointer loop"
			end
			after = after or pos + 2
			pos = ((len & 0x3f) << 8 | lo) + 1
		elseif len > 63 then
			error "bad label"
		else
			if pos + len > #msg then
				error "truncated label"
			end
			labels[#labels + 1] = ssub(msg, pos + 1, pos + len)
			pos = pos + len + 1
		end
	end
	return tconcat(labels, "."):lower(), after or pos
end

local function ipv6_text(raw)
	local g = { sunpack(">I2I2I2I2I2I2I2I2", raw) }
	return sformat("%x:%x:%x:%x:%x:%x:%x:%x", g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8])
end

-- Decodes an answer datagram: {id, rcode, qname, qtype, [family] = ips},
-- ttl (minimum over the records). Raises on malformed input.
local function decode_answer(msg)
	local id, flags, qd, an = sunpack(">I2I2I2I2", msg)
	local pos = 13
	local r = { id = id, rcode = flags & 0xf }
	if qd ~= 1 then
		error "not one question"
	end
	r.qname, pos = decode_name(msg, pos)
	r.qtype, pos = sunpack(">I2", msg, pos)
	pos = pos + 2 -- qclass
	local ttl
	for _ = 1, an do
		local rtype, rttl, rdlen
		_, pos = decode_name(msg, pos)
		rtype, _, rttl, rdlen, pos = sunpack(">I2I2I4I2", msg, pos)
		if pos + rdlen - 1 > #msg then
			error "truncated record"
		end
		local family, text
		if rtype == QTYPE_A and rdlen == 4 then
			family = QTYPE_A
			text = sformat("%d.%d.%d.%d", sbyte(msg, pos, pos + 3))
		elseif rtype == QTYPE_AAAA and rdlen == 16 then
			family = QTYPE_AAAA
			text = ipv6_text(ssub(msg, pos, pos + 15))
		end
		if family then
			local ips = r[family] or {}
			r[family] = ips
			ips[#ips + 1] = text
			ttl = math.min(ttl or rttl, rttl)
		end
		pos = pos + rdlen
	end
	return r, ttl
end

dns.wire = { encode_query = encode_query, decode_answer = decode_answer }

local function on_datagram(msg)
	if #msg < 12 then
		log "Recv an invalid package when dns query"
		return
	end
	local ok, r, ttl = pcall(decode_answer, msg)
	if not ok then
		log("Recv an invalid package when dns query: %s", tostring(r))
		return
	end
	for _, family in ipairs { QTYPE_A, QTYPE_AAAA } do
		if r[family] then
			cache_put(family, r.qname, r[family], ttl)
		end
	end
	local q = pending[r.id]
	if q == nil then
		return
	end
	if q.name ~= r.qname or q.qtype ~= r.qtype then
		log "Recv an invalid name when dns query"
		return
	end
	pending[r.id] = nil
	q.answer = r
	skynet.wakeup(q)
end

---------------------------------------------------------------- sockets

local function close_idle()
	local now = skynet.now()
	local open = false
	for i, link in pairs(links) do
		if next(pending) == nil and now - link.used >= IDLE_CLOSE_CS then
			links[i] = nil
			socket.close(link.id)
			skynet.error(sformat("Udp server close %s:%d (%d)", link.ip, link.port, link.id))
		else
			open = true
		end
	end
	if open then
		skynet.timeout(IDLE_CLOSE_CS, close_idle)
	end
end

local function link_of(i)
	local link = links[i]
	if link == nil then
		local srv = servers[i]
		local id = socket.udp_dial(srv[1], srv[2], on_datagram)
		link = { id = id, ip = srv[1], port = srv[2] }
		skynet.error(sformat("Udp server open %s:%d (%d)", srv[1], srv[2], id))
		if next(links) == nil then
			skynet.timeout(IDLE_CLOSE_CS, close_idle)
		end
		links[i] = link
	end
	link.used = skynet.now()
	return link
end

local function close_links()
	for i, link in pairs(links) do
		links[i] = nil
		socket.close(link.id)
	end
end

function dns.server(ip, port)
	local sched
	if ip == nil then
		servers, sched = parse_resolv_conf()
	else
		servers = { { ip, port or 53 } }
	end
	schedule = sched
	close_links() -- the next query opens a socket to the new server
end

---------------------------------------------------------------- queries

local function alloc_id()
	for _ = 1, 65535 do
		local id = next_id
		next_id = id == 65535 and 1 or id + 1
		if pending[id] == nil then
			return id
		end
	end
	error("dns: too many queries in flight", 0)
end

-- Sends the query and waits; returns the ips, or nil, reason.
local function query(name, qtype)
	if servers == nil then
		dns.server()
	end
	if #servers == 0 then
		error("Call dns.server first", 0)
	end
	local id = alloc_id()
	local q = { name = name, qtype = qtype }
	pending[id] = q
	local packet = encode_query(id, name, qtype)
	local deadline = skynet.now() + QUERY_TIMEOUT_CS
	local attempt, wait_cs = 0, FIRST_RETRY_CS
	while q.answer == nil do
		local now = skynet.now()
		local left = deadline - now
		if schedule then
			left = schedule[attempt + 1] and math.huge or 0
		end
		if left <= 0 then
			break
		end
		local link = link_of(attempt % #servers + 1)
		socket.write(link.id, packet)
		attempt = attempt + 1
		local ti = schedule and schedule[attempt] or math.min(wait_cs, left)
		wait_cs = wait_cs * 2
		skynet.sleep(ti, q)
	end
	if pending[id] == q then
		pending[id] = nil
	end
	local r = q.answer
	if r == nil then
		skynet.error(sformat("DNS query %s timeout", name))
		return nil
	end
	return r[qtype]
end

local function valid_name(name)
	if #name > MAX_NAME or not name:match "^[a-z0-9%-_%.]+$" then
		return false
	end
	for label in (name .. "."):gmatch "([^%.]*)%." do
		if #label == 0 or #label > 63 then
			return false
		end
	end
	return true
end

function dns.resolve(name, ipv6)
	if type(name) ~= "string" then
		error("dns.resolve: name must be a string (" .. tostring(name) .. ")", 2)
	end
	name = name:lower()
	if name:match "^[%d%.]+$" or name:find(":", 1, true) then
		return name
	end
	name = name:gsub("%.$", "")
	if not valid_name(name) then
		return nil, "illegal name"
	end
	local family = ipv6 and QTYPE_AAAA or QTYPE_A
	if hosts == nil then
		hosts = parse_hosts()
	end
	local h = hosts[name]
	if h and h[family] then
		return h[family][1], h[family]
	end
	local entry = cache[family][name]
	if entry and entry.expire > skynet.now() then
		return entry.ips[1], entry.ips
	end
	local ips = query(name, family)
	if ips and #ips > 0 then
		return ips[1], ips
	end
	entry = cache[family][name]
	if entry then
		return entry.ips[1], entry.ips
	end
	error "timeout or no answer"
end

return dns
