-- The decoders of outside bytes in skynet.db.redis (RESP replies),
-- skynet.db.mysql (packets, result sets, greetings) and skynet.dns
-- (answers), fed valid input, every truncation of it, seeded mutations and
-- random bytes through an in-memory sock. Each call must end, either with
-- a value or with a clean error: the socket error for input that stops
-- short, a "redis: ..." / "mysql: ..." text for input that makes no sense.
-- Also the SHA-256 and login-token functions against known vectors.
local sc = require "skynet.socketchannel"
local redis = require "skynet.db.redis"
local mysql = require "skynet.db.mysql"
local dns = require "skynet.dns"
local t = require "testlib"

local ROUNDS <const> = t.under_tsan and 300 or 2000

-- A sock over a fixed string: read/readline raise sc.error past its end.
local function fake_sock(data)
	local pos = 1
	local sock = {}
	function sock.read(_, n)
		if pos + n - 1 > #data then
			error(sc.error)
		end
		local s = data:sub(pos, pos + n - 1)
		pos = pos + n
		return s
	end
	function sock.readline(_, sep)
		local i = data:find(sep, pos, true)
		if i == nil then
			error(sc.error)
		end
		local s = data:sub(pos, i - 1)
		pos = i + #sep
		return s
	end
	return sock
end

-- Runs decode(input) and classifies the outcome; raises on an unclean one.
local function feed(decode, input, prefix)
	local ok, err = pcall(decode, input)
	if ok or err == sc.error then
		return ok and "value" or "short"
	end
	if type(err) == "string" and err:find(prefix, 1, true) == 1 then
		return "error"
	end
	error(string.format("unclean error %s for input %s", tostring(err), t.hex(input:sub(1, 64))))
end

