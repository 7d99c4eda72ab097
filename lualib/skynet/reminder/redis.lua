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
-- one Lua script, so it is atomic on the server; scripts are sent once
-- (SCRIPT LOAD) and then run by their SHA1 (EVALSHA), again after a server
-- restart forgot them. Numbers are written with all their digits (%.17g).
-- Sets made while another batch is on its way go together in one script
-- (group commit, store:put_then): one request and one round trip per
-- batch, the records packed into one argument.
-- An acknowledgement or a retry is written only over the same gen and run
-- (a node whose lease lapsed cannot move back a run another node moved on).
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
local socketchannel = require "skynet.socketchannel"
local skynet = require "skynet"
local core = require "skynet.core"

local M = {}
local store = {}
store.__index = store

local NS <const> = "skynet:reminder"
local POLL_S <const> = 1
local TIMEOUT_CS <const> = 500 -- a request with no answer by then fails
-- Sets sent in one script at most (PUTS unpacks up to 2 x BATCH values at
-- once; the Lua of Redis takes about 8000).
local BATCH <const> = 256
local FIELDS <const> = { "key", "due", "at", "target", "payload", "every", "cron", "tz", "misfire", "attempt",
	"run", "missed", "gen", "state", "error" }
local NUMBERS <const> = { due = true, at = true, every = true, attempt = true, run = true, missed = true }
local INTEGERS <const> = { attempt = true, run = true, missed = true }

