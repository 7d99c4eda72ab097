-- skynet.db.redis: a Redis client (RESP2) over an order-mode socketchannel,
-- and redis.watch, a subscriber on a connection of its own.
--
-- Commands: any method name not defined here becomes a command sent with
-- the upper-cased name (the function is built once per name and cached in
-- `command_cache` for the service). Requests are RESP arrays of bulk
-- strings; several coroutines share one connection and their replies are
-- matched in call order by the channel.
--
-- Replies (read_reply): status -> string, error -> raised text, integer ->
-- integer, bulk -> string, nil bulk / nil array -> nil, array -> table
-- (nil holes kept), nested arrays -> nested tables; an array holding an
-- error element is raised as the whole table. Anything else (RESP3 types,
-- a bad length, a missing CRLF, nesting deeper than MAX_DEPTH) raises a
-- "redis: ..." text inside the channel's reader, which drops the
-- connection and fails every waiting caller: the stream position is lost.
--
-- A nil argument raises locally ("redis: nil argument #n"): Redis answers
-- a nil bulk in a request by closing the connection.
local sc = require "skynet.socketchannel"

local sbyte = string.byte
local ssub = string.sub
local sformat = string.format
local tconcat = table.concat
local tostring = tostring
local tonumber = tonumber
local select = select
local type = type

local redis = {}

local MAX_DEPTH <const> = 64

---------------------------------------------------------------- replies

local read_value

local function read_array(sock, n, depth)
	if depth > MAX_DEPTH then
		error(sformat("redis: arrays nested deeper than %d", MAX_DEPTH), 0)
	end
	local t, ok = {}, true
	for i = 1, n do
		local vok, v = read_value(sock, depth + 1)
		if not vok then
			ok = false
		end
		t[i] = v
	end
	return ok, t
end

local function length(line, what)
	local n = tonumber(ssub(line, 2))
	if n == nil or math.type(n) ~= "integer" or n < -1 then
		error(sformat("redis: bad %s length (%q)", what, ssub(line, 1, 64)), 0)
	end
	return n
end

-- Returns ok, value: ok is false for an error reply (value = its text) or
-- an array holding one.
function read_value(sock, depth)
	local line = sock:readline "\r\n"
	local kind = sbyte(line, 1)
	if kind == 43 then -- '+' status
		return true, ssub(line, 2)
	elseif kind == 45 then -- '-' error
		return false, ssub(line, 2)
	elseif kind == 58 then -- ':' integer
		local n = tonumber(ssub(line, 2))
		if n == nil then
			error(sformat("redis: bad integer (%q)", ssub(line, 1, 64)), 0)
		end
		return true, n
	elseif kind == 36 then -- '$' bulk
		local n = length(line, "bulk")
		if n < 0 then
			return true, nil
		end
		local data = sock:read(n + 2)
		if ssub(data, -2) ~= "\r\n" then
			error("redis: bulk string not ended by CRLF", 0)
		end
		return true, ssub(data, 1, n)
	elseif kind == 42 then -- '*' array
		local n = length(line, "array")
		if n < 0 then
			return true, nil
		end
		return read_array(sock, n, depth)
	end
	error(sformat("redis: unsupported reply type (%q)", ssub(line, 1, 64)), 0)
end

-- The reply reader used as the channel's response function; exported for
-- the decoder tests (sock: anything with read(n) and readline(sep)).
function redis.read_reply(sock)
	return read_value(sock, 1)
end

local read_reply = redis.read_reply

-- exists / sismember: true when the integer reply is not 0. An error reply
-- raises the value true (kept from the reference library).
local function read_boolean(sock)
	local ok, v = read_value(sock, 1)
	if ok then
		return true, v ~= 0
	end
	return false, true
end

---------------------------------------------------------------- requests

