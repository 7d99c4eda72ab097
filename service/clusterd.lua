-- clusterd: the node's cluster coordinator (one per node, a unique service
-- started by require "skynet.cluster").
--
-- State:
--   nodes      node name -> "host:port" | "[v6]:port" | false (known down);
--              a name that is absent has no entry. Filled from the file the
--              config key `cluster` names and by reload, entries merge and
--              are never deleted.
--   options    the `__name` keys of the node table (OPTION below).
--   senders    node name -> its clustersender (created on first use, kept).
--   creating   node name -> tokens waiting while its sender starts.
--   waiters    node name -> set of tokens of `sender` requests waiting for an
--              absent node to be defined (bounded by __waittime).
--   names      the cluster registry: "name" -> handle and handle -> "name".
--   proxies    "node.address" -> clusterproxy handle (kept).
--   listeners  listen socket id -> { count, maxclient }; agents: agent -> id.
--              Accepted and refused connections are logged through one
--              skynet.loglimit limiter (a connect loop must not flood the log).
--   exited     agents whose agentexit came before their newservice returned
--              (a peer that connects and leaves at once): accept settles
--              them. An agent that fails in its start function sends no
--              agentexit (newservice fails or returns nil, and accept
--              counts it out), so every entry here is taken by accept.
--
-- Commands (lua protocol; each one answers):
--   sender(node) -> handle | nil, reason    resolve (waiting for an absent
--       node unless __nowaiting, at most __waittime), create the sender,
--       connect it once. A sender of a node set to false is returned as is
--       (it fails its requests at once); with no sender, nil, "... is down".
--   senders() -> { node = handle }
--   reload(tbl | nil)     merge a table, or the file again (no argument)
--   listen(host, port, maxclient) -> host, port | listen(name) -> name
--   proxy(node, address | nil) -> handle   register(name, handle)
--   unregister(name)      queryname(name) -> handle | nil
--   options() -> table    agentexit() (from an agent, sent)
local skynet = require "skynet"
local socket = require "skynet.socket"
local core = require "skynet.cluster.core"
local loglimit = require "skynet.loglimit"

local sformat = string.format

local config_file = skynet.getenv "cluster"
local nodename = core.nodename()

local nodes = {}
local senders = {}
local creating = {}
local waiters = {}
local names = {}
local proxies = {}
local proxy_creating = {}
local listeners = {}
local agents = {}
local exited = {}
local log = loglimit.new() -- the lines each incoming connection causes

-- Options of the node table (`__key = value`), their defaults and checks.
-- Times are seconds (fractions allowed), sizes bytes.
local options = {
	nowaiting = false, -- absent nodes fail at once instead of waiting
	waittime = 30, -- seconds an absent node is waited for; false: forever
	connecttimeout = 5, -- seconds one connection attempt may take
	heartbeat = 1, -- silence (s) with calls waiting before a probe; false: no probes
	deadtime = 10, -- silence (s) with calls waiting before the connection is dropped
	calltimeout = 10, -- seconds a call waits for its answer; false: no limit
	maxmessage = 16 * 1024 * 1024, -- largest reassembled multi-part message (bytes)
	maxpending = 1024, -- requests in flight per incoming connection before reading pauses
}

local function positive(v)
	return type(v) == "number" and v > 0 and v == v and v < math.huge
end

local function positive_or_false(v)
	return v == false or positive(v)
end

local OPTION = {
	nowaiting = function(v)
		return type(v) == "boolean"
	end,
	waittime = function(v)
		return v == false or (type(v) == "number" and v >= 0 and v < math.huge)
	end,
	connecttimeout = positive,
	heartbeat = positive_or_false,
	deadtime = positive,
	calltimeout = positive_or_false,
	maxmessage = function(v)
		return math.type(v) == "integer" and v >= 0x8000
	end,
	maxpending = function(v)
		return math.type(v) == "integer" and v >= 1
	end,
}

-- "host:port" (split at the first ':') or "[v6]:port": host, port; or nil.
local function parse_address(addr)
	local host, port = addr:match "^%[(.+)%]:(%d+)$"
	if host == nil then
		host, port = addr:match "^([^:]+):(%d+)$"
	end
	if host == nil then
		return nil
	end
	return host, tonumber(port)
end

local function load_file()
	if config_file == nil then
		return {}
	end
	local env = {}
	local f, err = loadfile(config_file, "t", env)
	if f == nil then
		error(sformat("clusterd: can't load the node table: %s", err), 0)
	end
	f()
	return env
end

