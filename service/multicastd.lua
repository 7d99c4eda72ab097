-- multicastd: the node's multicast channels (a uniqueservice, used through
-- skynet.multicast).
--
-- channel[id] is the set of subscriber handles of every live channel this
-- node owns ({handle = true}), count[id] its size. Channel ids name their
-- owner node in the low 8 bits: they start at the harbor id and go up by 256
-- (wrapping below bit 31), skipping ids in use. This runtime runs one node
-- (harbor 0), so a channel owned by another node has nowhere to go: SUB and
-- PUB of one fail (the caller sees "call failed").
--
-- Commands (lua protocol): call NEW() -> id; call SUB(c); send USUB(c);
-- call PUB(c, box, size); send DEL(c). PUB hands the published package (see
-- skynet.multicast.core) to every subscriber as a PTYPE_MULTICAST message
-- whose session is the channel id, whose source is the publisher and whose
-- payload is a copy of the package pointer; the package gets one reference
-- per delivery, and a delivery that cannot be sent (the subscriber is gone)
-- gives its reference back at once. The reply to PUB goes out after the
-- last delivery.
local skynet = require "skynet"
local mc = require "skynet.multicast.core"
local core = require "skynet.core"

local PTYPE_MULTICAST <const> = 2
local ID_MAX <const> = 0x7fffffff
local BOX_SIZE <const> = string.packsize "T" -- a package pointer

local c_redirect = core.redirect
local c_tostring = core.tostring
local sformat = string.format

local harbor_id -- this node's id: the low 8 bits of the channels it owns
local next_id -- where the search for a free id starts
local channel = {}
local count = {}

-- Raises unless c is a channel id this node owns.
local function check_local(c)
	if math.type(c) ~= "integer" or c < 0 or c > ID_MAX then
		error(sformat("multicastd: invalid channel id (%s)", tostring(c)))
	end
	if c & 0xff ~= harbor_id then
		error(sformat("multicastd: channel %d belongs to node %d, not reachable from here", c,
			c & 0xff))
	end
end

local function drop_box(box)
	mc.close(mc.bind(box, 1))
end

local CMD = {}

function CMD.NEW()
	local id = next_id
	while channel[id] do
		id = mc.nextid(id)
		if id == next_id then
			error "multicastd: no free channel id"
		end
	end
	channel[id] = {}
	count[id] = 0
	next_id = mc.nextid(id)
	return id
end

function CMD.SUB(source, c)
	check_local(c)
	local group = channel[c]
	if group and not group[source] then -- an unknown channel delivers nothing
		group[source] = true
		count[c] = count[c] + 1
	end
end

function CMD.USUB(source, c)
	check_local(c)
	local group = channel[c]
	if group == nil then
		error(sformat("multicastd: unsubscribe from unknown channel %d", c))
	end
	if group[source] then
		group[source] = nil
		count[c] = count[c] - 1
	end
end

function CMD.PUB(source, c, box, size)
	if size ~= BOX_SIZE then
		error(sformat("multicastd: invalid package size (%s)", tostring(size)))
	end
	local ok, err = pcall(check_local, c)
	if not ok then
		drop_box(box) -- nobody else will free it
		error(err, 0)
	end
	local group = channel[c]
	local n = group and count[c] or 0
	if n == 0 then
		drop_box(box)
		return
	end
	local msg = c_tostring(box, size) -- the pointer, copied into each delivery
	local pkg = mc.bind(box, n)
	for s in pairs(group) do
		if not c_redirect(s, source, PTYPE_MULTICAST, c, msg) then
			-- gone without unsubscribing: forget it, and its reference
			group[s] = nil
			count[c] = count[c] - 1
			mc.close(pkg)
		end
	end
end

function CMD.DEL(_, c)
	channel[c] = nil
	count[c] = nil
end

skynet.start(function()
	harbor_id = skynet.harbor(skynet.self())
	next_id = harbor_id
	skynet.dispatch("lua", function(session, source, cmd, ...)
		local f = CMD[cmd]
		if f == nil then
			error(sformat("multicastd: unknown command (%s)", tostring(cmd)))
		end
		if cmd == "NEW" then
			skynet.retpack(f())
		else
			f(source, ...)
			if session ~= 0 then
				skynet.retpack(nil)
			end
		end
	end)
end)
