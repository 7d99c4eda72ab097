-- http.websocket: RFC 6455 WebSocket server and client over plain sockets
-- (ws) or TLS (wss). A websocket's id is its socket id; the open ones live
-- in a per-service pool (id -> object below).
--
-- Object fields: id/socket_id, mode ("server"|"client"), read/write/close
-- (the interface), addr, real_ip, is_close (the script closed it),
-- max_size (bytes a message may hold, nil: any), mask (client frames are
-- masked), strict (see below).
--
-- Server: accept(id, handle, protocol, addr, options) runs the whole
-- session in the calling coroutine and calls handle.connect/handshake/
-- message/ping/pong/close/error/warning there. options: upgrade = {header,
-- method, url[, version, interface]} when http.httpd already read the
-- request (interface: the read/write closures it read with, so bytes it
-- buffered and a TLS session carry over); max_size (default
-- 256 KiB) for one frame and for one fragmented message; protocols (default
-- {"chat"}), the sub-protocols accepted, the first one the client offers
-- that is in the list is answered; strict (default false): also refuse
-- unmasked client frames, frames with RSV bits and text that is not UTF-8.
-- A frame over max_size, an unknown opcode, a bad control frame (payload
-- over 125 bytes or fragmented), a continuation frame with no message
-- started, a new data frame inside a fragmented message, a close frame
-- with a 1-byte payload or a strict-mode violation makes the server send a
-- close frame (1009 too big, 1002 protocol error, 1007 bad text), close the
-- socket, call handle.error(id, text) and return false, text. A request
-- that is not a valid upgrade (including a malformed request line or a
-- Sec-WebSocket-Key that is not base64 of 16 bytes) gets an HTTP 4xx
-- answer, the socket is closed, handle.close(id) is called and accept
-- returns true.
--
-- Client: connect(url, header, timeout, options) -> id; read, write, ping,
-- close. Client frames are masked with a random key unless write is given
-- one; a close frame from the server is answered before the socket closes.
-- options.max_size (default nil: any) bounds what read accepts.
local skynet = require "skynet"
local socket = require "skynet.socket"
local crypt = require "skynet.crypt"
local internal = require "http.internal"
local httpd = require "http.httpd"
local sockethelper = require "http.sockethelper"
local loglimit = require "skynet.loglimit"

local sformat = string.format
local spack = string.pack
local sunpack = string.unpack
local schar = string.char
local ssub = string.sub
local tconcat = table.concat

local M = {}

local GUID <const> = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
local SERVER_MAX_SIZE <const> = 256 * 1024

local OP_CONTINUATION <const> = 0
local OP_TEXT <const> = 1
local OP_BINARY <const> = 2
local OP_CLOSE <const> = 8
local OP_PING <const> = 9
local OP_PONG <const> = 10

local pool = {} -- id -> websocket object
local log = loglimit.new() -- a peer that resets its connection causes a line

local SSLCTX_SERVER, SSLCTX_CLIENT
local tlshelper

local function get_tlshelper()
	if tlshelper == nil then
		tlshelper = require "http.tlshelper"
	end
	return tlshelper
end

-- An error carrying the close code to send before dropping the connection.
local function protocol_error(code, text)
	error({ ws_code = code, text = text }, 0)
end

---------------------------------------------------------------- frames

local function encode_frame(op, payload, mask_key)
	local len = #payload
	local b1 = 0x80 | op
	local head
	local maskbit = mask_key and 0x80 or 0
	if len < 126 then
		head = schar(b1, len | maskbit)
	elseif len < 0x10000 then
		head = spack(">BBI2", b1, 126 | maskbit, len)
	else
		head = spack(">BBI8", b1, 127 | maskbit, len)
	end
	if mask_key then
		local key = spack(">I4", mask_key & 0xffffffff)
		if len > 0 then
			payload = crypt.xor_str(payload, key)
		end
		return head .. key .. payload
	end
	return head .. payload
end
M.encode_frame = encode_frame

local function random_key()
	return sunpack("<I4", crypt.randomkey())
end

local function send_frame(ws, op, payload, mask_key)
	if mask_key == nil and ws.mask then
		mask_key = random_key()
	end
	ws.write(encode_frame(op, payload or "", mask_key))
end

