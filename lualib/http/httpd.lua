-- http.httpd: the server side of HTTP/1.1: read one request, write one
-- response.
--
-- read_request(read, bodylimit) returns 200, url, method, header, body; a
-- status code alone for a request it rejects (413 header too long or body
-- over bodylimit, 400 bad header line or content-length, 501 unknown
-- transfer-encoding, 505 HTTP version); or nil, err when the connection
-- failed (err is sockethelper.socket_error) or the request line is not
-- "METHOD target HTTP/x.y".
--
-- Keep-alive and pipelining: when `read` keeps a pushback buffer (it came
-- from sockethelper.readfunc or tlshelper.readfunc) the bytes read past the
-- end of this request are put back, so the next read_request on the same
-- read function gets the next request; a request with neither
-- content-length nor chunked encoding then has an empty body (RFC 7230).
-- With any other read function those bytes are returned as the body of
-- such a request and dropped otherwise (one request per connection).
local internal = require "http.internal"
local sockethelper = require "http.sockethelper"

local sformat = string.format
local smatch = string.match
local ssub = string.sub
local tconcat = table.concat

local httpd = {}

local http_status_msg = {
	[100] = "Continue",
	[101] = "Switching Protocols",
	[200] = "OK",
	[201] = "Created",
	[202] = "Accepted",
	[203] = "Non-Authoritative Information",
	[204] = "No Content",
	[205] = "Reset Content",
	[206] = "Partial Content",
	[300] = "Multiple Choices",
	[301] = "Moved Permanently",
	[302] = "Found",
	[303] = "See Other",
	[304] = "Not Modified",
	[305] = "Use Proxy",
	[307] = "Temporary Redirect",
	[400] = "Bad Request",
	[401] = "Unauthorized",
	[402] = "Payment Required",
	[403] = "Forbidden",
	[404] = "Not Found",
	[405] = "Method Not Allowed",
	[406] = "Not Acceptable",
	[407] = "Proxy Authentication Required",
	[408] = "Request Time-out",
	[409] = "Conflict",
	[410] = "Gone",
	[411] = "Length Required",
	[412] = "Precondition Failed",
	[413] = "Request Entity Too Large",
	[414] = "Request-URI Too Large",
	[415] = "Unsupported Media Type",
	[416] = "Requested range not satisfiable",
	[417] = "Expectation Failed",
	[500] = "Internal Server Error",
	[501] = "Not Implemented",
	[502] = "Bad Gateway",
	[503] = "Service Unavailable",
	[504] = "Gateway Time-out",
	[505] = "HTTP Version not supported",
}
httpd.status_message = http_status_msg

local function readall(read, bodylimit)
	local tmpline = {}
	local body = internal.recvheader(read, tmpline, "")
	if not body then
		return 413
	end
	local request = assert(tmpline[1])
	local method, url, httpver = smatch(request, "^(%a+) (%S+) HTTP/(%d%.%d)$")
	assert(method and url and httpver)
	httpver = tonumber(httpver)
	if httpver < 1.0 or httpver > 1.1 then
		return 505
	end
	local header = internal.parseheader(tmpline, 2, {})
	if not header then
		return 400
	end
	local mode = header["transfer-encoding"]
	if mode ~= nil and mode ~= "identity" and mode ~= "chunked" then
		return 501
	end
	local keep = sockethelper.unread(read, "") -- read keeps a pushback buffer
	local rest = ""
	if mode == "chunked" then
		body, header, rest = internal.recvchunkedbody(read, bodylimit, header, body)
		if not body then
			return 413
		end
	else
		local length = header["content-length"]
		if length ~= nil then
			local n = type(length) == "string" and smatch(length, "^%s*(%d+)%s*$")
			if not n or #n > 15 then
				return 400
			end
			length = tonumber(n)
			if bodylimit and length > bodylimit then
				return 413
			end
			if #body > length then
				body, rest = ssub(body, 1, length), ssub(body, length + 1)
			elseif #body < length then
				body = body .. read(length - #body)
			end
		elseif keep then
			body, rest = "", body
		end
	end
	if keep then
		sockethelper.unread(read, rest)
	end
	return 200, url, method, header, body, httpver
end

-- A sixth value on success, the HTTP version as a number (1.0 or 1.1), is
-- an addition: servers use it to pick the keep-alive default.
function httpd.read_request(read, bodylimit)
	local ok, code, url, method, header, body, httpver = pcall(readall, read, bodylimit)
	if ok then
		return code, url, method, header, body, httpver
	end
	return nil, code
end

local function bad_field(s)
	return s:find("[\r\n%z]") ~= nil
end

local function writeall(write, statuscode, bodyfunc, header)
	local out = { sformat("HTTP/1.1 %03d %s\r\n", statuscode, http_status_msg[statuscode] or "") }
	if header then
		for k, v in pairs(header) do
			k = tostring(k)
			if type(v) ~= "table" then
				v = { v }
			end
			for i = 1, #v do
				local s = tostring(v[i])
				if bad_field(k) or bad_field(s) then
					write(tconcat(out))
					error(sformat("httpd.write_response: bad header field %q", k))
				end
				out[#out + 1] = sformat("%s: %s\r\n", k, s)
			end
		end
	end
	local t = type(bodyfunc)
	if t == "string" then
		out[#out + 1] = sformat("content-length: %d\r\n\r\n", #bodyfunc)
		out[#out + 1] = bodyfunc
		write(tconcat(out))
	elseif t == "function" then
		out[#out + 1] = "transfer-encoding: chunked\r\n"
		write(tconcat(out))
		while true do
			local s = bodyfunc()
			if s == nil then
				write("\r\n0\r\n\r\n")
				break
			end
			if s ~= "" then
				write(sformat("\r\n%x\r\n", #s) .. s)
			end
		end
	elseif t == "nil" then
		out[#out + 1] = "\r\n"
		write(tconcat(out))
	else
		write(tconcat(out))
		assert(false)
	end
end

function httpd.write_response(write, statuscode, bodyfunc, header)
	local ok, err = pcall(writeall, write, statuscode, bodyfunc, header)
	if not ok then
		return false, err
	end
	return true
end

return httpd