-- Raises on the first bad entry, so a bad table changes nothing.
local function check_table(tbl)
	for k, v in pairs(tbl) do
		if type(k) ~= "string" then
			error(sformat("clusterd: node names are strings (%s)", tostring(k)), 0)
		end
		local opt = k:match "^__(.*)$"
		if opt then
			local check = OPTION[opt]
			if check == nil then
				error(sformat("clusterd: unknown option %s", k), 0)
			end
			if not check(v) then
				error(sformat("clusterd: bad value for option %s (%s)", k, tostring(v)), 0)
			end
		elseif v ~= false and (type(v) ~= "string" or parse_address(v) == nil) then
			error(sformat('clusterd: node [%s] must be "host:port" or false, got %s', k,
				type(v) == "string" and v or type(v)), 0)
		end
	end
end

local function wake_all(set)
	for token in pairs(set) do
		skynet.wakeup(token)
	end
end

local function broadcast_options()
	for _, s in pairs(senders) do
		skynet.send(s, "lua", "options", options)
	end
	for agent in pairs(agents) do
		skynet.send(agent, "lua", "options", options)
	end
end

local function apply(tbl)
	check_table(tbl)
	local opts_changed = false
	local keys = {}
	for k in pairs(tbl) do
		keys[#keys + 1] = k
	end
	table.sort(keys)
	for _, k in ipairs(keys) do
		local opt = k:match "^__(.*)$"
		if opt then
			local v = tbl[k]
			skynet.error(sformat("Config %s = %s", opt, tostring(v)))
			if options[opt] ~= v then
				options[opt] = v
				opts_changed = true
			end
		end
	end
	for k, v in pairs(tbl) do
		if k:sub(1, 2) ~= "__" and nodes[k] ~= v then
			nodes[k] = v
			local s = senders[k]
			if s then
				skynet.send(s, "lua", "changenode", v) -- re-targeted in the background
			end
			local w = waiters[k]
			if w then
				skynet.error(sformat("Cluster node [%s] resolved : %s", k, tostring(v)))
				wake_all(w)
			end
		end
	end
	if opts_changed then
		if options.nowaiting then
			for _, w in pairs(waiters) do
				wake_all(w)
			end
		end
		broadcast_options()
	end
end

-- The address of node, waiting for an absent one; nil, reason when absent.
local function wait_node(node)
	local addr = nodes[node]
	if addr ~= nil then
		return addr
	end
	local deadline
	if not options.nowaiting then
		skynet.error(sformat("Waiting for cluster node [%s]", node))
	end
	while not options.nowaiting do
		local wt = options.waittime
		local token = {}
		local w = waiters[node]
		if w == nil then
			w = {}
			waiters[node] = w
		end
		w[token] = true
		if wt then
			deadline = deadline or skynet.now() + math.ceil(wt * 100)
			local left = deadline - skynet.now()
			if left > 0 then
				skynet.sleep(left, token)
			end
		else
			skynet.wait(token)
		end
		w[token] = nil
		if next(w) == nil then
			waiters[node] = nil
		end
		addr = nodes[node]
		if addr ~= nil then
			return addr
		end
		if deadline and skynet.now() >= deadline then
			break
		end
	end
	skynet.error(sformat("cluster node [%s] is absent.", node))
	if options.nowaiting then
		return nil, sformat("cluster node [%s] is absent", node)
	end
	return nil, sformat("cluster node [%s] is absent (waited %s s)", node, tostring(options.waittime))
end

local function create_sender(node, addr)
	local c = creating[node]
	if c then
		local token = {}
		c[#c + 1] = token
		skynet.wait(token)
		return senders[node]
	end
	c = {}
	creating[node] = c
	local ok, s = pcall(skynet.newservice, "clustersender", node, nodename, addr)
	if ok and s then
		senders[node] = s
		skynet.call(s, "lua", "options", options)
		if nodes[node] ~= addr then
			skynet.send(s, "lua", "changenode", nodes[node])
		end
	else
		skynet.error(sformat("clusterd: can't start the sender of [%s]: %s", node, tostring(s)))
	end
	creating[node] = nil
	for _, token in ipairs(c) do
		skynet.wakeup(token)
	end
	return senders[node]
end

local CMD = {}

function CMD.sender(node)
	if type(node) ~= "string" then
		return nil, sformat("cluster node name must be a string (%s)", tostring(node))
	end
	while true do
		local addr, err = wait_node(node)
		if addr == nil then
			return nil, err
		end
		local s = senders[node]
		if addr == false then
			if s then
				return s
			end
			return nil, sformat("cluster node [%s] is down", node)
		end
		s = s or create_sender(node, addr)
		if s == nil then
			return nil, sformat("cluster node [%s]: can't start its sender", node)
		end
		local ok, reason = skynet.call(s, "lua", "connect")
		if ok then
			return s
		end
		if nodes[node] == addr then
			skynet.error(sformat("changenode [%s] (%s) failed: %s", node, addr, tostring(reason)))
			return nil, sformat("cluster node [%s] (%s): %s", node, addr, tostring(reason))
		end
		-- the address changed while connecting: try the new one
	end
end

function CMD.senders()
	return senders
end

function CMD.reload(tbl)
	if tbl ~= nil and type(tbl) ~= "table" then
		error(sformat("clusterd.reload: table expected (%s)", type(tbl)), 0)
	end
	apply(tbl or load_file())
end

function CMD.options()
	return options
end

local function accept(lid, fd, peer)
	local l = listeners[lid]
	if l.count >= l.maxclient then
		log("clusterd: refuse %s: %d connections already (maxclient)", peer, l.count)
		socket.close_fd(fd)
		return
	end
	l.count = l.count + 1
	log("socket accept from %s", peer)
	local ok, agent = pcall(skynet.newservice, "clusteragent", skynet.self(), fd, peer)
	if not ok or agent == nil then
		l.count = l.count - 1
		log("clusterd: can't start an agent for %s: %s", peer, tostring(agent))
		socket.close_fd(fd)
		return
	end
	if exited[agent] then -- it served its connection and left already
		exited[agent] = nil
		l.count = l.count - 1
		return
	end
	agents[agent] = lid
end

local function listen(host, port, maxclient)
	if maxclient ~= nil and (math.type(maxclient) ~= "integer" or maxclient < 1) then
		error(sformat("cluster.open: bad maxclient (%s)", tostring(maxclient)), 0)
	end
	local id, addr, real_port = socket.listen(host, port)
	listeners[id] = { count = 0, maxclient = maxclient or 1024 }
	socket.start(id, function(fd, peer)
		accept(id, fd, peer)
	end)
	skynet.error(sformat("cluster listen %s:%d", addr or host, real_port or port))
	return addr or host, real_port or port
end

function CMD.listen(addr, port, maxclient)
	if port == nil then
		local a = nodes[addr]
		if not a then
			error(sformat("%s is down", tostring(addr)), 0)
		end
		local host, p = parse_address(a)
		listen(host, p, maxclient)
		return addr, nil
	end
	return listen(addr, port, maxclient)
end

function CMD.agentexit(source)
	local lid = agents[source]
	if lid == nil then -- before accept knows it: accept settles the count
		exited[source] = true
		return
	end
	agents[source] = nil
	local l = listeners[lid]
	if l then
		l.count = l.count - 1
	end
end

function CMD.proxy(node, name)
	if name == nil then
		local n, a = tostring(node):match "^(.-)([@.].*)$"
		if n == nil or n == "" then
			error(sformat("Invalid name %s", tostring(node)), 0)
		end
		node, name = n, a
	end
	local key = node .. "." .. tostring(name)
	local p = proxies[key]
	if p then
		return p
	end
	local c = proxy_creating[key]
	if c then
		local token = {}
		c[#c + 1] = token
		skynet.wait(token)
		return proxies[key] or error(sformat("clusterd: proxy %s failed", key), 0)
	end
	c = {}
	proxy_creating[key] = c
	local s, err = CMD.sender(node)
	local ok, h
	if s then
		ok, h = pcall(skynet.newservice, "clusterproxy", node, name, s)
	else
		ok, h = false, err
	end
	proxy_creating[key] = nil
	if ok and h then
		proxies[key] = h
	end
	for _, token in ipairs(c) do
		skynet.wakeup(token)
	end
	if not (ok and h) then
		error(sformat("clusterd: proxy %s failed: %s", key, tostring(h)), 0)
	end
	return h
end

local function flush_names()
	for agent in pairs(agents) do
		skynet.send(agent, "lua", "namechange")
	end
end

function CMD.register(name, addr)
	if type(name) ~= "string" or math.type(addr) ~= "integer" then
		error("cluster.register: name must be a string and address an integer", 0)
	end
	if names[name] ~= nil then
		error(sformat("cluster.register: name %s is already registered", name), 0)
	end
	local old = names[addr]
	if old then
		names[old] = nil
	end
	names[addr] = name
	names[name] = addr
	skynet.error(sformat("Register cluster name %s : %s", name, skynet.address(addr)))
	if old then
		flush_names()
	end
end

function CMD.unregister(name)
	if type(name) ~= "string" then
		error("cluster.unregister: name must be a string", 0)
	end
	local addr = names[name]
	if addr == nil then
		return
	end
	names[name] = nil
	names[addr] = nil
	skynet.error(sformat("Unregister cluster name %s : %s", name, skynet.address(addr)))
	flush_names()
end

function CMD.queryname(name)
	local h = type(name) == "string" and names[name] or nil
	return h
end

skynet.start(function()
	apply(load_file())
	skynet.dispatch("lua", function(session, source, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			error(sformat("clusterd: unknown command (%s)", tostring(cmd)))
		end
		if cmd == "agentexit" then
			return f(source)
		end
		if session == 0 then
			f(...)
		else
			skynet.retpack(f(...))
		end
	end)
end)