-- Reads one frame: fin, op, payload. Raises socket_error on a closed
-- socket, a protocol_error on a bad frame.
local function read_frame(ws)
	local read = ws.read
	local h = read(2)
	local b1, b2 = h:byte(1, 2)
	local fin = b1 & 0x80 ~= 0
	local op = b1 & 0x0f
	local masked = b2 & 0x80 ~= 0
	local len = b2 & 0x7f
	if b1 & 0x70 ~= 0 and ws.strict then
		protocol_error(1002, "rsv bits set")
	end
	if op >= OP_CLOSE then
		if op > OP_PONG then
			protocol_error(1002, sformat("unknown opcode %d", op))
		end
		if len > 125 or not fin then
			protocol_error(1002, "bad control frame")
		end
	elseif op > OP_BINARY then
		protocol_error(1002, sformat("unknown opcode %d", op))
	end
	if ws.mode == "server" and not masked and ws.strict then
		protocol_error(1002, "unmasked client frame")
	end
	if ws.mode == "client" and masked then
		protocol_error(1002, "masked server frame")
	end
	if len == 126 then
		len = sunpack(">I2", read(2))
	elseif len == 127 then
		len = sunpack(">i8", read(8))
		if len < 0 then
			protocol_error(1009, "payload_len is too large")
		end
	end
	local max = ws.max_size
	if max and len > max then
		protocol_error(1009, "payload_len is too large")
	end
	local key = masked and read(4)
	local payload = len > 0 and read(len) or ""
	if key and len > 0 then
		payload = crypt.xor_str(payload, key)
	end
	return fin, op, payload
end

local function valid_utf8(s)
	return utf8.len(s) ~= nil
end