-- The record's fields come packed in one argument (pack_fields): name,
-- value, name, value ... each with a 4-byte big-endian length.
local UNPACK_FIELDS <const> = [[
local function unpack_fields(s)
  local out, p = {}, 1
  while p <= #s do
    local b1, b2, b3, b4 = string.byte(s, p, p + 3)
    local n = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    out[#out + 1] = string.sub(s, p + 4, p + 3 + n)
    p = p + 4 + n
  end
  return out
end
]]

-- ARGV: key, gen ("" : any), run ("" : any), state, at, claim end ("" :
-- none), owner, then the field/value pairs to write packed in one string
-- (pack_fields; absent: delete the record). Returns 1, or 0 when the
-- stored gen or run differs (the record was set again, or another node
-- moved it on after this node's lease lapsed) or, deleting, when there
-- was no record.
local WRITE <const> = UNPACK_FIELDS .. [[
local ns, key, gen, run = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
local h = ns .. ':r:' .. key
if gen ~= '' then
  local v = redis.call('HMGET', h, 'gen', 'run')
  if v[1] ~= gen or (run ~= '' and v[2] ~= run) then return 0 end
end
redis.call('ZREM', ns .. ':at', key)
redis.call('ZREM', ns .. ':claim', key)
redis.call('ZREM', ns .. ':dead', key)
if #ARGV <= 7 then
  redis.call('ZREM', ns .. ':keys', key)
  return redis.call('DEL', h)
end
if gen == '' then redis.call('DEL', h) end
redis.call('HSET', h, unpack(unpack_fields(ARGV[8])))
redis.call('ZADD', ns .. ':keys', 0, key)
if ARGV[4] == 'dead' then
  redis.call('ZADD', ns .. ':dead', ARGV[5], key)
  redis.call('HDEL', h, 'owner')
elseif ARGV[6] ~= '' then
  redis.call('ZADD', ns .. ':claim', ARGV[6], key)
  redis.call('HSET', h, 'owner', ARGV[7])
else
  redis.call('ZADD', ns .. ':at', ARGV[5], key)
  redis.call('HDEL', h, 'owner')
end
return 1
]]

-- A batch of new pending records (set), each replacing what its key held.
-- ARGV: owner, the record count, then the records packed in one string
-- (pack_put): per record key, due, at, claim end ("" : none), gen,
-- target, payload, misfire, every, cron, tz ("" : absent), each with a
-- 4-byte big-endian length, read in C by the struct library of Redis's
-- Lua. No key appears twice in a batch, so every step but HSET takes the
-- whole batch in one command: a set costs the server about one command
-- (HSET), where a command per step cost four.
local PUTS <const> = [[
local ns, owner, n, blob = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
local fmt = '>' .. string.rep('I4c0', 11)
local keys, hashes, records, scores, free, held = {}, {}, {}, {}, {}, {}
local p = 1
for i = 1, n do
  local key, due, at, claim, gen, target, payload, misfire, every, cron, tz
  key, due, at, claim, gen, target, payload, misfire, every, cron, tz, p = struct.unpack(fmt, blob, p)
  local h = ns .. ':r:' .. key
  local f = { h, 'key', key, 'due', due, 'at', at, 'target', target, 'payload', payload, 'misfire', misfire,
    'attempt', '0', 'run', '1', 'missed', '0', 'gen', gen, 'state', 'pending' }
  local m = 23
  if every ~= '' then f[m + 1], f[m + 2], m = 'every', every, m + 2 end
  if cron ~= '' then f[m + 1], f[m + 2], m = 'cron', cron, m + 2 end
  if tz ~= '' then f[m + 1], f[m + 2], m = 'tz', tz, m + 2 end
  if claim ~= '' then
    f[m + 1], f[m + 2] = 'owner', owner
    held[#held + 1], held[#held + 2] = claim, key
  else
    free[#free + 1], free[#free + 2] = at, key
  end
  keys[i], hashes[i], records[i] = key, h, f
  scores[2 * i - 1], scores[2 * i] = 0, key
end
redis.call('ZREM', ns .. ':at', unpack(keys))
redis.call('ZREM', ns .. ':claim', unpack(keys))
redis.call('ZREM', ns .. ':dead', unpack(keys))
redis.call('DEL', unpack(hashes))
for i = 1, n do
  redis.call('HSET', unpack(records[i]))
end
redis.call('ZADD', ns .. ':keys', unpack(scores))
if #held > 0 then redis.call('ZADD', ns .. ':claim', unpack(held)) end
if #free > 0 then redis.call('ZADD', ns .. ':at', unpack(free)) end
return 1
]]

-- ARGV: now, hi, limit, lease, owner. First returns the expired claims to
-- NS:at, then claims the free records with at < hi; returns their hashes.
local LOAD <const> = [[
local ns, now, hi, limit, lease, owner = KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local expired = redis.call('ZRANGEBYSCORE', ns .. ':claim', '-inf', '(' .. ARGV[1], 'LIMIT', 0, limit)
for _, k in ipairs(expired) do
  redis.call('ZREM', ns .. ':claim', k)
  local at = redis.call('HGET', ns .. ':r:' .. k, 'at')
  if at then redis.call('ZADD', ns .. ':at', at, k) end
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

-- ARGV: none. The counts and the earliest pending at (the free record
-- first by at, and the claimed record first by lease end: an estimate,
-- as claims are ordered by lease end).
local STATS <const> = [[
local ns = KEYS[1]
local first = redis.call('ZRANGE', ns .. ':at', 0, 0, 'WITHSCORES')
local next_at = first[2]
local held = redis.call('ZRANGE', ns .. ':claim', 0, 0)
if held[1] then
  local at = redis.call('HGET', ns .. ':r:' .. held[1], 'at')
  if at and (next_at == nil or tonumber(at) < tonumber(next_at)) then next_at = at end
end
return { redis.call('ZCARD', ns .. ':at') + redis.call('ZCARD', ns .. ':claim'),
  redis.call('ZCARD', ns .. ':dead'), next_at or '' }
]]

local SCRIPTS <const> = { write = WRITE, puts = PUTS, load = LOAD, begin = BEGIN, stats = STATS }

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
		auth = auth ~= "" and auth or nil, timeout = TIMEOUT_CS,
	}
end

-- A number as Redis should store it: floats with every digit (tostring
-- keeps 14, which moves an epoch time by up to 50 us: a run could fire
-- early on the node that loads it).
local function num(v)
	if math.type(v) == "float" then
		return string.format("%.17g", v)
	end
	return v
end

-- Raises err as "redis HOST:PORT: what" (a socket error says why in words).
local function failed(self, err)
	if err == socketchannel.error then
		err = string.format("no answer (connection refused, closed, or no reply within %g s)", TIMEOUT_CS / 100)
	end
	error(string.format("redis %s:%d: %s", self.host, self.port, tostring(err)), 0)
end

-- Runs the script named name by its SHA1, loading it first when the server
-- does not know it (at the first use, and after a restart).
local function script(self, name, ...)
	local db = self.db
	local sha = self.sha[name]
	local ok, r
	if sha then
		ok, r = pcall(db.evalsha, db, sha, 1, NS, ...)
		if ok then
			return r
		elseif type(r) ~= "string" or not r:find("NOSCRIPT", 1, true) then
			failed(self, r)
		end
	end
	ok, r = pcall(db.script, db, "LOAD", SCRIPTS[name])
	if not ok then
		failed(self, r)
	end
	self.sha[name] = r
	ok, r = pcall(db.evalsha, db, r, 1, NS, ...)
	if not ok then
		failed(self, r)
	end
	return r
end

-- Runs db[cmd](db, ...), raising its failure as failed() does.
local function call(self, cmd, ...)
	local db = self.db
	local ok, r = pcall(db[cmd], db, ...)
	if not ok then
		failed(self, r)
	end
	return r
end

-- "redis://..." -> store; raises when the server cannot be reached. The
-- store's name (in stats and errors) hides the password.
function M.open(spec, opts)
	local conf = parse(spec)
	local name = spec:gsub("^redis://:?[^@/]*@", "redis://:***@")
	local ok, db = pcall(redis.connect, conf)
	if not ok then
		-- the channel logs why a login failed (a wrong password, a bad db) on the line before
		local why = db == socketchannel.error and "refused, no answer, or the login failed" or tostring(db)
		error(string.format("reminder store %s: cannot connect (%s)", name, why), 0)
	end
	return setmetatable({
		db = db, name = name, host = conf.host, port = conf.port, sha = {}, poll = POLL_S, puts = {},
		lease = opts.lease or 10,
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

-- The fields of r as WRITE takes them: name, value, name, value
-- ... each with a 4-byte big-endian length (one argument instead of up to
-- 30: the client's encoding of each argument was most of the cost of a
-- set). due and at, mostly equal, are formatted once.
local PACK_FORMATS = {} -- pair count -> string.pack format
local function pack_fields(r)
	local list, n = {}, 0
	local due, at = num(r.due), r.at
	at = at == r.due and due or num(at)
	for _, f in ipairs(FIELDS) do
		local v = r[f]
		if v ~= nil then
			if f == "due" then
				v = due
			elseif f == "at" then
				v = at
			elseif math.type(v) == "float" then
				v = num(v)
			end
			list[n + 1], list[n + 2] = f, v
			n = n + 2
		end
	end
	local fmt = PACK_FORMATS[n]
	if fmt == nil then
		fmt = ">" .. string.rep("s4", n)
		PACK_FORMATS[n] = fmt
	end
	return string.pack(fmt, table.unpack(list, 1, n)), at
end

-- The claim end of r when this node holds it, else "".
local function claim_end(self, r, hold)
	if hold and r.state == "pending" then
		return num(math.max(r.at, core.walltime()) + self.lease)
	end
	return ""
end

-- Runs WRITE for r: gen "" replaces whatever is stored, else the stored
-- record must be of gen and of run expect_run; hold: claim it for this node.
local function write(self, r, gen, hold, expect_run)
	local fields, at = pack_fields(r)
	return script(self, "write", r.key, gen, expect_run or "", r.state, at, claim_end(self, r, hold), self.owner,
		fields) == 1
end

-- A new pending record as PUTS reads it (11 strings, each with its length).
local PUT_FORMAT <const> = ">" .. string.rep("s4", 11)
local function pack_put(r, claim)
	local due = num(r.due)
	local at = r.at == r.due and due or num(r.at)
	return string.pack(PUT_FORMAT, r.key, due, at, claim, r.gen, r.target, r.payload, r.misfire,
		r.every and num(r.every) or "", r.cron or "", r.tz or "")
end

-- The first n sets of batch as one PUTS: the count and the packed records.
-- A key set twice goes once, with its later record (where the earlier one
-- stood: the batch is one atomic script, so the order of keys is moot).
local function puts_args(batch, n)
	local slot, packed, m = {}, {}, 0
	for i = 1, n do
		local w = batch[i]
		local j = slot[w.key]
		if j == nil then
			m = m + 1
			j = m
			slot[w.key] = j
		end
		packed[j] = w.packed
	end
	return m, table.concat(packed)
end

-- Sends the queued sets in batches of up to BATCH (one PUTS each) until
-- none is left, calling each set's function with the outcome of its batch.
-- Runs in a coroutine of its own, so that no caller waits for later batches.
local function flush_puts(self)
	while #self.puts > 0 do
		local batch = self.puts
		self.puts = {}
		local n = math.min(#batch, BATCH)
		if n < #batch then
			table.move(batch, n + 1, #batch, 1, self.puts)
		end
		local ok, err = pcall(script, self, "puts", self.owner, puts_args(batch, n))
		for i = 1, n do
			local w = batch[i]
			local fok, ferr = pcall(w.done, ok, err)
			if not fok then
				skynet.error(string.format("reminder: redis store: a set's function failed: %s", tostring(ferr)))
			end
		end
	end
	self.flushing = false
end

-- Keeps r (a new pending record, replacing its key) without waiting: f(ok,
-- err) runs once the batch holding r is stored or failed. Concurrent sets
-- go to Redis together (group commit: one script, one round trip). f runs
-- in the store's flushing coroutine; while it is suspended, no later
-- batch is sent.
function store:put_then(r, hold, f)
	assert(r.state == "pending" and r.attempt == 0 and r.run == 1 and r.missed == 0 and r.error == nil,
		"put: a new record is pending, at its first run")
	local puts = self.puts
	puts[#puts + 1] = { key = r.key, packed = pack_put(r, claim_end(self, r, hold)), done = f }
	if not self.flushing then
		self.flushing = true
		skynet.fork(flush_puts, self)
	end
end

function store:delete(key)
	return script(self, "write", key, "", "", "pending", 0, "", self.owner) == 1
end

function store:get(key)
	return record(call(self, "hgetall", NS .. ":r:" .. key))
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
	for _, r in ipairs(call(self, "pipeline", ops, {})) do
		local rec = r.ok and record(r.out)
		if rec then
			out[#out + 1] = rec
		end
	end
	return out
end

function store:list(prefix, limit)
	local keys = call(self, "zrangebylex", NS .. ":keys", "[" .. prefix, "+", "LIMIT", 0, limit)
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
	local out = script(self, "load", num(core.walltime()), num(hi), limit, num(self.lease), self.owner)
	for i, list in ipairs(out) do
		out[i] = record(list)
	end
	return out
end

function store.next_at()
	return nil
end

-- True when r is still of its gen, pending and claimed by this node; the
-- claim is then extended to max(at, now) + lease.
function store:begin(r)
	return script(self, "begin", r.key, r.gen, self.owner, num(math.max(r.at, core.walltime()) + self.lease)) == 1
end

-- The run of r was answered: delete r, or move it to upd's run; false when
-- the stored record is no longer r's run (set again, or moved on by another
-- node after this node's lease lapsed).
function store:ack(r, upd, hold)
	if upd == nil then
		return script(self, "write", r.key, r.gen, r.run, "pending", 0, "", self.owner) == 1
	end
	local nxt = setmetatable({ due = upd.due, at = upd.at, run = upd.run, attempt = 0, missed = 0, error = "" },
		{ __index = r })
	return write(self, nxt, r.gen, hold, r.run)
end

-- Writes r's schedule fields (a retry, a dead letter, a skip, a revival).
function store:update(r, hold)
	return write(self, setmetatable({ error = r.error or "" }, { __index = r }), r.gen, hold, r.run)
end

function store:stats()
	local r = script(self, "stats")
	return { pending = r[1], dead = r[2], next_due = tonumber(r[3]) }
end

function store:dead(limit)
	return fetch(self, call(self, "zrange", NS .. ":dead", 0, limit - 1))
end

function store:close()
	self.db:disconnect()
end

return M
