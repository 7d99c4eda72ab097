-- skynet.reminder.redis: the reminder store on a Redis server, shared by
-- the nodes that name it (reminder_store = "redis://[:PASSWORD@]HOST:PORT/DB"),
-- used by service/reminderd.lua only. Every call blocks the calling
-- coroutine on the skynet.db.redis connection (a socket: no worker waits).
--
-- Keys (NS = "skynet:reminder"):
--   NS:r:KEY   a hash: the record's fields, and owner (the node holding it)
--   NS:at      zset KEY -> at: pending records nobody holds
--   NS:claim   zset KEY -> lease end: pending records a node holds in
--              memory; a claim lasts until max(at, now) + lease
--   NS:dead    zset KEY -> time of death: dead letters
--   NS:keys    zset of every KEY, score 0 (listing by prefix)
-- A pending record is in exactly one of NS:at and NS:claim. Each change is
-- one Lua script (EVAL), so it is atomic on the server.
--
-- Exactly one firing node: a node delivers a run only after begin() found
-- the record still of the same gen, owned by it, and extended its claim
-- (another node may take it only once the claim has expired). load()
-- first returns expired claims to NS:at (their node died, or let go),
-- then claims pending records with at < hi. So when a node dies, another
-- fires its runs once their lease has passed (a live node polls every
-- POLL_S). A run whose delivery outlasts its lease may be delivered twice:
-- at least once.
local redis = require "skynet.db.redis"
local skynet = require "skynet"
local core = require "skynet.core"

local M = {}
local store = {}
store.__index = store

local NS <const> = "skynet:reminder"
local POLL_S <const> = 1
local FIELDS <const> = { "key", "due", "at", "target", "payload", "every", "cron", "tz", "misfire", "attempt",
	"run", "missed", "gen", "state", "error" }
local NUMBERS <const> = { due = true, at = true, every = true, attempt = true, run = true, missed = true }
local INTEGERS <const> = { attempt = true, run = true, missed = true }

-- ARGV: key, gen ("" : any), state, at, claim end ("" : none), owner, then
-- field/value pairs to write (none: delete the record). Returns 1, or 0
-- when the stored gen differs.
local WRITE <const> = [[
local ns, key, gen = KEYS[1], ARGV[1], ARGV[2]
local h = ns .. ':r:' .. key
if gen ~= '' and redis.call('HGET', h, 'gen') ~= gen then return 0 end
redis.call('ZREM', ns .. ':at', key)
redis.call('ZREM', ns .. ':claim', key)
redis.call('ZREM', ns .. ':dead', key)
if #ARGV <= 6 then
  redis.call('DEL', h)
  redis.call('ZREM', ns .. ':keys', key)
  return 1
end
if gen == '' then redis.call('DEL', h) end
redis.call('HSET', h, unpack(ARGV, 7))
redis.call('ZADD', ns .. ':keys', 0, key)
if ARGV[3] == 'dead' then
  redis.call('ZADD', ns .. ':dead', ARGV[4], key)
  redis.call('HDEL', h, 'owner')
elseif ARGV[5] ~= '' then
  redis.call('ZADD', ns .. ':claim', ARGV[5], key)
  redis.call('HSET', h, 'owner', ARGV[6])
else
  redis.call('ZADD', ns .. ':at', ARGV[4], key)
  redis.call('HDEL', h, 'owner')
end
return 1
]]

