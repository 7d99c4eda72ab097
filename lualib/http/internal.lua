-- http.internal: HTTP/1.1 header, body and chunked-body parsing shared by
-- http.httpd, http.httpc and http.websocket.
--
-- An interface is a table of closures over one connection: read(n) (exactly
-- n bytes; without n whatever is available), write(s), readall() and for
-- TLS init/close. Reads raise on a closed connection.
--
-- Limits: a header (request or status line, header lines and the blank
-- line) may hold at most HEADER_LIMIT bytes, counted whether it arrives in
-- one read or in many; a chunk-size line at most CHUNK_LINE_LIMIT bytes.
-- Nothing here buffers more than the header limit plus one read, or the
-- caller's body limit plus one read.
--
-- A request written by a traced coroutine carries its W3C traceparent
-- (skynet.tracing), unless the caller's header has one.
local tracing = require "skynet.tracing"

local M = {}

local sfind = string.find
local ssub = string.sub
local sformat = string.format
local smatch = string.match
local tconcat = table.concat

M.HEADER_LIMIT = 8192
local CHUNK_LINE_LIMIT <const> = 128
local MAX_HEX_DIGITS <const> = 14 -- 2^56: far beyond any limit, never overflows

-- Reads until the blank line ending a header. Appends each header line
-- (without CRLF) to lines and returns the bytes that followed the blank
-- line, or nil when the header is longer than HEADER_LIMIT.
function M.recvheader(read, lines, header)
	local limit = M.HEADER_LIMIT
	if #header >= 2 and ssub(header, 1, 2) == "\r\n" then
		return ssub(header, 3)
	end
	local e = sfind(header, "\r\n\r\n", 1, true)
	while not e do
		if #header > limit then
			return nil
		end
		local from = #header - 2
		local bytes = read()
		header = header .. bytes
		e = sfind(header, "\r\n\r\n", from > 0 and from or 1, true)
		if ssub(header, 1, 2) == "\r\n" then
			return ssub(header, 3)
		end
	end
	if e + 3 > limit then
		return nil
	end
	local pos = 1
	while pos < e do
		local eol = sfind(header, "\r\n", pos, true)
		lines[#lines + 1] = ssub(header, pos, eol - 1)
		pos = eol + 2
	end
	return ssub(header, e + 4)
end

-- Parses lines[from..] into header (lower-case names; a repeated name
-- becomes an array; a line starting with TAB continues the last value).
-- Returns header, or nil on a bad line.
function M.parseheader(lines, from, header)
	local name
	for i = from, #lines do
		local line = lines[i]
		if line:byte(1) == 9 then
			if name == nil then
				return nil
			end
			local cont = ssub(line, 2)
			local cur = header[name]
			if type(cur) == "table" then
				cur[#cur] = cur[#cur] .. cont
			else
				header[name] = cur .. cont
			end
		else
			local n, value = smatch(line, "^([^:]*):%s*(.*)$")
			if n == nil then
				return nil
			end
			name = n:lower()
			local cur = header[name]
			if cur == nil then
				header[name] = value
			elseif type(cur) == "table" then
				cur[#cur + 1] = value
			else
				header[name] = { cur, value }
			end
		end
	end
	return header
end

-- The size of the next chunk and the bytes after its size line, or nil on
-- a bad or overlong size line. Chunk extensions (";name=value") are skipped.
local function chunksize(read, body)
	while true do
		local e = sfind(body, "\r\n", 1, true)
		if e then
			local line = ssub(body, 1, e - 1)
			local hex = smatch(line, "^(%x+)[ \t]*$") or smatch(line, "^(%x+)[ \t]*;")
			if hex == nil or #hex > MAX_HEX_DIGITS then
				return nil
			end
			return tonumber(hex, 16), ssub(body, e + 2)
		end
		if #body > CHUNK_LINE_LIMIT then
			return nil
		end
		body = body .. read()
	end
end

-- Reads one chunk: returns data, rest (data "" for the last chunk, after
-- which the trailer starts at rest), or nil on bad framing. A chunk larger
-- than `room` bytes (nil: any) fails before it is read.
local function readchunk(read, body, room)
	local sz
	sz, body = chunksize(read, body)
	if sz == nil then
		return nil
	end
	if sz == 0 then
		return "", body
	end
	if room and sz > room then
		return nil
	end
	if #body < sz + 2 then
		body = body .. read(sz + 2 - #body)
	end
	if ssub(body, sz + 1, sz + 2) ~= "\r\n" then
		return nil
	end
	return ssub(body, 1, sz), ssub(body, sz + 3)
end
M.readchunk = readchunk

-- After the last chunk: reads the trailer lines into header. Returns the
-- bytes after the trailer, or nil.
local function recvtrailer(read, header, body)
	local lines = {}
	body = M.recvheader(read, lines, body)
	if body == nil or M.parseheader(lines, 1, header) == nil then
		return nil
	end
	return body
end
M.recvtrailer = recvtrailer

-- Decodes a chunked body starting with the bytes in body. Returns the
-- decoded body, header (trailers merged in) and the bytes read past the end;
-- nil when the framing is bad or the total exceeds limit (nil: no limit).
function M.recvchunkedbody(read, limit, header, body)
	local parts, total = {}, 0
	while true do
		local data
		data, body = readchunk(read, body, limit and limit - total)
		if data == nil then
			return nil
		end
		if data == "" then
			break
		end
		total = total + #data
		parts[#parts + 1] = data
	end
	body = recvtrailer(read, header, body)
	if body == nil then
		return nil
	end
	return tconcat(parts), header, body
end

local function bad_field(s)
	return sfind(s, "[\r\n%z]") ~= nil
end

-- True when the header table has a field named name (any case).
local function has_field(header, name)
	for k in pairs(header) do
		if tostring(k):lower() == name then
			return true
		end
	end
	return false
end

-- The W3C traceparent of a traced caller, unless the header has one (a
-- proxy passing its client's on).
local function traceparent_line(header)
	local tp = tracing.traceparent()
	if tp == nil or (header ~= nil and has_field(header, "traceparent")) then
		return nil
	end
	return sformat("traceparent:%s\r\n", tp)
end

local function header_lines(header, host)
	local out = {}
	local tp = traceparent_line(header)
	if header == nil then
		out[1] = sformat("host:%s\r\n", host)
		out[2] = tp
		return out
	end
	out[1] = tp
	if header.Host == nil then
		header.Host = host
	end
	for k, v in pairs(header) do
		k = tostring(k)
		if type(v) ~= "table" then
			v = { v }
		end
		for i = 1, #v do
			local s = tostring(v[i])
			if bad_field(k) or bad_field(s) then
				error(sformat("Invalid header field %q", k))
			end
			out[#out + 1] = sformat("%s:%s\r\n", k, s)
		end
	end
	return out
end

-- Writes a request and reads the status line and header. Returns code, the
-- bytes after the header, and the header table (recvheader, or a new one).
function M.request(interface, method, host, url, recvheader, header, content)
	if bad_field(tostring(url)) or sfind(tostring(url), " ", 1, true) then
		error(sformat("Invalid url %q", tostring(url)))
	end
	local read, write = interface.read, interface.write
	local lines = header_lines(header, host)
	local chunked = header and header["transfer-encoding"] == "chunked"
	local head = sformat("%s %s HTTP/1.1\r\n%s", method, url, tconcat(lines))
	if chunked then
		write(head .. "\r\n" .. (content or ""))
	else
		content = content or ""
		write(sformat("%sContent-length:%d\r\n\r\n%s", head, #content, content))
	end

	local tmpline = {}
	local body = M.recvheader(read, tmpline, "")
	if not body then
		error("Recv header failed")
	end
	local statusline = tmpline[1]
	local code = statusline and (smatch(statusline, "^HTTP/[%d%.]+ (%d%d%d) ") or
		smatch(statusline, "^HTTP/[%d%.]+ (%d%d%d)$"))
	if not code then
		error("Invalid HTTP response header")
	end
	local h = M.parseheader(tmpline, 2, recvheader or {})
	if not h then
		error("Invalid HTTP response header")
	end
	return tonumber(code), body, h
end

local function body_mode(code, header)
	local mode = header["transfer-encoding"]
	if mode ~= nil and mode ~= "identity" and mode ~= "chunked" then
		error("Unsupport transfer-encoding")
	end
	if code == 204 or code == 304 or code < 200 then
		return "none"
	end
	if mode == "chunked" then
		return "chunked"
	end
	local length = header["content-length"]
	if length ~= nil then
		local n = type(length) == "string" and smatch(length, "^%s*(%d+)%s*$")
		if not n or #n > 15 then
			error("Invalid response body")
		end
		return "length", tonumber(n)
	end
	return "close"
end

-- Reads the rest of a response body (limit: largest body accepted, nil: any).
function M.response(interface, code, body, header, limit)
	local mode, length = body_mode(code, header)
	if mode == "none" then
		return ""
	elseif mode == "chunked" then
		local b = M.recvchunkedbody(interface.read, limit, header, body)
		if not b then
			error("Invalid response body")
		end
		return b
	elseif mode == "length" then
		if limit and length > limit then
			error("Invalid response body")
		end
		local padding = length - #body
		if padding > 0 then
			return body .. interface.read(padding)
		end
		return ssub(body, 1, length)
	end
	local rest = interface.readall() or ""
	body = body .. rest
	if limit and #body > limit then
		error("Invalid response body")
	end
	return body
end

---------------------------------------------------------------- streams

local stream = {}
stream.__index = stream

function stream:close()
	if self.connected then
		self.connected = false
		local f = self._onclose
		self._onclose = nil
		if f then
			f(self)
		end
	end
end
stream.__close = stream.close

-- The next piece of the body, or nil at the end (the connection is then
-- closed). Raises on a truncated or malformed body.
function stream:padding()
	local f = self._next
	if f == nil then
		return nil
	end
	local ok, piece = pcall(f, self)
	if not ok then
		self._next = nil
		self:close()
		error(piece, 0)
	end
	if piece == nil then
		self._next = nil
		self:close()
		return nil
	end
	return piece, self
end
stream.__call = stream.padding

local function first_piece(self)
	local b = self._body
	self._body = nil
	return b
end

local STREAM = {}

function STREAM.none(self)
	if self._body then
		self._body = nil
		return ""
	end
end

function STREAM.chunked(self)
	if self._body == nil then
		return nil
	end
	local data, rest = readchunk(self._interface.read, self._body)
	if data == nil then
		error("Invalid response body")
	end
	if data == "" then
		self._body = nil
		if recvtrailer(self._interface.read, self.header, rest) == nil then
			error("Invalid response body")
		end
		return ""
	end
	self._body = rest
	return data
end

function STREAM.length(self)
	local left = self._left
	if self._body then
		local b = first_piece(self)
		if #b > left then
			b = ssub(b, 1, left)
		end
		self._left = left - #b
		return b
	end
	if left <= 0 then
		return nil
	end
	local piece = self._interface.read()
	if #piece > left then
		piece = ssub(piece, 1, left)
	end
	self._left = left - #piece
	return piece
end

function STREAM.close(self)
	if self._body then
		return first_piece(self)
	end
	if self._eof then
		return nil
	end
	local ok, piece = pcall(self._interface.read)
	if ok then
		return piece
	end
	-- the server closed the connection: that is the end of this body
	self._eof = true
	return nil
end

-- A stream over the body of a response whose header was read: pieces
-- come from stream() / stream:padding(). onclose(stream) is called once
-- when the stream ends or is closed.
function M.response_stream(interface, code, body, header, onclose)
	local mode, length = body_mode(code, header)
	local s = setmetatable({
		status = code, header = header, connected = true,
		_interface = interface, _body = body, _left = length,
		_next = STREAM[mode], _onclose = onclose,
	}, stream)
	return s
end

return M