local function bulk(v)
	local s = tostring(v)
	return sformat("$%d\r\n%s\r\n", #s, s)
end

-- The RESP request for name with args[1..n].
local function compose(name, args, n)
	local parts = { sformat("*%d\r\n", n + 1), bulk(name) }
	for i = 1, n do
		local v = args[i]
		if v == nil then
			error(sformat("redis: nil argument #%d", i), 3)
		end
		parts[i + 2] = bulk(v)
	end
	return tconcat(parts)
end

-- The arguments of a command method: none, a table (t.n or #t), or a list.
local function pack_args(first, ...)
	if first == nil then
		return {}, 0
	elseif type(first) == "table" and select("#", ...) == 0 then
		return first, first.n or #first
	end
	local n = select("#", ...) + 1
	return { first, ... }, n
end

local command_cache = {}

local command = {}
local meta = {
	__index = function(_, name)
		local f = command_cache[name]
		if f == nil then
			local upper = name:upper()
			f = function(db, ...)
				local args, n = pack_args(...)
				return db[1]:request(compose(upper, args, n), read_reply)
			end
			command_cache[name] = f
		end
		return f
	end,
}

local function with_auth(conf)
	return function(ch)
		if conf.auth then
			local req
			if conf.username then
				req = compose("AUTH", { conf.username, conf.auth }, 2)
			else
				req = compose("AUTH", { conf.auth }, 1)
			end
			ch:request(req, read_reply)
		end
		if conf.db then
			ch:request(compose("SELECT", { conf.db }, 1), read_reply)
		end
	end
end

local function new_channel(conf, auth)
	if type(conf) ~= "table" or conf.host == nil then
		error("redis.connect: conf.host is required", 3)
	end
	return sc.channel {
		host = conf.host,
		port = conf.port or 6379,
		auth = auth,
		nodelay = true,
		overload = conf.overload,
		timeout = conf.timeout,
	}
end

function redis.connect(conf)
	local ch = new_channel(conf, with_auth(conf))
	ch:connect(true)
	return setmetatable({ ch }, meta)
end

function command:disconnect()
	self[1]:close()
	setmetatable(self, nil)
end

function command:exists(key)
	local args, n
	if type(key) == "table" then
		args, n = key, key.n or #key
	else
		args, n = { key }, 1
	end
	return self[1]:request(compose("EXISTS", args, n), read_boolean)
end

function command:sismember(key, member)
	return self[1]:request(compose("SISMEMBER", { key, member }, 2), read_boolean)
end

-- The request of one pipeline entry {cmd, arg1, ...} (arguments up to the
-- first nil; the name is sent as given).
local function compose_op(op)
	local parts = {}
	for i, v in ipairs(op) do
		parts[i] = bulk(v)
	end
	return sformat("*%d\r\n", #parts) .. tconcat(parts)
end

function command:pipeline(ops, resp)
	if type(ops) ~= "table" or #ops == 0 then
		error("pipeline is null", 2)
	end
	local reqs = {}
	for i = 1, #ops do
		reqs[i] = compose_op(ops[i])
	end
	local n = #ops
	local reader
	if resp then
		reader = function(sock)
			for _ = 1, n do
				local ok, out = read_value(sock, 1)
				resp[#resp + 1] = { ok = ok, out = out }
			end
			return true, resp
		end
	else
		reader = function(sock)
			local ok, out
			for _ = 1, n do
				ok, out = read_value(sock, 1)
			end
			return ok, out
		end
	end
	return self[1]:request(reqs, reader)
end

for k, v in pairs(command) do
	command_cache[k] = v
end

---------------------------------------------------------------- watch

local watch = {}
local watch_meta = { __index = watch }

function redis.watch(conf)
	local w = { channels = {}, patterns = {} }
	local login = with_auth(conf)
	local ch = new_channel(conf, function(c)
		login(c)
		-- a reconnect subscribes again to every confirmed name
		for p in pairs(w.patterns) do
			c:request(compose("PSUBSCRIBE", { p }, 1))
		end
		for name in pairs(w.channels) do
			c:request(compose("SUBSCRIBE", { name }, 1))
		end
	end)
	w[1] = ch
	ch:connect(true)
	return setmetatable(w, watch_meta)
end

function watch:disconnect()
	self[1]:close()
	setmetatable(self, nil)
end

local function subscriber(cmd)
	return function(self, ...)
		for i = 1, select("#", ...) do
			local name = select(i, ...)
			self[1]:request(compose(cmd, { name }, 1))
		end
	end
end

watch.subscribe = subscriber "SUBSCRIBE"
watch.psubscribe = subscriber "PSUBSCRIBE"
watch.unsubscribe = subscriber "UNSUBSCRIBE"
watch.punsubscribe = subscriber "PUNSUBSCRIBE"

-- Waits for the next message: data, channel for a channel message; data,
-- channel, pattern for a pattern message. Confirmations update the
-- subscribed sets and are not returned.
function watch:message()
	local ch = self[1]
	while true do
		local reply = ch:response(read_reply)
		if type(reply) == "table" then
			local kind = reply[1]
			if kind == "message" then
				return reply[3], reply[2]
			elseif kind == "pmessage" then
				return reply[4], reply[3], reply[2]
			elseif kind == "subscribe" then
				self.channels[reply[2]] = true
			elseif kind == "unsubscribe" and reply[2] then
				self.channels[reply[2]] = nil
			elseif kind == "psubscribe" then
				self.patterns[reply[2]] = true
			elseif kind == "punsubscribe" and reply[2] then
				self.patterns[reply[2]] = nil
			end
		end
	end
end

return redis
