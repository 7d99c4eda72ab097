-- skynet.db.mysql: a MySQL/MariaDB client (protocol 4.1+) over an
-- order-mode socketchannel.
--
-- Packets: 3-byte little-endian length, 1-byte sequence number, payload.
-- A payload of 0xFFFFFF bytes or more travels as several packets (each
-- full one followed by the next, the last shorter, possibly empty): the
-- reader joins them and the writer splits commands, so both directions
-- work up to the server's max_allowed_packet.
--
-- Login: the channel's auth step reads the greeting, answers with a
-- HandshakeResponse41 (mysql_native_password token: SHA1(pw) XOR
-- SHA1(scramble .. SHA1(SHA1(pw)))), follows an auth switch request to
-- mysql_native_password or caching_sha2_password (its fast path), then runs
-- opts.on_connect. Every reconnect logs in again; a failed login raises a
-- text in auth, so connect raises sc.error and the text is logged.
--
-- Results: text protocol (query) and binary protocol (execute) share the
-- result-set reader; SQL errors come back as {badresult = true, ...}
-- tables, never raised. A packet that breaks the framing or the result
-- layout raises a "mysql: ..." text inside the channel's reader, which
-- drops the connection and fails every waiting caller (its position in
-- the stream is unknown from then on).
local socket = require "skynet.socket"
local sc = require "skynet.socketchannel"
local crypt = require "skynet.crypt"

local sbyte = string.byte
local schar = string.char
local ssub = string.sub
local spack = string.pack
local sunpack = string.unpack
local sformat = string.format
local srep = string.rep
local tconcat = table.concat
local tonumber = tonumber
local tostring = tostring
local type = type
local select = select
local math_type = math.type
local math_tointeger = math.tointeger

local sha1 = crypt.sha1

local mysql = { _VERSION = "0.14" }

local MAX_PACKET <const> = 0xFFFFFF
local CLIENT_FLAGS <const> = 0x0003F7CF -- PROTOCOL_41, SECURE_CONNECTION, MULTI_*, ...
local CLIENT_PLUGIN_AUTH <const> = 0x00080000
local SERVER_MORE_RESULTS_EXISTS <const> = 0x0008
local COM_QUERY <const> = 0x03
local COM_PING <const> = 0x0e
local COM_STMT_PREPARE <const> = 0x16
local COM_STMT_EXECUTE <const> = 0x17
local COM_STMT_CLOSE <const> = 0x19
local COM_STMT_RESET <const> = 0x1a
local UNSIGNED_FLAG <const> = 0x20

local CHARSETS <const> = {
	_default = 0, big5 = 1, dec8 = 3, cp850 = 4, hp8 = 6, koi8r = 7, latin1 = 8, latin2 = 9,
	swe7 = 10, ascii = 11, ujis = 12, sjis = 13, hebrew = 16, tis620 = 18, euckr = 19, koi8u = 22,
	gb2312 = 24, greek = 25, cp1250 = 26, gbk = 28, latin5 = 30, armscii8 = 32, utf8 = 33,
	ucs2 = 35, cp866 = 36, keybcs2 = 37, macce = 38, macroman = 39, cp852 = 40, latin7 = 41,
	utf8mb4 = 45, cp1251 = 51, utf16 = 54, utf16le = 56, cp1256 = 57, cp1257 = 59, utf32 = 60,
	binary = 63, geostd8 = 92, cp932 = 95, eucjpms = 97, gb18030 = 248,
}

-- Text-protocol column types converted with tonumber.
local NUMERIC <const> = {
	[0x01] = true, [0x02] = true, [0x03] = true, [0x04] = true, [0x05] = true, [0x08] = true,
	[0x09] = true, [0x0d] = true, [0xf6] = true,
}

local function fail(fmt, ...)
	error("mysql: " .. sformat(fmt, ...), 0)
end

---------------------------------------------------------------- packets

