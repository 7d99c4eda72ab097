-- console: launches services from lines read on stdin.
--
--   newservice("console")        reads the process's stdin
--   newservice("console", id)    reads socket id instead (a connection the
--                                caller accepted and did not start; the
--                                console starts and owns it)
--   newservice("console", path)  reads the lines of a file
--
-- Each line (LF-terminated) is split into words. A line whose first word
-- is `snax` runs snax.newservice(word2, word3, ...); any other line with a
-- word runs skynet.newservice(<the whole line>), whose launcher splits it
-- into the name and the arguments; lines without a word are skipped.
-- Errors are swallowed (the launcher logs why a service failed), and one
-- launch completes before the next line is read. At end of input a last
-- line without LF is still run, then the console closes its input and
-- exits without logging anything. stdin redirected from a file (which the
-- socket layer cannot poll; seen as a seekable stdin) is read directly. If the
-- input cannot be opened at all, that is logged once and the console exits.
--
-- debug INFO returns counters: lines (read), empty (skipped), launched,
-- failed.
local skynet = require "skynet"
local socket = require "skynet.socket"

local input = ...
local stats = { lines = 0, empty = 0, launched = 0, failed = 0 }

local function launch(line)
	local words = {}
	for word in string.gmatch(line, "%S+") do
		words[#words + 1] = word
	end
	if #words == 0 then
		stats.empty = stats.empty + 1
		return
	end
	local ok
	if words[1] == "snax" then
		local snax = require "skynet.snax"
		ok = pcall(snax.newservice, table.unpack(words, 2))
	else
		ok = pcall(skynet.newservice, line)
	end
	if ok then
		stats.launched = stats.launched + 1
	else
		stats.failed = stats.failed + 1
	end
end

-- A line reader over a socket id: returns line, or nil, rest at the end.
local function socket_reader(fd)
	return function()
		local line, rest = socket.readline(fd, "\n")
		if line then
			return line
		end
		return nil, rest
	end, function()
		socket.close(fd)
	end
end

-- stdin that cannot be polled (a regular file) is read directly: reading a
-- file never waits, so the worker thread is not held up.
local function file_reader(file)
	return function()
		local line = file:read("L")
		if line == nil then
			return nil
		elseif string.sub(line, -1) == "\n" then
			return string.sub(line, 1, -2)
		end
		return nil, line
	end, function() end
end

local function open_input()
	if input == nil then
		if io.stdin:seek("cur") then -- a file (pipes and terminals cannot seek)
			return file_reader(io.stdin)
		end
		local fd, err = socket.stdin()
		if fd then
			return socket_reader(fd)
		end
		return nil, err
	end
	local id = math.tointeger(tonumber(input))
	if id == nil then
		local file, err = io.open(input, "r")
		if file == nil then
			return nil, err
		end
		local read = file_reader(file)
		return read, function()
			file:close()
		end
	end
	local fd, err = socket.start(id)
	if fd then
		return socket_reader(fd)
	end
	return nil, err
end

local function main_loop()
	local ok, read, close = pcall(open_input)
	if not ok or read == nil then
		skynet.error("console: can't read the input: " .. tostring(close or read))
		skynet.exit()
	end
	while true do
		local line, rest = read()
		if line == nil then
			if rest and rest ~= "" then
				stats.lines = stats.lines + 1
				launch(rest)
			end
			break
		end
		stats.lines = stats.lines + 1
		launch(line)
	end
	close()
	skynet.exit()
end

skynet.start(function()
	skynet.info_func(function()
		return stats
	end)
	skynet.fork(main_loop)
end)