-- ARGV: now, hi, limit, lease, owner. Returns the hashes claimed.
local LOAD <const> = [[
local ns, now, hi, limit, lease, owner = KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local expired = redis.call('ZRANGEBYSCORE', ns .. ':claim', '-inf', '(' .. ARGV[1], 'LIMIT', 0, limit)
for _, k in ipairs(expired) do
  redis.call('ZREM', ns .. ':claim', k)
  redis.call('ZADD', ns .. ':at', redis.call('HGET', ns .. ':r:' .. k, 'at'), k)
end
local out = {}
local ks = redis.call('ZRANGEBYSCORE', ns .. ':at', '-inf', '(' .. hi, 'WITHSCORES', 'LIMIT', 0, limit)
for i = 1, #ks, 2 do
  local k, at = ks[i], tonumber(ks[i + 1])
  redis.call('ZREM', ns .. ':at', k)
  redis.call('ZADD', ns .. ':claim', math.max(at, now) + lease, k)
  redis.call('HSET', ns .. ':r:' .. k, 'owner', owner)
  out[#out + 1] = redis.call('HGETALL', ns .. ':r:' .. k)
end
return out
]]

-- ARGV: key, gen, owner, claim end. 1 when the record is still this gen
-- and claimed by owner (the claim is extended), else 0.
local BEGIN <const> = [[
local ns, key = KEYS[1], ARGV[1]
local h = ns .. ':r:' .. key
local v = redis.call('HMGET', h, 'gen', 'owner', 'state')
if v[1] ~= ARGV[2] or v[2] ~= ARGV[3] or v[3] ~= 'pending' then return 0 end
if not redis.call('ZSCORE', ns .. ':claim', key) then return 0 end
redis.call('ZADD', ns .. ':claim', ARGV[4], key)
return 1
]]

local function parse(spec)
	local auth, host, port, db = spec:match "^redis://:?([^@/]*)@([^:/]+):?(%d*)/?(%d*)$"
	if not host then
		host, port, db = spec:match "^redis://([^:/@]+):?(%d*)/?(%d*)$"
	end
	if not host then
		error(string.format("reminder store %q: expected redis://[:PASSWORD@]HOST:PORT/DB", spec), 0)
	end
	return {
		host = host, port = tonumber(port) or 6379, db = tonumber(db) or 0,
		auth = auth ~= "" and auth or nil, timeout = 500,
	}
end

-- "redis://..." -> store; raises when the server cannot be reached.
function M.open(spec, opts)
	local conf = parse(spec)
	local ok, db = pcall(redis.connect, conf)
	if not ok then
		error(string.format("reminder store %s: cannot connect (%s)", spec, tostring(db)), 0)
	end
	return setmetatable({
		db = db, name = spec, poll = POLL_S, lease = opts.lease or 10,
		owner = string.format("%x.%x.%x", math.floor(core.walltime() * 1e6), skynet.self(),
			math.random(0, 0x7fffffff)),
	}, store)
end

local function record(list)
	if list == nil or #list == 0 then
		return nil
	end
	local r = {}
	for i = 1, #list, 2 do
		local k, v = list[i], list[i + 1]
		if NUMBERS[k] then
			v = INTEGERS[k] and math.tointeger(tonumber(v)) or tonumber(v)
		elseif k == "error" and v == "" then
			v = nil
		end
		r[k] = v
	end
	return r
end

-- Runs WRITE for r (gen "" : replace whatever is stored); hold: claim it.
local function write(self, r, gen, hold)
	local args = { WRITE, 1, NS, r.key, gen, r.state, r.at, "", self.owner }
	if hold and r.state == "pending" then
		args[8] = math.max(r.at, core.walltime()) + self.lease
	end
	for _, f in ipairs(FIELDS) do
		local v = r[f]
		if v ~= nil then
			args[#args + 1] = f
			args[#args + 1] = v
		end
	end
	args.n = #args
	return self.db:eval(args) == 1
end

function store:put(r, hold)
	write(self, r, "", hold)
end

function store:delete(key)
	local existed = self.db:exists(NS .. ":r:" .. key)
	self.db:eval(WRITE, 1, NS, key, "", "pending", 0, "", self.owner)
	return existed
end

function store:get(key)
	return record(self.db:hgetall(NS .. ":r:" .. key))
end

local function fetch(self, keys)
	if #keys == 0 then
		return {}
	end
	local ops = {}
	for i, k in ipairs(keys) do
		ops[i] = { "hgetall", NS .. ":r:" .. k }
	end
	local out = {}
	for _, r in ipairs(self.db:pipeline(ops, {})) do
		local rec = r.ok and record(r.out)
		if rec then
			out[#out + 1] = rec
		end
	end
	return out
end

function store:list(prefix, limit)
	local keys = self.db:zrangebylex(NS .. ":keys", "[" .. prefix, "+", "LIMIT", 0, limit)
	local n = 0
	for i, k in ipairs(keys) do
		if k:sub(1, #prefix) ~= prefix then
			break
		end
		n = i
	end
	return fetch(self, table.move(keys, 1, n, 1, {}))
end

-- Claims the pending records with at < hi (after_at, after_key unused: a
-- claimed record leaves NS:at, so each call takes the next ones).
function store:load(_, _, hi, limit)
	local out = self.db:eval(LOAD, 1, NS, core.walltime(), hi, limit, self.lease, self.owner)
	for i, list in ipairs(out) do
		out[i] = record(list)
	end
	return out
end

-- Redis is polled (other nodes write too): no earliest time to sleep until.
-- Called as store:next_at(); the store itself is not needed.
function store.next_at()
	return nil
end

function store:begin(r)
	return self.db:eval(BEGIN, 1, NS, r.key, r.gen, self.owner, math.max(r.at, core.walltime()) + self.lease) == 1
end

function store:ack(r, upd, hold)
	if upd == nil then
		return self.db:eval(WRITE, 1, NS, r.key, r.gen, "pending", 0, "", self.owner) == 1
	end
	local nxt = setmetatable({ due = upd.due, at = upd.at, run = upd.run, attempt = 0, missed = 0, error = "" },
		{ __index = r })
	return write(self, nxt, r.gen, hold)
end

function store:update(r, hold)
	return write(self, setmetatable({ error = r.error or "" }, { __index = r }), r.gen, hold)
end

function store:stats()
	local r = self.db:pipeline({
		{ "zcard", NS .. ":at" }, { "zcard", NS .. ":claim" }, { "zcard", NS .. ":dead" },
		{ "zrange", NS .. ":at", 0, 0, "WITHSCORES" },
	}, {})
	local first = r[4].out
	return {
		pending = r[1].out + r[2].out, dead = r[3].out,
		next_due = first and first[2] and tonumber(first[2]) or nil,
	}
end

function store:dead(limit)
	return fetch(self, self.db:zrange(NS .. ":dead", 0, limit - 1))
end

function store:close()
	self.db:disconnect()
end

return M
