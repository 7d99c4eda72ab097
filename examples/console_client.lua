-- A terminal client for the debug console (docs/debug-console.md), run by
-- the system interpreter with the demo's socket module, so it needs nothing
-- that make does not build:
--   make console                                  (127.0.0.1:8000, the demo's)
--   make console CONSOLE_ARGS="127.0.0.1 8001"
--   LUA_CPATH='luaclib/?.so' lua5.4 examples/console_client.lua [host] [port]
-- Each line of stdin is sent as one command; the console's output is printed
-- up to its status line (<CMD OK> or <CMD Error>) before the next line is
-- read. Blank lines are skipped: the console answers nothing to them. No line
-- editing. At the end of stdin (Ctrl-D, or the end of a pipe: `echo list |
-- make console`) or after `quit` it exits with status 0; with 1 when the
-- connection failed, or closed before a command's status line.
local cs = require "clientsocket"

local WELCOME <const> = "Welcome to skynet console"
local STATUS <const> = { ["<CMD OK>"] = true, ["<CMD Error>"] = true }

local host, port = arg[1], arg[2]
if port == nil and host and host:match "^%d+$" then
	host, port = nil, host -- a port alone
end
host = host or "127.0.0.1"
port = math.tointeger(tonumber(port or "8000"))
if port == nil then
	io.stderr:write("usage: lua5.4 examples/console_client.lua [host] [port]\n")
	os.exit(2)
end

local TTY = cs.isatty(0) and cs.isatty(1)

local function die(fmt, ...)
	io.stderr:write("console: ", string.format(fmt, ...), "\n")
	os.exit(1)
end

local fd, err = cs.connect(host, port)
if fd == nil then
	die("%s:%d: %s (is a node with a debug console running there?)", host, port, err)
end

local buffer = "" -- received bytes not printed yet

-- Prints the lines that arrive until one for which stop(line) is true, and
-- returns it; returns nil, reason when the connection ends first. show(line)
-- says whether to print a line (all of them when absent).
local function read_until(stop, show)
	while true do
		local eol = buffer:find("\n", 1, true)
		if eol then
			local line = buffer:sub(1, eol - 1)
			buffer = buffer:sub(eol + 1)
			if show == nil or show(line) then
				io.write(line, "\n")
			end
			if stop(line) then
				io.flush()
				return line
			end
		else
			io.flush()
			local sock, perr = cs.poll(fd, -1, false)
			if sock == nil then
				return nil, perr
			end
			local data, rerr = cs.recv(fd)
			if data == nil then
				return nil, rerr
			end
			buffer = buffer .. data
		end
	end
end

local function is_status(line)
	return STATUS[line]
end

local function is_welcome(line)
	return line == WELCOME
end

local function on_tty()
	return TTY
end

local _, werr = read_until(is_welcome, on_tty)
if werr then
	die("%s:%d: closed before the welcome line (%s)", host, port, werr)
end

while true do
	if TTY then
		io.write "> "
		io.flush()
	end
	local line = io.read "l"
	if line == nil then
		if TTY then
			io.write "\n"
		end
		break
	end
	if line:find "%S" then
		local ok, serr = cs.write(fd, line .. "\n")
		if not ok then
			die("%s", serr)
		end
		local status, rerr = read_until(is_status)
		if status == nil then
			die("the console closed the connection during %q (%s)", line, rerr)
		end
		if line:lower():match "^%s*quit%s*$" then
			break
		end
	end
end
cs.close(fd)
