-- http.tlshelper: closures that run TLS (ltls.c) over a socket id for
-- http.httpc, http.server and http.websocket.
--
-- readfunc keeps a plaintext buffer: read(n) returns exactly n bytes,
-- read() what is available (at least one byte, reading the socket as long
-- as the records decrypt to nothing); it registers a pushback function
-- with sockethelper like sockethelper.readfunc does. Socket failures raise
-- sockethelper.socket_error, TLS failures the texts of ltls.c.
local socket = require "skynet.socket"
local sockethelper = require "http.sockethelper"
local c = require "ltls.c"

local ssub = string.sub

local M = {}

local function raw_read(fd)
	if socket.invalid(fd) then
		error(sockethelper.socket_error("read failed fd = " .. tostring(fd)))
	end
	local s = socket.read(fd)
	if not s then
		error(sockethelper.socket_error("read failed fd = " .. tostring(fd)))
	end
	return s
end

local function raw_write(fd, s)
	if s and s ~= "" and not socket.write(fd, s) then
		error(sockethelper.socket_error("write failed fd = " .. tostring(fd)))
	end
end

function M.init_requestfunc(fd, tls_ctx)
	return function(hostname)
		if hostname then
			tls_ctx:set_ext_host_name(hostname)
		end
		raw_write(fd, tls_ctx:handshake())
		while not tls_ctx:finished() do
			raw_write(fd, tls_ctx:handshake(raw_read(fd)))
		end
	end
end

function M.init_responsefunc(fd, tls_ctx)
	return function()
		while not tls_ctx:finished() do
			raw_write(fd, tls_ctx:handshake(raw_read(fd)))
		end
		raw_write(fd, tls_ctx:write())
	end
end

function M.closefunc(tls_ctx)
	return function()
		pcall(tls_ctx.close, tls_ctx)
	end
end

function M.readfunc(fd, tls_ctx)
	local buf = tls_ctx:read()
	local function read(sz)
		if sz == nil then
			while buf == "" do
				buf = tls_ctx:read(raw_read(fd))
			end
			local r = buf
			buf = ""
			return r
		end
		while #buf < sz do
			buf = buf .. tls_ctx:read(raw_read(fd))
		end
		local r = ssub(buf, 1, sz)
		buf = ssub(buf, sz + 1)
		return r
	end
	sockethelper.register_unread(read, function(s)
		if s and s ~= "" then
			buf = s .. buf
		end
	end)
	return read
end

function M.writefunc(fd, tls_ctx)
	return function(s)
		raw_write(fd, tls_ctx:write(s))
	end
end

function M.readallfunc(fd, tls_ctx)
	return function()
		local parts = {}
		while true do
			local ok, s = pcall(raw_read, fd)
			if not ok then
				break
			end
			parts[#parts + 1] = tls_ctx:read(s)
		end
		return table.concat(parts)
	end
end

function M.newctx()
	return c.newctx()
end

function M.newtls(method, ssl_ctx, hostname)
	return c.newtls(method, ssl_ctx, hostname)
end

return M