-- Reads frames until a complete data message: returns data, opname;
-- answers pings and reports control frames through `on` (ping, pong,
-- close(payload) -> stop).
local function read_message(ws, on)
	local parts, size, first_op
	while true do
		local fin, op, payload = read_frame(ws)
		if op == OP_CLOSE then
			return nil, payload
		elseif op == OP_PING then
			send_frame(ws, OP_PONG, payload)
			if on.ping then
				on.ping(payload)
			end
		elseif op == OP_PONG then
			if on.pong then
				on.pong(payload)
			end
		else
			-- RFC 6455 5.4: with no extension, fragments of two messages never
			-- interleave; whatever the mode, anything else is a protocol error
			if op == OP_CONTINUATION and parts == nil then
				protocol_error(1002, "continuation frame without a message")
			elseif op ~= OP_CONTINUATION and parts then
				protocol_error(1002, "new message inside a fragmented one")
			end
			if parts == nil then
				parts, size, first_op = {}, 0, op
			end
			size = size + #payload
			if ws.max_size and size > ws.max_size then
				protocol_error(1009, "payload_len is too large")
			end
			parts[#parts + 1] = payload
			if fin then
				local data = #parts == 1 and parts[1] or tconcat(parts)
				local name = first_op == OP_TEXT and "text" or "binary"
				if name == "text" and ws.strict and not valid_utf8(data) then
					protocol_error(1007, "text message is not UTF-8")
				end
				return data, name
			end
		end
	end
end

local function close_payload(payload)
	if #payload == 1 then
		protocol_error(1002, "truncated close frame")
	end
	if #payload >= 2 then
		return sunpack(">I2", payload), ssub(payload, 3)
	end
end

-- A message reader over any read(n) function, for tests and tools:
-- returns next() -> data, op | nil, close_payload, raising a table
-- { ws_code, text } on a protocol error. mode "server" reads client frames.
function M.decoder(read, mode, options)
	options = options or {}
	local ws = { read = read, write = function() end, mode = mode or "server",
		max_size = options.max_size, strict = options.strict }
	return function()
		local data, op = read_message(ws, {})
		if data == nil then
			close_payload(op)
		end
		return data, op
	end
end

---------------------------------------------------------------- server

local function write_refusal(ws, code, body)
	httpd.write_response(ws.write, code, body)
end

local function offered(list)
	local r = {}
	if type(list) == "table" then
		list = tconcat(list, ",")
	end
	for p in list:gmatch "[^,%s]+" do
		r[#r + 1] = p
	end
	return r
end

-- RFC 6455 4.1: the key is the base64 of 16 random bytes, so exactly 22
-- symbols and "==". Checked by shape: crypt.base64decode is lenient (it
-- skips bytes outside the alphabet) and raises on some outside input.
local KEY_PATTERN <const> = "^" .. string.rep("[A-Za-z0-9+/]", 22) .. "==$"

local function is_key(key)
	return type(key) == "string" and key:find(KEY_PATTERN) ~= nil
end

-- Validates the request; on success writes the 101 answer and returns
-- true; otherwise writes the refusal and returns false.
local function handshake_checks(ws, header, method, version, options)
	if method ~= "GET" then
		write_refusal(ws, 400, "need GET method")
		return false
	end
	if version < 1.1 then
		write_refusal(ws, 505)
		return false
	end
	local upgrade = header.upgrade
	if type(upgrade) ~= "string" or upgrade:lower() ~= "websocket" then
		write_refusal(ws, 426, "Upgrade Required")
		return false
	end
	if not header.host then
		write_refusal(ws, 400, "host Required")
		return false
	end
	local conn = header.connection
	if type(conn) ~= "string" or not conn:lower():find("upgrade", 1, true) then
		write_refusal(ws, 400, "Connection must Upgrade")
		return false
	end
	local key = header["sec-websocket-key"]
	if key == nil then
		write_refusal(ws, 400, "Sec-WebSocket-Key Required")
		return false
	end
	if not is_key(key) then
		write_refusal(ws, 400, "Sec-WebSocket-Key invalid")
		return false
	end
	if header["sec-websocket-version"] ~= "13" then
		write_refusal(ws, 400, "Sec-WebSocket-Version must 13")
		return false
	end
	local chosen
	local offer = header["sec-websocket-protocol"]
	if offer then
		local accepted = {}
		for _, p in ipairs(options.protocols or { "chat" }) do
			accepted[p] = true
		end
		for _, p in ipairs(offered(offer)) do
			if accepted[p] then
				chosen = p
				break
			end
		end
		if not chosen then
			local list = options.protocols or { "chat" }
			write_refusal(ws, 400, "Sec-WebSocket-Protocol need include " .. tconcat(list, ","))
			return false
		end
	end
	local accept = crypt.base64encode(crypt.sha1(key .. GUID))
	local out = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		.. "Sec-WebSocket-Accept: " .. accept .. "\r\n"
	if chosen then
		out = out .. "Sec-WebSocket-Protocol: " .. chosen .. "\r\n"
	end
	ws.write(out .. "\r\n")
	ws.real_ip = header["x-real-ip"]
	return true
end

-- Reads the upgrade request: header, url, method, version; or a status code
-- to answer with (413, 400: no request line, a malformed one or a bad
-- header line).
local function read_handshake(ws)
	local lines = {}
	local rest = internal.recvheader(ws.read, lines, "")
	if not rest then
		return 413
	end
	local method, url, version = (lines[1] or ""):match "^(%a+) (%S+) HTTP/(%d%.%d)$"
	if not method then
		return 400
	end
	local header = internal.parseheader(lines, 2, {})
	if not header then
		return 400
	end
	sockethelper.unread(ws.read, rest)
	return header, url, method, tonumber(version)
end

local function new_ws(id, mode, ifc, addr)
	return {
		id = id, socket_id = id, mode = mode, read = ifc.read, write = ifc.write,
		close = ifc.close, addr = addr, mask = mode == "client",
	}
end

local function drop(ws)
	if pool[ws.id] == ws then
		pool[ws.id] = nil
	end
	if ws.close then
		ws.close()
		ws.close = nil
	end
	socket.close(ws.id)
end

local function server_interface(id, protocol)
	if protocol == "wss" then
		local th = get_tlshelper()
		if SSLCTX_SERVER == nil then
			local ctx = th.newctx()
			ctx:set_cert(skynet.getenv "certfile" or "./server-cert.pem",
				skynet.getenv "keyfile" or "./server-key.pem")
			SSLCTX_SERVER = ctx
		end
		local tls = th.newtls("server", SSLCTX_SERVER)
		return {
			init = th.init_responsefunc(id, tls), read = th.readfunc(id, tls),
			write = th.writefunc(id, tls), close = th.closefunc(tls),
		}
	end
	return { read = sockethelper.readfunc(id), write = sockethelper.writefunc(id) }
end

local function server_session(ws, handle, options)
	local id = ws.id
	if handle.connect then
		handle.connect(id)
	end
	local header, url, method, version
	if options.upgrade then
		local u = options.upgrade
		header, url, method, version = u.header, u.url, u.method, u.version or 1.1
	else
		header, url, method, version = read_handshake(ws)
		if type(header) == "number" then
			write_refusal(ws, header)
			drop(ws)
			if handle.close then
				handle.close(id)
			end
			return true
		end
	end
	if not handshake_checks(ws, header, method, version, options) then
		drop(ws)
		if handle.close then
			handle.close(id)
		end
		return true
	end
	if handle.handshake then
		handle.handshake(id, header, url)
	end
	local on = {
		ping = handle.ping and function()
			handle.ping(id)
		end,
		pong = handle.pong and function()
			handle.pong(id)
		end,
	}
	while true do
		if ws.is_close then
			drop(ws)
			if handle.close then
				handle.close(id)
			end
			return true
		end
		local data, op = read_message(ws, on)
		if data == nil then
			local code, reason = close_payload(op)
			pcall(ws.write, "\x88\x00")
			drop(ws)
			if handle.close then
				handle.close(id, code, reason)
			end
			return true
		end
		if handle.message then
			handle.message(id, data, op)
		end
	end
end

function M.accept(id, handle, protocol, addr, options)
	protocol = protocol or "ws"
	if protocol ~= "ws" and protocol ~= "wss" then
		error(sformat("invalid websocket protocol:%s", tostring(protocol)))
	end
	options = options or {}
	if not options.upgrade then
		local ok, err = socket.start(id)
		if not ok then
			return false, err
		end
	end
	local ok, ifc = true, options.upgrade and options.upgrade.interface
	if not ifc then
		ok, ifc = pcall(server_interface, id, protocol)
	end
	if not ok then
		socket.close(id)
		return false, ifc
	end
	local ws = new_ws(id, "server", ifc, addr)
	ws.max_size = options.max_size or SERVER_MAX_SIZE
	ws.strict = options.strict and true or false
	pool[id] = ws
	if handle.warning then
		socket.warning(id, function(_, kb)
			handle.warning(ws, kb)
		end)
	end
	local okr, r = xpcall(function()
		if ifc.init and not options.upgrade then
			ifc.init()
		end
		return server_session(ws, handle, options)
	end, function(e)
		if e == sockethelper.socket_error or (type(e) == "table" and e.ws_code) then
			return e
		end
		return debug.traceback(tostring(e), 2)
	end)
	if okr then
		return r
	end
	if r == sockethelper.socket_error then
		local closed_by_script = ws.is_close
		drop(ws)
		if closed_by_script then
			if handle.close then
				handle.close(id)
			end
		elseif handle.error then
			handle.error(id, sockethelper.socket_error)
		end
		return true
	end
	if type(r) == "table" then
		pcall(ws.write, encode_frame(OP_CLOSE, spack(">I2", r.ws_code) .. r.text))
		drop(ws)
		if handle.error then
			pcall(handle.error, id, r.text)
		end
		return false, r.text
	end
	drop(ws)
	return false, r
end

---------------------------------------------------------------- client

local function client_interface(fd, protocol, hostname)
	if protocol == "wss" then
		local th = get_tlshelper()
		if SSLCTX_CLIENT == nil then
			SSLCTX_CLIENT = th.newctx()
		end
		local sni = not hostname:match "%d$" and hostname or nil
		local tls = th.newtls("client", SSLCTX_CLIENT, sni)
		return {
			init = th.init_requestfunc(fd, tls), read = th.readfunc(fd, tls),
			write = th.writefunc(fd, tls), close = th.closefunc(tls), sni = sni,
		}
	end
	return { read = sockethelper.readfunc(fd), write = sockethelper.writefunc(fd) }
end

local REQUEST_KEYS <const> = {
	Upgrade = true, Connection = true, ["Sec-WebSocket-Version"] = true,
	["Sec-WebSocket-Key"] = true,
}

local function client_handshake(ifc, host, uri, header)
	local key = crypt.base64encode(crypt.randomkey() .. crypt.randomkey())
	local request_header = {
		Upgrade = "websocket", Connection = "Upgrade", ["Sec-WebSocket-Version"] = "13",
		["Sec-WebSocket-Key"] = key,
	}
	if header then
		for k, v in pairs(header) do
			if REQUEST_KEYS[k] then
				error(k, 0)
			end
			request_header[k] = v
		end
	end
	request_header.Host = request_header.Host or host
	local code, body, recv = internal.request(ifc, "GET", host, uri, {}, request_header)
	if code ~= 101 then
		error(sformat("websocket handshake error: code[%s] info:%s", code, body), 0)
	end
	if type(recv.upgrade) ~= "string" or recv.upgrade:lower() ~= "websocket" then
		error("websocket handshake upgrade must websocket", 0)
	end
	if type(recv.connection) ~= "string" or recv.connection:lower() ~= "upgrade" then
		error("websocket handshake connection must upgrade", 0)
	end
	local accept = recv["sec-websocket-accept"]
	if not accept then
		error("websocket handshake need Sec-WebSocket-Accept", 0)
	end
	if accept ~= crypt.base64encode(crypt.sha1(key .. GUID)) then
		error("websocket handshake invalid Sec-WebSocket-Accept", 0)
	end
	return body
end

function M.connect(url, header, timeout, options)
	local protocol, hostpart, uri = url:match "^(%a+)://([^/?]+)(.*)$"
	if protocol ~= "ws" and protocol ~= "wss" then
		error(sformat("invalid protocol: %s", tostring(protocol)))
	end
	local hostname, port = hostpart:match "^([^:]+):?(%d*)$"
	if hostname == nil then
		error(sformat("invalid host: %s", hostpart))
	end
	local default_port = protocol == "wss" and 443 or 80
	port = port ~= "" and tonumber(port) or default_port
	if uri == "" then
		uri = "/"
	elseif uri:sub(1, 1) == "?" then
		uri = "/" .. uri
	end
	local fd = sockethelper.connect(hostname, port, timeout)
	local ifc = client_interface(fd, protocol, hostname)
	local cancel = timeout and sockethelper.deadline(fd, timeout)
	local ok, rest = pcall(function()
		if ifc.init then
			ifc.init(ifc.sni)
		end
		local host = port == default_port and hostname or hostname .. ":" .. port
		return client_handshake(ifc, host, uri, header)
	end)
	if cancel then
		cancel()
	end
	if not ok then
		if ifc.close then
			ifc.close()
		end
		socket.close(fd)
		error(rest, 0)
	end
	if rest ~= "" then
		sockethelper.unread(ifc.read, rest)
	end
	local ws = new_ws(fd, "client", ifc, hostpart)
	ws.max_size = options and options.max_size
	ws.strict = options and options.strict or false
	pool[fd] = ws
	return fd
end

---------------------------------------------------------------- open websockets

local function get(id)
	return assert(pool[id])
end

function M.read(id)
	local ws = get(id)
	local ok, data, op = pcall(read_message, ws, {})
	if not ok then
		local err = data
		if type(err) == "table" and err.ws_code then
			pcall(send_frame, ws, OP_CLOSE, spack(">I2", err.ws_code) .. err.text)
			drop(ws)
			error(err.text, 0)
		end
		if err == sockethelper.socket_error then
			drop(ws)
		end
		error(err, 0)
	end
	if data == nil then
		-- answer the close with the same code, then close
		local payload = op
		pcall(send_frame, ws, OP_CLOSE, ssub(payload, 1, 2))
		drop(ws)
		return false, payload
	end
	return data, op
end

function M.write(id, data, fmt, masking_key)
	local ws = get(id)
	fmt = fmt or "text"
	assert(fmt == "text" or fmt == "binary")
	send_frame(ws, fmt == "text" and OP_TEXT or OP_BINARY, data, masking_key)
end

function M.ping(id)
	local ws = get(id)
	ws.write(encode_frame(OP_PING, "", ws.mask and random_key() or nil))
end

function M.close(id, code, reason)
	local ws = pool[id]
	if ws == nil then
		return
	end
	local payload = ""
	if code then
		payload = spack(">I2", code) .. (reason or "")
	end
	local ok, err = pcall(send_frame, ws, OP_CLOSE, payload)
	if not ok then
		log("websocket.close: write failed for %d: %s", id, tostring(err))
	end
	ws.is_close = true
	pool[id] = nil
	if ws.mode == "client" then
		drop(ws)
	else
		-- the accept loop wakes from its read and ends the session
		socket.close(id)
	end
end

function M.addrinfo(id)
	local ws = pool[id]
	return ws and ws.addr
end

function M.real_ip(id)
	local ws = pool[id]
	return ws and ws.real_ip
end

function M.is_close(id)
	return pool[id] == nil
end

return M