-- Reads one logical packet (continuations joined); returns payload, seq.
local function read_packet(sock)
	local header = sock:read(4)
	local len, seq = sunpack("<I3B", header)
	local payload = sock:read(len)
	if len < MAX_PACKET then
		return payload, seq
	end
	local parts = { payload }
	repeat
		header = sock:read(4)
		len, seq = sunpack("<I3B", header)
		parts[#parts + 1] = sock:read(len)
	until len < MAX_PACKET
	return tconcat(parts), seq
end

-- The packets carrying payload, sequence numbers from seq on.
local function compose_packet(payload, seq)
	local n = #payload
	if n < MAX_PACKET then
		return spack("<I3B", n, seq & 0xff) .. payload
	end
	local parts, pos = {}, 1
	while true do
		local len = math.min(MAX_PACKET, n - pos + 1)
		parts[#parts + 1] = spack("<I3B", len, seq & 0xff) .. ssub(payload, pos, pos + len - 1)
		seq, pos = seq + 1, pos + len
		if len < MAX_PACKET then
			break
		end
	end
	return parts
end

---------------------------------------------------------------- fields

-- Length-encoded integer at pos: value (nil for the NULL marker), next pos.
local function lenenc_int(data, pos)
	local first = sbyte(data, pos)
	if first == nil then
		fail("truncated packet")
	elseif first < 0xfb then
		return first, pos + 1
	elseif first == 0xfb then
		return nil, pos + 1
	elseif first == 0xfc then
		return sunpack("<I2", data, pos + 1)
	elseif first == 0xfd then
		return sunpack("<I3", data, pos + 1)
	elseif first == 0xfe then
		return sunpack("<i8", data, pos + 1)
	end
	fail("bad length-encoded integer")
end

local function lenenc_str(data, pos)
	local len
	len, pos = lenenc_int(data, pos)
	if len == nil then
		return nil, pos
	end
	if len < 0 or pos + len - 1 > #data then
		fail("truncated string")
	end
	return ssub(data, pos, pos + len - 1), pos + len
end

local function cstring(data, pos)
	local z = data:find("\0", pos, true)
	if z == nil then
		fail("unterminated string")
	end
	return ssub(data, pos, z - 1), z + 1
end

local function parse_ok(data)
	local affected, insert_id, pos
	affected, pos = lenenc_int(data, 2)
	insert_id, pos = lenenc_int(data, pos)
	local status, warnings
	status, warnings, pos = sunpack("<I2I2", data, pos)
	local res = {
		affected_rows = affected,
		insert_id = insert_id,
		server_status = status,
		warning_count = warnings,
	}
	if pos <= #data then
		res.message = ssub(data, pos)
	end
	return res, status
end

local function parse_err(data)
	local errno, pos = sunpack("<I2", data, 2)
	local sqlstate
	if ssub(data, pos, pos) == "#" then
		sqlstate = ssub(data, pos + 1, pos + 5)
		pos = pos + 6
	end
	return { badresult = true, errno = errno, sqlstate = sqlstate, err = ssub(data, pos) }
end

-- EOF packet: 0xfe and fewer than 9 bytes; returns its status flags.
local function eof_status(data)
	if sbyte(data, 1) == 0xfe and #data < 9 then
		if #data >= 5 then
			local _, status = sunpack("<I2I2", data, 2)
			return status
		end
		return 0
	end
end

local function parse_field(data)
	local _, name
	local pos = 1
	for _ = 1, 4 do -- catalog, schema, table, org_table
		_, pos = lenenc_str(data, pos)
	end
	name, pos = lenenc_str(data, pos)
	_, pos = lenenc_str(data, pos) -- org_name
	_, pos = lenenc_int(data, pos) -- length of the fixed fields
	local _, _, ftype, flags = sunpack("<I2I4BI2", data, pos)
	local col = { name = name, type = ftype }
	if flags & UNSIGNED_FLAG == 0 then
		col.is_signed = true
	end
	return col
end

-- Column definitions up to the EOF packet.
local function read_fields(sock, n)
	local cols = {}
	for i = 1, n do
		local data = read_packet(sock)
		local kind = sbyte(data, 1)
		if kind == 0xff then
			return nil, parse_err(data)
		elseif eof_status(data) then
			fail("bad field packet type: %d", kind)
		end
		cols[i] = parse_field(data)
	end
	local data = read_packet(sock)
	if not eof_status(data) then
		fail("unexpected packet type %d while eof packet is expected", sbyte(data, 1) or -1)
	end
	return cols
end

---------------------------------------------------------------- rows

local function text_row(data, cols, compact)
	local row, pos = {}, 1
	for i = 1, #cols do
		local col = cols[i]
		local v
		v, pos = lenenc_str(data, pos)
		if v ~= nil and NUMERIC[col.type] then
			v = tonumber(v)
		end
		if compact then
			row[i] = v
		else
			row[col.name] = v
		end
	end
	return row
end

local function two(n)
	return sformat("%02d", n)
end

-- DATE, DATETIME, TIMESTAMP in the binary protocol.
local function binary_datetime(data, pos, ftype)
	local len = sbyte(data, pos)
	pos = pos + 1
	if len == nil or pos + len - 1 > #data then
		fail("truncated date")
	end
	local y, mo, d, h, mi, s, us = 0, 0, 0, 0, 0, 0, nil
	if len >= 4 then
		y, mo, d = sunpack("<I2BB", data, pos)
	end
	if len >= 7 then
		h, mi, s = sunpack("BBB", data, pos + 4)
	end
	if len >= 11 then
		us = sunpack("<I4", data, pos + 7)
	end
	local date = sformat("%04d-%s-%s", y, two(mo), two(d))
	if ftype == 0x0a then
		return date, pos + len
	end
	local text = sformat("%s %s:%s:%s", date, two(h), two(mi), two(s))
	if us then
		text = text .. sformat(".%06d", us)
	end
	return text, pos + len
end

-- TIME in the binary protocol, as the text protocol shows it ([-]H:MM:SS).
local function binary_time(data, pos)
	local len = sbyte(data, pos)
	pos = pos + 1
	if len == nil or pos + len - 1 > #data then
		fail("truncated time")
	end
	if len == 0 then
		return "00:00:00", pos
	end
	local neg, days, h, mi, s = sunpack("<BI4BBB", data, pos)
	local text = sformat("%s%s:%s:%s", neg == 1 and "-" or "", two(days * 24 + h), two(mi), two(s))
	if len >= 12 then
		text = text .. sformat(".%06d", (sunpack("<I4", data, pos + 8)))
	end
	return text, pos + len
end

local INT_FORMAT <const> = {
	[0x01] = { "<i1", "<I1" },
	[0x02] = { "<i2", "<I2" },
	[0x0d] = { "<i2", "<I2" },
	[0x03] = { "<i4", "<I4" },
	[0x09] = { "<i4", "<I4" }, -- INT24 travels as 4 bytes
	[0x08] = { "<i8", "<i8" }, -- unsigned values past 2^63-1 wrap
}

local function binary_value(data, pos, ftype, signed)
	local ifmt = INT_FORMAT[ftype]
	if ifmt then
		return sunpack(signed and ifmt[1] or ifmt[2], data, pos)
	elseif ftype == 0x04 then
		return sunpack("<f", data, pos)
	elseif ftype == 0x05 then
		return sunpack("<d", data, pos)
	elseif ftype == 0x0a or ftype == 0x0c or ftype == 0x07 then
		return binary_datetime(data, pos, ftype)
	elseif ftype == 0x0b then
		return binary_time(data, pos)
	elseif ftype == 0xf6 or ftype == 0x00 then
		local v
		v, pos = lenenc_str(data, pos)
		return tonumber(v) or v, pos
	elseif ftype == 0x06 then
		return nil, pos
	end
	return lenenc_str(data, pos) -- strings, blobs, BIT, JSON, ENUM, SET, GEOMETRY
end

local function binary_row(data, cols, compact)
	local n = #cols
	local pos = 2 + (n + 9) // 8 -- 0x00 header, NULL bitmap with a 2-bit offset
	if pos - 1 > #data then
		fail("truncated binary row")
	end
	local row = {}
	for i = 1, n do
		local col = cols[i]
		local bit = i + 1
		local v
		if sbyte(data, 2 + bit // 8) & (1 << (bit % 8)) == 0 then
			v, pos = binary_value(data, pos, col.type, col.is_signed)
		end
		if compact then
			row[i] = v
		else
			row[col.name] = v
		end
	end
	return row
end

---------------------------------------------------------------- results

-- Answers a LOAD DATA LOCAL request with an empty file (not supported).
local function refuse_local_infile(sock, seq)
	socket.write(sock[1], compose_packet("", seq + 1))
	local data = read_packet(sock)
	local kind = sbyte(data, 1)
	if kind == 0xff then
		return parse_err(data), 0
	end
	return { badresult = true, err = "LOAD DATA LOCAL INFILE is not supported" }, 0
end

-- One result: a result set, an OK table or an ERR table; returns it and
-- the server status (for SERVER_MORE_RESULTS_EXISTS).
local function read_result(sock, compact, binary)
	local data, seq = read_packet(sock)
	local kind = sbyte(data, 1)
	if kind == 0x00 then
		return parse_ok(data)
	elseif kind == 0xff then
		return parse_err(data), 0
	elseif kind == 0xfb then
		return refuse_local_infile(sock, seq)
	elseif kind == nil then
		fail("empty packet")
	end
	local ncols = lenenc_int(data, 1)
	if ncols == nil or ncols < 1 then
		fail("packet type %d not supported", kind)
	end
	local cols, err = read_fields(sock, ncols)
	if cols == nil then
		return err, 0
	end
	local rows, decode = {}, binary and binary_row or text_row
	while true do
		data = read_packet(sock)
		local status = eof_status(data)
		if status then
			return rows, status
		elseif sbyte(data, 1) == 0xff then
			return parse_err(data), 0
		end
		rows[#rows + 1] = decode(data, cols, compact)
	end
end

-- Every result of a command: the single result, or several in an array
-- flagged with `flag` (multiresultset for queries, mulitresultset for
-- execute: both names are what scripts test).
local function read_results(sock, compact, binary, flag)
	local res, status = read_result(sock, compact, binary)
	if status & SERVER_MORE_RESULTS_EXISTS == 0 then
		return true, res
	end
	local all = { res, [flag] = true }
	while status & SERVER_MORE_RESULTS_EXISTS ~= 0 do
		res, status = read_result(sock, compact, binary)
		if res.badresult then
			all.badresult, all.err, all.errno, all.sqlstate = true, res.err, res.errno,
				res.sqlstate
		else
			all[#all + 1] = res
		end
	end
	return true, all
end

-- Wraps a response function: a decoding error that is not already a
-- "mysql: ..." text or the socket error (a string.unpack on a short
-- packet, say) becomes "mysql: malformed packet (...)".
local function guarded(f)
	return function(...)
		local r = table.pack(pcall(f, ...))
		if r[1] then
			return table.unpack(r, 2, r.n)
		end
		local err = r[2]
		if err == sc.error or (type(err) == "string" and err:find("^mysql: ")) then
			error(err, 0)
		end
		error("mysql: malformed packet (" .. tostring(err) .. ")", 0)
	end
end

mysql.wire = { read_packet = read_packet, compose_packet = compose_packet,
	read_results = guarded(read_results) }

---------------------------------------------------------------- login

local function xor_str(a, b)
	local out = {}
	for i = 1, #a do
		out[i] = schar(sbyte(a, i) ~ sbyte(b, i))
	end
	return tconcat(out)
end

local function native_token(password, scramble)
	if password == "" then
		return ""
	end
	local stage1 = sha1(password)
	return xor_str(stage1, sha1(ssub(scramble, 1, 20) .. sha1(stage1)))
end

---------------------------------------------------------------- sha-256
-- For caching_sha2_password's scramble; skynet.crypt has no SHA-256.

local K256 <const> = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

local function rotr(x, n)
	return ((x >> n) | (x << (32 - n))) & 0xffffffff
end

local function sha256(msg)
	local len = #msg
	msg = msg .. "\128" .. srep("\0", (55 - len) % 64) .. spack(">I8", len * 8)
	local h = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
		0x5be0cd19 }
	local w = {}
	for chunk = 1, #msg, 64 do
		for i = 1, 16 do
			w[i] = sunpack(">I4", msg, chunk + (i - 1) * 4)
		end
		for i = 17, 64 do
			local a, b = w[i - 15], w[i - 2]
			local s0 = rotr(a, 7) ~ rotr(a, 18) ~ (a >> 3)
			local s1 = rotr(b, 17) ~ rotr(b, 19) ~ (b >> 10)
			w[i] = (w[i - 16] + s0 + w[i - 7] + s1) & 0xffffffff
		end
		local a, b, c, d, e, f, g, hh = h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
		for i = 1, 64 do
			local s1 = rotr(e, 6) ~ rotr(e, 11) ~ rotr(e, 25)
			local ch = (e & f) ~ (~e & g)
			local t1 = (hh + s1 + ch + K256[i] + w[i]) & 0xffffffff
			local s0 = rotr(a, 2) ~ rotr(a, 13) ~ rotr(a, 22)
			local maj = (a & b) ~ (a & c) ~ (b & c)
			local t2 = (s0 + maj) & 0xffffffff
			hh, g, f, e, d, c, b, a = g, f, e, (d + t1) & 0xffffffff, c, b, a, (t1 + t2) & 0xffffffff
		end
		h[1], h[2], h[3], h[4] = (h[1] + a) & 0xffffffff, (h[2] + b) & 0xffffffff,
			(h[3] + c) & 0xffffffff, (h[4] + d) & 0xffffffff
		h[5], h[6], h[7], h[8] = (h[5] + e) & 0xffffffff, (h[6] + f) & 0xffffffff,
			(h[7] + g) & 0xffffffff, (h[8] + hh) & 0xffffffff
	end
	return spack(">I4I4I4I4I4I4I4I4", h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8])
end

-- caching_sha2_password: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) .. scramble).
local function sha2_token(password, scramble)
	if password == "" then
		return ""
	end
	local p1 = sha256(password)
	return xor_str(p1, sha256(sha256(p1) .. ssub(scramble, 1, 20)))
end

-- Authentication plugins this client answers: name -> token function.
local AUTH_PLUGINS <const> = {
	mysql_native_password = native_token,
	caching_sha2_password = sha2_token,
}

mysql.wire.sha256 = sha256
mysql.wire.auth_plugins = AUTH_PLUGINS

local function parse_greeting(data)
	local proto = sbyte(data, 1)
	if proto == 0xff then
		local e = parse_err(data)
		error(sformat("errno:%d, msg:%s,sqlstate:%s", e.errno, e.err, tostring(e.sqlstate)), 0)
	end
	local g = {}
	local pos
	g.version, pos = cstring(data, 2)
	local scramble1
	g.thread_id, scramble1, pos = sunpack("<I4c8", data, pos)
	local caps_lo
	caps_lo, pos = sunpack("<I2", data, pos + 1)
	g.caps, g.scramble, g.plugin = caps_lo, scramble1, "mysql_native_password"
	if pos > #data then
		return g
	end
	local charset, status, caps_hi, alen
	charset, status, caps_hi, alen, pos = sunpack("<BI2I2B", data, pos)
	g.charset, g.status = charset, status
	g.caps = caps_lo | (caps_hi << 16)
	pos = pos + 10
	local n = math.max(13, alen - 8)
	g.scramble = scramble1 .. ssub(data, pos, pos + n - 2) -- the last byte is a NUL
	pos = pos + n
	if g.caps & CLIENT_PLUGIN_AUTH ~= 0 and pos <= #data then
		g.plugin = data:match("^[^%z]*", pos)
	end
	return g
end

mysql.wire.parse_greeting = guarded(parse_greeting)

local function login_error(data)
	local e = parse_err(data)
	return sformat("errno:%d, msg:%s,sqlstate:%s", e.errno, e.err, tostring(e.sqlstate))
end

-- Reads the server's answers to the login until OK, answering auth
-- switches and the caching_sha2_password fast-auth notice.
local function auth_reader(password, scramble, plugin)
	return guarded(function(sock)
		while true do
			local data, seq = read_packet(sock)
			local kind = sbyte(data, 1)
			if kind == 0x00 then
				return true, (parse_ok(data))
			elseif kind == 0xff then
				return false, login_error(data)
			elseif kind == 0xfe and #data > 1 then -- auth switch
				local name, pos = cstring(data, 2)
				local maker = AUTH_PLUGINS[name]
				if maker == nil then
					return false, "authentication plugin " .. name .. " not supported"
				end
				plugin, scramble = name, ssub(data, pos)
				socket.write(sock[1], compose_packet(maker(password, scramble), seq + 1))
			elseif kind == 0xfe then
				return false, "old pre-4.1 authentication protocol not supported"
			elseif kind == 0x01 and plugin == "caching_sha2_password" then
				if sbyte(data, 2) ~= 3 then -- 3: fast auth done, an OK follows
					return false, "caching_sha2_password full authentication needs TLS or RSA,"
						.. " which this client does not support"
				end
			else
				fail("unexpected packet type %d during login", kind)
			end
		end
	end)
end

local function login_packet(opts, g, seq)
	local charset = CHARSETS[opts.charset or "_default"]
	if charset == nil then
		error("mysql.connect: unknown charset " .. tostring(opts.charset), 0)
	end
	local plugin = opts.auth_plugin or g.plugin
	local maker = AUTH_PLUGINS[plugin]
	if maker == nil then
		plugin, maker = "mysql_native_password", native_token
	end
	local password = opts.password or ""
	local flags = CLIENT_FLAGS
	local plugin_auth = g.caps & CLIENT_PLUGIN_AUTH ~= 0
	if plugin_auth then
		flags = flags | CLIENT_PLUGIN_AUTH
	end
	local token = maker(password, g.scramble)
	local payload = spack("<I4I4B", flags, opts.max_packet_size or 1024 * 1024, charset)
		.. srep("\0", 23) .. (opts.user or "") .. "\0" .. spack("s1", token)
		.. (opts.database or "") .. "\0"
	if plugin_auth then
		payload = payload .. plugin .. "\0"
	end
	return compose_packet(payload, seq + 1), plugin
end

---------------------------------------------------------------- object

local command = {}
local meta = { __index = command }

local function greeting_reader(sock)
	local data, seq = read_packet(sock)
	return true, { data = data, seq = seq }
end

local function login(self, ch, opts)
	local greeting = ch:response(greeting_reader)
	local g = parse_greeting(greeting.data)
	self.server_version = g.version
	local packet, plugin = login_packet(opts, g, greeting.seq)
	ch:request(packet, auth_reader(opts.password or "", g.scramble, plugin))
	local on_connect = opts.on_connect
	if on_connect then
		on_connect(self)
	end
end

function mysql.connect(opts)
	if type(opts) ~= "table" or opts.host == nil then
		error("mysql.connect: opts.host is required", 2)
	end
	local self = setmetatable({ compact = opts.compact_arrays or false }, meta)
	local ch = sc.channel {
		host = opts.host,
		port = opts.port or 3306,
		overload = opts.overload,
		timeout = opts.timeout,
		auth = function(ch)
			login(self, ch, opts)
		end,
	}
	self.sockchannel = ch
	ch:connect(true)
	return self
end

function command:disconnect()
	self.sockchannel:close()
	setmetatable(self, nil)
end

function command:set_compact_arrays(flag)
	self.compact = flag and true or false
end

function command:server_ver()
	return self.server_version
end

local function query_reader(self, binary, flag)
	return guarded(function(sock)
		return read_results(sock, self.compact, binary, flag)
	end)
end

function command:query(sql)
	return self.sockchannel:request(compose_packet(schar(COM_QUERY) .. sql, 0),
		query_reader(self, false, "multiresultset"))
end

local ok_reader = guarded(function(sock)
	local data = read_packet(sock)
	local kind = sbyte(data, 1)
	if kind == 0xff then
		return true, parse_err(data)
	elseif kind ~= 0x00 then
		fail("unexpected packet type %d while ok packet is expected", kind or -1)
	end
	return true, (parse_ok(data))
end)

function command:ping()
	return self.sockchannel:request(compose_packet(schar(COM_PING), 0), ok_reader)
end

---------------------------------------------------------------- statements

local prepare_reader = guarded(function(sock)
	local data = read_packet(sock)
	local kind = sbyte(data, 1)
	if kind == 0xff then
		return true, parse_err(data)
	elseif kind ~= 0x00 then
		fail("unexpected packet type %d after prepare", kind or -1)
	end
	local id, nfields, nparams, warnings = sunpack("<I4I2I2xI2", data, 2)
	local stmt = {
		prepare_id = id,
		field_count = nfields,
		param_count = nparams,
		warning_count = warnings,
		params = {},
		fields = {},
	}
	if nparams > 0 then
		stmt.params = assert(read_fields(sock, nparams))
	end
	if nfields > 0 then
		stmt.fields = assert(read_fields(sock, nfields))
	end
	return true, stmt
end)

function command:prepare(sql)
	return self.sockchannel:request(compose_packet(schar(COM_STMT_PREPARE) .. sql, 0),
		prepare_reader)
end

-- Type byte and encoded value of one parameter (nil: NULL).
local function encode_param(v)
	local kind = type(v)
	if kind == "number" then
		local i = math_type(v) == "integer" and v or math_tointeger(v)
		if i then
			return 0x08, spack("<i8", i)
		end
		return 0x05, spack("<d", v)
	elseif kind == "string" then
		local n = #v
		local len
		if n < 0xfb then
			len = schar(n)
		elseif n < 0x10000 then
			len = spack("<BI2", 0xfc, n)
		elseif n < 0x1000000 then
			len = spack("<BI3", 0xfd, n)
		else
			len = spack("<Bi8", 0xfe, n)
		end
		return 0x0f, len .. v
	elseif kind == "boolean" then
		return 0x01, v and "\1" or "\0"
	elseif kind == "nil" then
		return 0x06, nil
	end
	error("invalid parameter type " .. kind, 3)
end

function command:execute(stmt, ...)
	local n = select("#", ...)
	if n ~= stmt.param_count then
		error(sformat("require stmt.param_count %d get arg_num %d", stmt.param_count, n), 2)
	end
	local parts = { spack("<BI4BI4", COM_STMT_EXECUTE, stmt.prepare_id, 0, 1) }
	if n > 0 then
		local bitmap, types, values = {}, {}, {}
		for i = 1, (n + 7) // 8 do
			bitmap[i] = 0
		end
		for i = 1, n do
			local ftype, value = encode_param((select(i, ...)))
			if value == nil then
				local b = (i - 1) // 8 + 1
				bitmap[b] = bitmap[b] | (1 << ((i - 1) % 8))
			else
				values[#values + 1] = value
			end
			types[i] = spack("BB", ftype, 0)
		end
		for i = 1, #bitmap do
			bitmap[i] = schar(bitmap[i])
		end
		parts[2] = tconcat(bitmap) .. "\1" .. tconcat(types) .. tconcat(values)
	end
	return self.sockchannel:request(compose_packet(tconcat(parts), 0),
		query_reader(self, true, "mulitresultset"))
end

function command:stmt_reset(stmt)
	return self.sockchannel:request(compose_packet(spack("<BI4", COM_STMT_RESET, stmt.prepare_id),
		0), ok_reader)
end

function command:stmt_close(stmt)
	self.sockchannel:request(compose_packet(spack("<BI4", COM_STMT_CLOSE, stmt.prepare_id), 0))
end

---------------------------------------------------------------- quoting

local ESCAPES <const> = {
	["\0"] = "\\0", ["\b"] = "\\b", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
	["\26"] = "\\Z", ["\\"] = "\\\\", ["'"] = "\\'", ['"'] = '\\"',
}

function mysql.quote_sql_str(s)
	return "'" .. s:gsub("[%z\b\n\r\t\26\\'\"]", ESCAPES) .. "'"
end

return mysql
