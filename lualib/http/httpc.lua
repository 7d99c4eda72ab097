-- http.httpc: an HTTP/1.1 client, one request per connection (no
-- keep-alive, redirects, decompression or proxies).
--
-- host is "[scheme://]name[:port]" (http or https, default ports 80 and
-- 443; IPv6 in brackets). Every call yields and raises on failure; a status
-- of 400 or more is a normal return. httpc.timeout (centiseconds, default
-- nil: none) bounds the connect and then the whole exchange: when it runs
-- out the socket is shut down and the call raises sockethelper.socket_error.
-- For request_stream the timer stops once the response header has been
-- read; httpc.stream_idle (cs, default nil) then bounds the wait for each
-- further piece. httpc.body_limit (bytes, default nil: none) caps the
-- bodies request/get/post accept ("Invalid response body" beyond it).
local skynet = require "skynet"
local socket = require "skynet.socket"
local internal = require "http.internal"
local sockethelper = require "http.sockethelper"

local sformat = string.format

local httpc = {}

local dns_enabled = false
local tlshelper, SSLCTX_CLIENT

local function parse_host(host)
	local scheme, rest = host:match "^(%a[%w+.-]*)://(.*)$"
	local protocol = "http"
	if scheme then
		protocol = scheme:lower()
		if protocol ~= "http" and protocol ~= "https" then
			error(sformat("Invalid protocol: %s", scheme))
		end
		host = rest
	end
	local hostname, port
	if host:sub(1, 1) == "[" then
		hostname, port = host:match "^%[([%x:.]+)%]:?(%d*)$"
		if hostname == nil then
			error(sformat("Invalid host: %s", host))
		end
	else
		local colons = select(2, host:gsub(":", ""))
		if colons > 1 then
			error(sformat("Invalid host: bare IPv6 address '%s', use '[%s]' instead", host, host))
		end
		hostname, port = host:match "^([^:/]+):?(%d*)$"
		if hostname == nil then
			error(sformat("Invalid host: %s", host))
		end
	end
	if port == "" then
		port = protocol == "https" and 443 or 80
	else
		port = tonumber(port)
	end
	return protocol, hostname, port, host
end

local function is_ip(name)
	return name:match "^%d+%.%d+%.%d+%.%d+$" or name:find(":", 1, true)
end

local function tls_interface(fd, hostname)
	if tlshelper == nil then
		tlshelper = require "http.tlshelper"
	end
	if SSLCTX_CLIENT == nil then
		SSLCTX_CLIENT = tlshelper.newctx()
	end
	local tls_ctx = tlshelper.newtls("client", SSLCTX_CLIENT, not is_ip(hostname) and hostname or nil)
	return {
		init = tlshelper.init_requestfunc(fd, tls_ctx),
		close = tlshelper.closefunc(tls_ctx),
		read = tlshelper.readfunc(fd, tls_ctx),
		write = tlshelper.writefunc(fd, tls_ctx),
		readall = tlshelper.readallfunc(fd, tls_ctx),
	}
end

local function plain_interface(fd)
	return {
		read = sockethelper.readfunc(fd),
		write = sockethelper.writefunc(fd),
		readall = function()
			return sockethelper.readall(fd)
		end,
	}
end

-- fd, interface, host (as sent in the Host header) for a host argument.
local function connect(host, timeout)
	local protocol, hostname, port, hosthdr = parse_host(host)
	local addr = hostname
	if dns_enabled and not is_ip(hostname) then
		local dns = require "skynet.dns"
		local ok, ip = pcall(dns.resolve, hostname)
		if not ok then
			error(ip, 0)
		end
		if not ip then
			error(sformat("%s dns resolve failed msg:illegal name", hostname))
		end
		addr = ip
	end
	local fd = sockethelper.connect(addr, port, timeout)
	local interface
	if protocol == "https" then
		local ok, ifc = pcall(tls_interface, fd, hostname)
		if not ok then
			socket.close(fd)
			error(ifc, 0)
		end
		interface = ifc
	else
		interface = plain_interface(fd)
	end
	if interface.init then
		local ok, err = pcall(interface.init, not is_ip(hostname) and hostname or nil)
		if not ok then
			interface.close()
			socket.close(fd)
			error(err, 0)
		end
	end
	return fd, interface, hosthdr
end

local function close_interface(interface, fd)
	if interface.close then
		interface.close()
	end
	socket.close(fd)
end

-- A timer shutting fd down after timeout cs; returns a function stopping it.
local function arm(fd, timeout)
	if timeout == nil then
		return function() end
	end
	local done = false
	local obj = skynet.timeout(timeout, function()
		if not done then
			done = true
			skynet.error(sformat("http.httpc: timeout of %d cs, shutting down fd = %d", timeout, fd))
			socket.shutdown(fd)
		end
	end)
	return function()
		if not done then
			done = true
			skynet.killthread(obj)
		end
	end
end

function httpc.request(method, hostname, url, recvheader, header, content)
	local timeout = httpc.timeout
	local fd, interface, host = connect(hostname, timeout)
	local disarm = arm(fd, timeout)
	local ok, statuscode, body, h = pcall(internal.request, interface, method, host, url, recvheader,
		header, content)
	local err = statuscode
	if ok then
		ok, body = pcall(internal.response, interface, statuscode, body, h, httpc.body_limit)
		err = body
	end
	disarm()
	close_interface(interface, fd)
	if ok then
		return statuscode, body
	end
	error(err, 0)
end

function httpc.head(hostname, url, recvheader, header, content)
	local timeout = httpc.timeout
	local fd, interface, host = connect(hostname, timeout)
	local disarm = arm(fd, timeout)
	local ok, statuscode = pcall(internal.request, interface, "HEAD", host, url, recvheader, header,
		content)
	disarm()
	close_interface(interface, fd)
	if ok then
		return statuscode
	end
	error(statuscode, 0)
end

function httpc.get(...)
	return httpc.request("GET", ...)
end

local function escape(s)
	return (string.gsub(s, "([^A-Za-z0-9_])", function(c)
		return sformat("%%%02X", string.byte(c))
	end))
end

function httpc.post(host, url, form, recvheader)
	local header = { ["content-type"] = "application/x-www-form-urlencoded" }
	local body = {}
	for k, v in pairs(form) do
		body[#body + 1] = sformat("%s=%s", escape(tostring(k)), escape(tostring(v)))
	end
	return httpc.request("POST", host, url, recvheader, header, table.concat(body, "&"))
end

function httpc.request_stream(method, hostname, url, recvheader, header, content)
	local timeout = httpc.timeout
	local fd, interface, host = connect(hostname, timeout)
	local disarm = arm(fd, timeout)
	local ok, statuscode, body, h = pcall(internal.request, interface, method, host, url, recvheader,
		header, content)
	disarm()
	if not ok then
		close_interface(interface, fd)
		error(statuscode, 0)
	end
	local idle = httpc.stream_idle
	if idle then
		local read = interface.read
		interface.read = function(n)
			local stop = arm(fd, idle)
			local ok2, r = pcall(read, n)
			stop()
			if not ok2 then
				error(r, 0)
			end
			return r
		end
	end
	local ok2, stream = pcall(internal.response_stream, interface, statuscode, body, h, function()
		close_interface(interface, fd)
	end)
	if not ok2 then
		close_interface(interface, fd)
		error(stream, 0)
	end
	return stream
end

function httpc.dns(server, port)
	local dns = require "skynet.dns"
	dns.server(server, port)
	dns_enabled = true
end

return httpc
