-- skynet.cluster.core against the byte captures of reference nodes: every
-- request and response of the worked examples is rebuilt here from its
-- arguments and compared byte for byte, and decoded back. Then the size
-- boundaries, the session counter, the decoder's rejections (with their
-- texts), buffer ownership, and a seeded stream of random bodies that must
-- only ever decode or raise.
local skynet = require "skynet"
local core = require "skynet.cluster.core"
local t = require "testlib"

local unhex, hex = t.unhex, t.hex
local pack = skynet.packstring

-- "00 0d | 00 | ..." to bytes ('|' separates fields in the captures).
local function H(s)
	return unhex((s:gsub("|", "")))
end

local function same(got, want, what)
	if got ~= want then
		error(string.format("%s:\n got  %s\n want %s", what, hex(got or "", " "), hex(want, " ")), 2)
	end
end

-- got starts with want.
local function prefix(got, want, what)
	same(got:sub(1, #want), want, what)
end

local function body_of(frame)
	local len = string.unpack(">I2", frame)
	t.eq(#frame, len + 2, "frame length prefix")
	return frame:sub(3)
end

local function req(addr, session, ...)
	return core.packrequest(addr, session, pack(...))
end

t.case("1. name query and its answer", function()
	local f, nexts = req(0, 1, "sdb")
	same(f, H "00 0d | 00 | 00 00 00 00 | 01 00 00 00 | 1c 73 64 62", "query")
	t.eq(nexts, 2, "next session")
	same(core.packresponse(1, true, pack(10)), H "00 07 | 01 00 00 00 | 01 | 0a 0a", "answer")
	local addr, s, msg, sz, padding, push = core.unpackrequest(body_of(f))
	t.eq(addr, 0, "addr")
	t.eq(s, 1, "session")
	t.eq(msg, pack "sdb", "payload")
	t.eq(sz, 4, "size")
	t.eq(padding, false, "padding")
	t.eq(push, false, "push")
	local rs, ok, data = core.unpackresponse(H "01 00 00 00 | 01 | 0a 0a")
	t.eq(rs, 1, "response session")
	t.eq(ok, true, "ok")
	t.eq(skynet.unpack(data), 10, "answer value")
end)

t.case("2, 3. small calls by @name, number and .name", function()
	local payload = H "1c 47 45 54 0c 61"
	same(pack("GET", "a"), payload, "pack(GET, a)")
	same((req("@sdb", 2, "GET", "a")),
		H "00 10 | 80 | 04 | 40 73 64 62 | 02 00 00 00 | 1c 47 45 54 0c 61", "@sdb")
	same(core.packresponse(2, true, pack "foobar"),
		H "00 0c | 02 00 00 00 | 01 | 34 66 6f 6f 62 61 72", "foobar reply")
	same((req(10, 3, "GET", "a")),
		H "00 0f | 00 | 0a 00 00 00 | 03 00 00 00 | 1c 47 45 54 0c 61", "numeric")
	same(core.packresponse(3, true, pack "foobar"),
		H "00 0c | 03 00 00 00 | 01 | 34 66 6f 6f 62 61 72", "numeric reply")
	same((req(".sdbl", 4, "GET", "a")),
		H "00 11 | 80 | 05 | 2e 73 64 62 6c | 04 00 00 00 | 1c 47 45 54 0c 61", ".sdbl")
	same((req(10.0, 3, "GET", "a")), (req(10, 3, "GET", "a")), "integral float address")
	local addr, s, msg, sz, padding, push = core.unpackrequest(
		H "80 | 04 | 40 73 64 62 | 02 00 00 00 | 1c 47 45 54 0c 61")
	t.eq(addr, "@sdb", "name")
	t.eq(s, 2, "session")
	same(msg, payload, "payload")
	t.eq(sz, 6, "size")
	t.eq(padding, false, "padding")
	t.eq(push, false, "push")
end)

t.case("4. pushes: session 0 on the wire, the counter does not move", function()
	local f, nexts = core.packpush("@sdb", 7, pack("PING", "hi"))
	same(f, H "00 12 | 80 | 04 | 40 73 64 62 | 00 00 00 00 | 24 50 49 4e 47 14 68 69", "@sdb push")
	t.eq(nexts, 7, "session kept")
	f, nexts = core.packpush(10, 7, pack("PING", "n"))
	same(f, H "00 10 | 00 | 0a 00 00 00 | 00 00 00 00 | 24 50 49 4e 47 0c 6e", "numeric push")
	t.eq(nexts, 7, "session kept")
	local _, s, _, _, _, push = core.unpackrequest(body_of(f))
	t.eq(s, 0, "session")
	t.eq(push, true, "is push")
end)

t.case("5. error responses", function()
	same(core.packresponse(12, false, "Invalid name"),
		H "00 11 | 0c 00 00 00 | 00 | 49 6e 76 61 6c 69 64 20 6e 61 6d 65", "Invalid name")
	same(core.packresponse(13, false, "name not found"),
		H "00 13 | 0d 00 00 00 | 00" .. "name not found", "name not found")
	local text = "/opt/skynet-v1.8.0/lualib/skynet.lua:720: call failed"
	same(core.packresponse(11, false, text), H "00 3a | 0b 00 00 00 | 00" .. text, "raised")
	local s, ok, data = core.unpackresponse(H "0b 00 00 00 | 00" .. text)
	t.eq(s, 11, "session")
	t.eq(ok, false, "ok")
	t.eq(data, text, "text")
	-- an error text is never split: it is cut to 0x8000 bytes
	local long = core.packresponse(1, false, string.rep("e", 40000))
	t.eq(type(long), "string", "one frame")
	t.eq(#long, 2 + 5 + 0x8000, "cut to 0x8000")
end)

local function check_parts(parts, session, payload, sizes, what)
	t.eq(#parts, #sizes, what .. ": number of parts")
	local off = 0
	for i, size in ipairs(sizes) do
		local kind = i == #sizes and "03" or "02"
		local want = string.pack(">I2", size + 5) .. H(kind) .. string.pack("<I4", session)
			.. payload:sub(off + 1, off + size)
		same(parts[i], want, string.format("%s: part %d", what, i))
		off = off + size
	end
	t.eq(off, #payload, what .. ": parts cover the payload")
end

t.case("6. multi-part requests and the 0x8000 boundary", function()
	local payload = pack("SET", "big", string.rep("X", 70000))
	t.eq(#payload, 70013, "payload size")
	prefix(payload, H "1c 53 45 54 1c 62 69 67 25 70 11 01 00", "payload head")
	local f, nexts, parts = core.packrequest("@sdb", 5, payload)
	same(f, H "00 0e | 81 | 04 | 40 73 64 62 | 05 00 00 00 | 7d 11 01 00", "header")
	t.eq(nexts, 6, "next session")
	prefix(parts[1], H "80 05 | 02 | 05 00 00 00 | 1c 53 45 54 1c 62 69 67 25 70 11 01 00",
		"first part head")
	prefix(parts[3], H "11 82 | 03 | 05 00 00 00 | 58", "last part head")
	check_parts(parts, 5, payload, { 32768, 32768, 4477 }, "@sdb 70013")

	local numeric = string.rep("N", 33008)
	f, nexts, parts = core.packrequest(10, 20, numeric)
	same(f, H "00 0d | 01 | 0a 00 00 00 | 14 00 00 00 | f0 80 00 00", "numeric header")
	t.eq(nexts, 21, "next")
	prefix(parts[2], H "00 f5 | 03 | 14 00 00 00", "numeric last part")
	check_parts(parts, 20, numeric, { 32768, 240 }, "numeric 33008")

	local exact = string.rep("E", 32768)
	f, nexts, parts = core.packrequest("@sdb", 8, exact)
	same(f, H "00 0e | 81 | 04 | 40 73 64 62 | 08 00 00 00 | 00 80 00 00", "32768 header")
	t.eq(nexts, 9, "next")
	check_parts(parts, 8, exact, { 32768 }, "32768 bytes: one final part")
	prefix(parts[1], H "80 05 | 03 | 08 00 00 00 | 45", "32768 part")

	f, nexts, parts = core.packrequest("@sdb", 9, string.rep("E", 32767))
	t.eq(parts, nil, "32767 bytes: no parts")
	prefix(f, H "80 09 | 80", "32767 bytes: one 0x80 frame of len 0x8009")
	t.eq(nexts, 10, "next")

	-- the header decodes to the total, the parts to their slices
	local addr, s, msg, sz, padding, push = core.unpackrequest(
		H "81 | 04 | 40 73 64 62 | 05 00 00 00 | 7d 11 01 00")
	t.eq(addr, "@sdb", "header addr")
	t.eq(s, 5, "header session")
	t.eq(msg, nil, "header has no payload")
	t.eq(sz, 70013, "header total")
	t.eq(padding, true, "header padding")
	t.eq(push, false, "header is a call")
	local _, _, again = core.packrequest("@sdb", 5, payload)
	local a, ps, bytes, bsz, more = core.unpackrequest(body_of(again[1]))
	t.eq(a, false, "part addr")
	t.eq(ps, 5, "part session")
	t.eq(#bytes, 32768, "part bytes")
	t.eq(bsz, 32768, "part size")
	t.eq(more, true, "more follow")
	local _, _, _, _, last = core.unpackrequest(H "03 | 05 00 00 00 | 58")
	t.eq(last, false, "final part")
end)

t.case("7. multi-part responses and their boundary", function()
	same((req("@sdb", 6, "LEN", 40000)),
		H "00 11 | 80 | 04 | 40 73 64 62 | 06 00 00 00 | 1c 4c 45 4e 12 40 9c", "LEN request")
	local reply = pack(string.rep("R", 40000))
	t.eq(#reply, 40003, "reply size")
	local frames = core.packresponse(6, true, reply)
	t.eq(type(frames), "table", "split")
	t.eq(#frames, 3, "begin + 2 pieces")
	same(frames[1], H "00 09 | 06 00 00 00 | 02 | 43 9c 00 00", "begin")
	prefix(frames[2], H "80 05 | 06 00 00 00 | 03 | 15 40 9c 52 52", "piece")
	t.eq(#frames[2], 2 + 5 + 32768, "piece size")
	prefix(frames[3], H "1c 48 | 06 00 00 00 | 04 | 52", "final piece")
	t.eq(#frames[3], 2 + 5 + 7235, "final size")

	local one = core.packresponse(9, true, pack(string.rep("R", 32765)))
	t.eq(type(one), "string", "32768 bytes: one frame")
	prefix(one, H "80 05 | 09 00 00 00 | 01 | 15 fd 7f 52", "32768-byte reply")

	local over = core.packresponse(10, true, string.rep("R", 32769))
	same(over[1], H "00 09 | 0a 00 00 00 | 02 | 01 80 00 00", "32769 begin")
	prefix(over[2], H "80 05 | 0a 00 00 00 | 03", "32769 piece")
	same(over[3], H "00 06 | 0a 00 00 00 | 04 | 52", "32769 final")

	-- decoding: begin gives the total, the pieces their bytes
	local s, ok, total, padding = core.unpackresponse(body_of(frames[1]))
	t.eq(s, 6, "session")
	t.eq(ok, true, "ok")
	t.eq(total, 40003, "total")
	t.eq(padding, true, "begin padding")
	local _, _, piece, more = core.unpackresponse(body_of(frames[2]))
	t.eq(#piece, 32768, "piece")
	t.eq(more, true, "more")
	local _, _, last, more2 = core.unpackresponse(body_of(frames[3]))
	t.eq(#last, 7235, "last")
	t.eq(more2, false, "no more")
	t.eq(core.concat { 40003, piece, last }, reply, "concat")
	t.eq(core.concat { 40004, piece, last }, nil, "concat mismatch")
	local acc = { 5 }
	core.append(acc, "abc")
	core.append(acc, "de")
	t.eq(core.concat(acc), "abcde", "append + concat")
	-- empty reply: a 5-byte body gives no values
	same(core.packresponse(5, true, ""), H "00 05 | 05 00 00 00 | 01", "empty reply")
	local _, eok, edata = core.unpackresponse(H "05 00 00 00 | 01")
	t.eq(eok, true, "empty ok")
	t.eq(edata, "", "empty data")
end)

t.case("8. multi-part pushes take a session", function()
	local payload = pack("PING", string.rep("Q", 40000))
	t.eq(#payload, 40008, "payload")
	local f, nexts, parts = core.packpush(10, 19, payload)
	same(f, H "00 0d | 41 | 0a 00 00 00 | 13 00 00 00 | 48 9c 00 00", "numeric header")
	t.eq(nexts, 20, "session used up")
	prefix(parts[1], H "80 05 | 02 | 13 00 00 00 | 24 50 49 4e 47 15 40 9c 51 51", "part")
	prefix(parts[2], H "1c 4d | 03 | 13 00 00 00 | 51", "final part, 7240 bytes")
	check_parts(parts, 19, payload, { 32768, 7240 }, "push parts")
	f = core.packpush("@sdb", 18, payload)
	same(f, H "00 0e | c1 | 04 | 40 73 64 62 | 12 00 00 00 | 48 9c 00 00", "named header")
	local _, _, _, total, padding, push = core.unpackrequest(body_of(f))
	t.eq(total, 40008, "total")
	t.eq(padding, true, "header")
	t.eq(push, true, "push header")
end)

t.case("9. trace frame, then a call; an out-of-order answer", function()
	local tag = "(vm16448-db-18):00000008-1"
	same(core.packtrace(tag), H "00 1b | 04" .. tag, "trace frame")
	same((req("@sdb", 17, "GET", "a")),
		H "00 10 | 80 | 04 | 40 73 64 62 | 11 00 00 00 | 1c 47 45 54 0c 61", "traced call")
	t.eq(core.unpackrequest(H "04" .. tag), tag, "trace decodes to its tag")
	t.eq(select("#", core.unpackrequest(H "04" .. tag)), 1, "trace gives one value")
	same(core.packresponse(1, true, pack "slept"), H "00 0b | 01 00 00 00 | 01 | 2c 73 6c 65 70 74",
		"slept")
	t.raises("trace tag is too long", core.packtrace, string.rep("t", 0x8001))
end)

t.case("10. snax through a proxy", function()
	same((req(".service", 22, "QUERY", "snaxd", "pingsnax")),
		H("00 23 | 80 | 08 | 2e 73 65 72 76 69 63 65 | 16 00 00 00 | 2c 51 55 45 52 59 2c 73 6e"
			.. " 61 78 64 44 70 69 6e 67 73 6e 61 78"), "QUERY")
	same(core.packresponse(22, true, pack(14)), H "00 07 | 16 00 00 00 | 01 | 0a 0e", "handle")
	same((core.packpush(14, 23, pack(6, "world"))),
		H "00 11 | 00 | 0e 00 00 00 | 00 00 00 00 | 0a 06 2c 77 6f 72 6c 64", "post")
	same((req(14, 23, 5, "x")), H "00 0d | 00 | 0e 00 00 00 | 17 00 00 00 | 0a 05 0c 78", "req")
	same(core.packresponse(23, true, pack "pong x"),
		H "00 0c | 17 00 00 00 | 01 | 34 70 6f 6e 67 20 78", "pong")
end)

t.case("11. the edge-case frames decode as captured", function()
	local a, s, msg, _, _, push = core.unpackrequest(
		H "80 | 07 | 40 6e 6f 73 75 63 68 | 00 00 00 00 | 24 50 49 4e 47 0c 78")
	t.eq(a, "@nosuch", "push name")
	t.eq(s, 0, "push session")
	t.eq(push, true, "push")
	same(msg, pack("PING", "x"), "push payload")
	same(core.packresponse(0, false, "Invalid name"), H "00 11 | 00 00 00 00 | 00" .. "Invalid name",
		"session-0 error")
	same(core.packresponse(0, true, pack(10)), H "00 07 | 00 00 00 00 | 01 | 0a 0a", "query answer")
	same(core.packresponse(50, false, "Invalid name"), H "00 11 | 32 00 00 00 | 00" .. "Invalid name",
		"orphan part answer")
	same(core.packresponse(51, false, "Invalid large req"),
		H "00 16 | 33 00 00 00 | 00" .. "Invalid large req", "bad total answer")
	same(core.packresponse(0xfffffffe, true, ""), H "00 05 | fe ff ff ff | 01", "any session echoes")
	local hs = core.unpackresponse(H "fe ff ff ff | 01")
	t.eq(hs, 0xfffffffe, "session decodes unsigned")
end)

t.case("sessions wrap after 0x7fffffff; bad sessions and addresses", function()
	local _, nexts = req(1, 0x7fffffff, "x")
	t.eq(nexts, 1, "wrap to 1")
	local _, pnexts = core.packpush(1, 0x7fffffff, string.rep("p", 0x8000))
	t.eq(pnexts, 1, "multi push wraps too")
	t.raises("Invalid request session 0", req, 1, 0, "x")
	t.raises("Invalid request session -3", req, 1, -3, "x")
	t.raises("name is not a string, it's a table", req, {}, 1, "x")
	t.raises("name length is invalid, must be between 1 and 255 characters: ", req, "", 1, "x")
	t.raises("name length is invalid", req, string.rep("n", 256), 1, "x")
	local f = req(string.rep("n", 255), 1, "x")
	t.eq(f:byte(4), 255, "255-byte name")
	t.raises("address out of range", req, -1, 1, "x")
	t.raises("address out of range", req, 0x100000000, 1, "x")
	t.raises("not an integer", req, 1.5, 1, "x")
	t.eq(core.isname "@x", true, "isname")
	t.eq(core.isname ".x", false, "isname .x")
	t.eq(core.isname(3), false, "isname number")
	t.ok(core.nodename():match "%d+$", "nodename ends with the pid")
	t.ok(not core.nodename():find "[%s%c]", "nodename has no blanks")
end)

t.case("the decoder rejects malformed frames with the reference texts", function()
	local cases = {
		{ "", "Invalid req package. size == 0" },
		{ H "00 01 02 03 04 05 06 07", "Invalid cluster message (size=8)" },
		{ H "80", "Invalid cluster message (size=1)" },
		{ H "80 05 40 61 62 63 64 00 00 00", "Invalid cluster message (size=10)" },
		{ H "01 0a 00 00 00 01 00 00 00 00 00 00", "Invalid cluster message size 12 (multi req must be 13)" },
		{ H "41 0a 00 00 00 01 00 00 00 00 00 00 00 00", "multi req must be 13" },
		{ H "81 04 40 73 64 62 01 00 00 00 00 00 00", "Invalid cluster message (size=13)" },
		{ H "c1 04 40 73", "Invalid cluster message (size=4)" },
		{ H "02 01 00 00", "Invalid cluster multi part message" },
		{ H "03", "Invalid cluster multi part message" },
		{ H "05 00", "Invalid req package type 5" },
		{ H "ff 00", "Invalid req package type -1" },
	}
	for _, c in ipairs(cases) do
		t.raises(c[2], core.unpackrequest, c[1])
	end
	-- the shortest valid bodies
	t.eq(select(2, core.unpackrequest(H "00 01 00 00 00 02 00 00 00")), 2, "empty numeric payload")
	t.eq(core.unpackrequest(H "80 00 00 00 00 00"), "", "zero-length name decodes (the agent refuses it)")
	t.eq(core.unpackrequest(H "04"), "", "empty trace tag")
	local rcases = {
		{ H "01 00 00", "Invalid response (size=3)" },
		{ H "01 00 00 00 02 05 00 00", "Invalid multi-part response begin (size=8)" },
		{ H "01 00 00 00 02 05 00 00 00 00", "Invalid multi-part response begin (size=10)" },
		{ H "01 00 00 00 07", "Invalid response status 7" },
	}
	for _, c in ipairs(rcases) do
		t.raises(c[2], core.unpackresponse, c[1])
	end
end)

t.case("light userdata: packrequest frees it, the decoders only read it", function()
	local before = collectgarbage "count"
	for i = 1, 200 do
		local msg, sz = skynet.pack("GET", string.rep("z", i * 50))
		local f = core.packrequest("@x", i, msg, sz) -- frees msg
		t.eq(#f > sz, true, "frame holds the payload")
		local push, psz = skynet.pack(i)
		core.packpush(i, 1, push, psz)
		local bad, bsz = skynet.pack(i)
		t.raises("name is not a string", core.packrequest, true, 1, bad, bsz) -- freed as well
	end
	-- the others read a buffer the caller still owns: trashing it after is
	-- no double free (ASan would stop the node)
	local msg, sz = skynet.pack("GET", "a")
	local r = core.packresponse(3, true, msg, sz)
	same(r, H "00 0b | 03 00 00 00 | 01 | 1c 47 45 54 0c 61", "response from a pointer")
	t.eq(select(4, pcall(core.unpackrequest, msg, sz)), nil, "decoded from a pointer")
	t.raises("Invalid response status 12", core.unpackresponse, msg, sz) -- read, not freed
	local acc = { sz }
	core.append(acc, msg, sz)
	skynet.trash(msg, sz)
	same(core.concat(acc), H "1c 47 45 54 0c 61", "append copies")
	t.ok(collectgarbage "count" - before < 4096, "no runaway heap")
	-- (LSan in the sanitizer runs reports any buffer left behind)
end)

t.case("random bodies only decode or raise (seeded)", function()
	local seed = 12
	local function rnd(n)
		seed = (seed * 1103515245 + 12345) % 2147483648
		return seed % n
	end
	local kinds = { 0x00, 0x80, 0x01, 0x41, 0x81, 0xc1, 0x02, 0x03, 0x04, 0x05, 0xff }
	local decoded, refused = 0, 0
	for _ = 1, 3000 do
		local n = rnd(40)
		local bytes = { string.char(kinds[rnd(#kinds) + 1]) }
		for i = 2, n do
			bytes[i] = string.char(rnd(256))
		end
		local body = table.concat(bytes, "", 1, n)
		if pcall(core.unpackrequest, body) then
			decoded = decoded + 1
		else
			refused = refused + 1
		end
		local ok, s = pcall(core.unpackresponse, body)
		t.ok(not ok or math.type(s) == "integer", "response session")
	end
	t.ok(decoded > 100 and refused > 100, "both outcomes seen")
end)

t.start()
