-- service/console.lua (the stdin console, not debug_console): the lines
-- come from a TCP connection of this service handed to the console in place
-- of stdin. Checks plain launches (the launcher splits the line), snax
-- lines, skipped empty lines, failing launches that do not stop the loop,
-- one launch at a time in line order, a last line without LF, and the quiet
-- exit at end of input; then the same from a file (the path stdin takes
-- when it is redirected from a file).
local skynet = require "skynet"
local socket = require "skynet.socket"
local t = require "testlib"

local me

-- A connected pair: our client end, and the accepted end (not started).
local function pair()
	local listen, _, port = socket.listen("127.0.0.1", 0)
	local accepted
	local token = {}
	socket.start(listen, function(id)
		accepted = id
		skynet.wakeup(token)
	end)
	local client = assert(socket.open("127.0.0.1", port))
	if accepted == nil then
		skynet.wait(token)
	end
	socket.close(listen)
	return client, accepted
end

local function info(console)
	return skynet.call(console, "debug", "INFO")
end

local function alive(handle)
	return skynet.call(".launcher", "lua", "LIST")[skynet.address(handle)] ~= nil
end

-- Waits until the console has read n lines (or exited).
local function wait_lines(console, n)
	for _ = 1, 200 do
		if not alive(console) or info(console).lines >= n then
			return
		end
		skynet.sleep(1)
	end
end

t.case("lines launch services in order; errors and empty lines are skipped", function()
	local client, id = pair()
	local console = skynet.newservice("console", id)
	socket.write(client, table.concat({
		"svc_stdin_console_mark " .. me .. " a  b",
		"",
		"   \t ",
		"svc_start_error",
		"no_such_service_here x",
		"snax snax_counter " .. me .. " x y",
		"snax snax_nothere",
		"snax",
		"svc_stdin_console_mark " .. me .. " last",
	}, "\n") .. "\n")
	wait_lines(console, 9)
	t.ok(t.wait_marks(3), "marks arrived")
	t.same(t.marks, { "a,b", "init x,y", "last" }, "launches in line order")
	local s = info(console)
	t.eq(s.lines, 9, "lines read")
	t.eq(s.empty, 2, "empty lines skipped")
	t.eq(s.launched, 3, "launched")
	t.eq(s.failed, 4, "failed launches swallowed")

	-- A last line without LF still runs; then the console exits quietly.
	socket.write(client, "svc_stdin_console_mark " .. me .. " tail")
	skynet.sleep(5)
	t.eq(#t.marks, 3, "no LF yet: nothing launched")
	socket.close(client)
	t.ok(t.wait_marks(4), "the last line ran at end of input")
	t.eq(t.marks[4], "tail", "tail mark")
	for _ = 1, 100 do
		if not alive(console) then
			break
		end
		skynet.sleep(1)
	end
	t.eq(alive(console), false, "the console exited at end of input")
	t.raises("call to invalid address", info, console)
end)

t.case("a console whose input is already closed exits at once", function()
	local client, id = pair()
	socket.close(client)
	local console = skynet.newservice("console", id)
	for _ = 1, 100 do
		if not alive(console) then
			break
		end
		skynet.sleep(1)
	end
	t.eq(alive(console), false, "exited")
end)

t.case("lines from a file; a missing file is reported and the console exits", function()
	local path = os.tmpname()
	local f = assert(io.open(path, "w"))
	f:write("svc_stdin_console_mark " .. me .. " f1\n\nsvc_stdin_console_mark " .. me .. " f2")
	f:close()
	local first = #t.marks
	local console = skynet.newservice("console", path)
	t.ok(t.wait_marks(first + 2), "file lines ran")
	t.eq(t.marks[first + 1], "f1", "first file line")
	t.eq(t.marks[first + 2], "f2", "last file line without LF")
	for _ = 1, 100 do
		if not alive(console) then
			break
		end
		skynet.sleep(1)
	end
	os.remove(path)
	t.eq(alive(console), false, "exited at the end of the file")

	console = skynet.newservice("console", path .. ".missing")
	t.quiesce()
	t.eq(alive(console), false, "exited")
end)

t.start(nil, function()
	me = skynet.address(skynet.self())
end)