local function mutate(rng, s)
	local bytes = { s:byte(1, -1) }
	for _ = 1, rng(1, 4) do
		local op = rng(1, 3)
		local i = rng(1, math.max(1, #bytes))
		if op == 1 and #bytes > 0 then
			bytes[i] = rng(0, 255)
		elseif op == 2 then
			table.insert(bytes, i, rng(0, 255))
		elseif #bytes > 0 then
			table.remove(bytes, i)
		end
	end
	local out = {}
	for i = 1, #bytes do
		out[i] = string.char(bytes[i])
	end
	return table.concat(out)
end

local function random_bytes(rng, n)
	local out = {}
	for i = 1, n do
		out[i] = string.char(rng(0, 255))
	end
	return table.concat(out)
end

-- Every truncation, ROUNDS mutations and ROUNDS random strings; returns
-- the counts of outcomes.
local function exercise(corpus, decode, prefix, seed)
	local seen = { value = 0, short = 0, error = 0 }
	for _, input in ipairs(corpus) do
		t.eq(feed(decode, input, prefix), "value", "valid input decodes: " .. t.hex(input:sub(1, 40)))
		for n = 0, #input - 1 do
			local r = feed(decode, input:sub(1, n), prefix)
			seen[r] = seen[r] + 1
		end
	end
	math.randomseed(seed)
	local rng = math.random
	for i = 1, ROUNDS do
		local input = mutate(rng, corpus[(i % #corpus) + 1])
		local r = feed(decode, input, prefix)
		seen[r] = seen[r] + 1
		r = feed(decode, random_bytes(rng, rng(0, 64)), prefix)
		seen[r] = seen[r] + 1
	end
	return seen
end

t.case("RESP reader: truncated, mutated and random replies", function()
	local corpus = {
		"+OK\r\n", "-ERR bad\r\n", ":42\r\n", ":-9223372036854775808\r\n", "$5\r\nhello\r\n",
		"$0\r\n\r\n", "$-1\r\n", "*-1\r\n", "*0\r\n", "*3\r\n$1\r\na\r\n$-1\r\n:7\r\n",
		"*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n-ERR inner\r\n",
	}
	local function decode(input)
		return redis.read_reply(fake_sock(input))
	end
	local seen = exercise(corpus, decode, "redis: ", 13)
	t.ok(seen.short > 0 and seen.error > 0, "both kinds of failure seen")
	-- specific malformed replies
	t.raises("redis: unsupported reply type", decode, "%1\r\n")
	t.raises("redis: bad bulk length", decode, "$x\r\n")
	t.raises("redis: bad array length", decode, "*-5\r\n")
	t.raises("redis: bulk string not ended by CRLF", decode, "$1\r\nabc\r\n")
	t.raises("redis: arrays nested deeper than 64", decode, string.rep("*1\r\n", 100))
	local ok, v = decode("*2\r\n$1\r\nx\r\n-ERR e\r\n")
	t.eq(ok, false, "an error element marks the array")
	t.same(v, { "x", "ERR e" }, "array with the error text")
end)

local function packet(payload, seq)
	return string.pack("<I3B", #payload, seq) .. payload
end

local function lenenc(s)
	return string.char(#s) .. s
end

local function column(name, ftype, flags)
	return lenenc "def" .. lenenc "db" .. lenenc "t" .. lenenc "t" .. lenenc(name) .. lenenc(name)
		.. "\12" .. string.pack("<I2I4BI2Bxx", 33, 11, ftype, flags or 0, 0)
end

local EOF <const> = "\xfe\0\0\2\0"

local function result_set(binary)
	local p = { packet("\2", 1), packet(column("a", 3), 2), packet(column("b", 0xfd), 3),
		packet(EOF, 4) }
	if binary then
		p[#p + 1] = packet("\0\0" .. string.pack("<i4", -5) .. lenenc "xy", 5)
		p[#p + 1] = packet("\0\8" .. string.pack("<i4", 6), 6) -- b NULL
	else
		p[#p + 1] = packet(lenenc "-5" .. lenenc "xy", 5)
		p[#p + 1] = packet(lenenc "6" .. "\xfb", 6)
	end
	p[#p + 1] = packet(EOF, 7)
	return table.concat(p)
end

t.case("MySQL result reader: truncated, mutated and random packets", function()
	local ok_packet = packet("\0\1\2\2\0\0\0", 1)
	local err_packet = packet("\xff\x7a\x04#42S02no such table", 1)
	local multi = packet("\0\1\0" .. string.pack("<I2", 10) .. "\0\0", 1) .. result_set(false)
	local corpus = { ok_packet, err_packet, result_set(false), multi }
	local function text(input)
		return mysql.wire.read_results(fake_sock(input), false, false, "multiresultset")
	end
	local seen = exercise(corpus, text, "mysql: ", 17)
	t.ok(seen.short > 0 and seen.error > 0, "both kinds of failure seen")
	local function binary(input)
		return mysql.wire.read_results(fake_sock(input), true, true, "mulitresultset")
	end
	exercise({ result_set(true) }, binary, "mysql: ", 19)
	-- what valid input decodes to
	local _, rows = text(result_set(false))
	t.eq(rows[1].a, -5, "numeric column")
	t.eq(rows[1].b, "xy", "string column")
	t.eq(rows[2].b, nil, "NULL")
	local _, brows = binary(result_set(true))
	t.same(brows, { { -5, "xy" }, { 6 } }, "binary rows (compact)")
	local _, r = text(multi)
	t.eq(r.multiresultset, true, "multi")
	t.eq(r[1].affected_rows, 1, "OK first")
	t.eq(r[2][1].a, -5, "then the set")
	-- the packet layer joins 16 MiB continuation packets
	local big = string.rep("z", 0xFFFFFF + 10)
	local wire = mysql.wire.compose_packet(big, 0)
	t.eq(#wire, 2, "split in two packets")
	t.eq(mysql.wire.read_packet(fake_sock(table.concat(wire))), big, "joined again")
	local exact = mysql.wire.compose_packet(string.rep("z", 0xFFFFFF), 3)
	t.eq(#exact, 2, "a full packet is followed by an empty one")
	t.eq(exact[2], "\0\0\0\4", "the empty packet")
end)

t.case("MySQL greeting parser", function()
	local greeting = "\10" .. "10.11.19-MariaDB\0" .. string.pack("<I4", 7) .. "abcdefgh" .. "\0"
		.. string.pack("<I2BI2I2B", 0xf7fe, 33, 2, 0x81ff, 21) .. string.rep("\0", 10)
		.. "ijklmnopqrst\0" .. "mysql_native_password\0"
	local g = mysql.wire.parse_greeting(greeting)
	t.eq(g.version, "10.11.19-MariaDB", "version")
	t.eq(g.scramble, "abcdefghijklmnopqrst", "20-byte scramble")
	t.eq(g.plugin, "mysql_native_password", "plugin")
	math.randomseed(23)
	for n = 0, #greeting - 1 do
		feed(mysql.wire.parse_greeting, greeting:sub(1, n), "mysql: ")
	end
	for _ = 1, ROUNDS do
		feed(mysql.wire.parse_greeting, mutate(math.random, greeting), "mysql: ")
	end
end)

t.case("SHA-256 and the login tokens", function()
	local sha256 = mysql.wire.sha256
	t.eq(t.hex(sha256 ""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "''")
	t.eq(t.hex(sha256 "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"abc")
	t.eq(t.hex(sha256(string.rep("x", 200))),
		"aa20c23e3201834050679e1d88941b9a6fed0557c9a705cb2c315e2e63fd486d", "200 bytes")
	local scramble = ""
	for i = 1, 20 do
		scramble = scramble .. string.char(i)
	end
	local plugins = mysql.wire.auth_plugins
	t.eq(t.hex(plugins.caching_sha2_password("secret", scramble)),
		"746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9", "caching_sha2 token")
	t.eq(t.hex(plugins.mysql_native_password("secret", scramble)),
		"b32bb3a583e1340c0a1108d58b1be49781ad8c2f", "native token")
	t.eq(plugins.mysql_native_password("", scramble), "", "empty password")
end)

t.case("DNS answer decoder: truncated, mutated and random datagrams", function()
	local answer = string.pack(">I2I2I2I2I2I2", 5, 0x8180, 1, 2, 0, 0) .. "\3one\4test\0"
		.. string.pack(">I2I2", 1, 1) .. "\xc0\x0c" .. string.pack(">I2I2I4s2", 5, 1, 60,
		"\3two\xc0\x10") .. "\3two\xc0\x10" .. string.pack(">I2I2I4s2", 1, 1, 30, "\10\0\0\1")
	local r, ttl = dns.wire.decode_answer(answer)
	t.eq(r.qname, "one.test", "question")
	t.same(r[1], { "10.0.0.1" }, "A through a CNAME")
	t.eq(ttl, 30, "minimum ttl")
	-- a pointer loop ends with an error
	local loop = answer:sub(1, 12) .. "\xc0\x0c" .. string.pack(">I2I2", 1, 1)
	t.ok(not pcall(dns.wire.decode_answer, loop), "pointer loop")
	math.randomseed(29)
	local function decode(input)
		local ok, err = pcall(dns.wire.decode_answer, input)
		if not ok and type(err) ~= "string" then
			error("unclean dns error " .. tostring(err))
		end
		return ok
	end
	for n = 0, #answer - 1 do
		decode(answer:sub(1, n))
	end
	for _ = 1, ROUNDS do
		decode(mutate(math.random, answer))
		decode(random_bytes(math.random, math.random(0, 80)))
	end
end)

t.start()
