-- The demo game's text protocol, shared by the server, the bots and the
-- tests (examples/README.md documents every message). A message is one
-- frame (2-byte big-endian length, then the payload); the payload is one
-- line of words separated by spaces. A request is "<command> <args...>";
-- its answer is "ok <command> ..." or "err <command> <reason>", in request
-- order. Every other message the server sends is a push, whose first word
-- names the event (chat, move, hit, buff, ...).
local M = {}

local spack = string.pack
local sunpack = string.unpack

M.MAX_FRAME = 65535

-- The frame carrying payload s.
function M.frame(s)
	return spack(">s2", s)
end

-- Frames at the start of buf: a list of payloads, and the unused rest.
function M.unframe(buf)
	local out = {}
	local pos = 1
	while #buf - pos + 1 >= 2 do
		local n = sunpack(">I2", buf, pos)
		if #buf - pos + 1 < 2 + n then
			break
		end
		out[#out + 1] = buf:sub(pos + 2, pos + 1 + n)
		pos = pos + 2 + n
	end
	return out, buf:sub(pos)
end

-- True for the answer to a request, false for a push.
function M.is_reply(msg)
	return msg:sub(1, 3) == "ok " or msg:sub(1, 4) == "err " or msg == "ok" or msg == "err"
end

-- The words of a line (runs of non-space characters).
function M.words(line)
	local w = {}
	for word in line:gmatch "%S+" do
		w[#w + 1] = word
	end
	return w
end

-- The text after the first n words of line (nil if there is none).
function M.rest(line, n)
	local pat = "^%s*" .. string.rep("%S+%s+", n) .. "(.-)%s*$"
	local r = line:match(pat)
	if r == nil or r == "" then
		return nil
	end
	return r
end

-- The key=value fields of a message as a table (values are strings).
function M.fields(msg)
	local t = {}
	for k, v in msg:gmatch "([%w_]+)=(%S*)" do
		t[k] = v
	end
	return t
end

-- Grid steps of the move directions.
M.DIRS = {
	n = { 0, -1 }, s = { 0, 1 }, e = { 1, 0 }, w = { -1, 0 },
	ne = { 1, -1 }, nw = { -1, -1 }, se = { 1, 1 }, sw = { -1, 1 },
	north = { 0, -1 }, south = { 0, 1 }, east = { 1, 0 }, west = { -1, 0 },
	up = { 0, -1 }, down = { 0, 1 }, right = { 1, 0 }, left = { -1, 0 },
}

-- Seconds (one decimal) from centiseconds.
function M.secs(cs)
	return string.format("%.1f", cs / 100)
end

return M
