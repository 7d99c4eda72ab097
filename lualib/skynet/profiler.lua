-- skynet.profiler: the node's sampling profiler (docs/ref/skynet.profiler.md).
--
--   local profiler = require "skynet.profiler"
--   profiler.start()              -- every Lua service, 100 samples a second
--   profiler.start(addr, 250)     -- one service (a handle, ":hex" or ".name")
--   local text, samples = profiler.stop("hot.folded")  -- also kept as the last profile
--   profiler.dump()               -- the last profile's folded text
--   profiler.status()             -- { running, target, hz, samples, ... }
--
-- The profile is the node's, not the caller's: any service may stop a
-- profile another one started, and one runs at a time. The text is folded
-- stacks (flamegraph.pl, inferno, speedscope), one line per stack,
-- "name :addr;frame;...;frame count", most samples first. The sampling
-- itself is done by the core (skynet-src/skynet_profiler.c) and by snlua
-- (service-src/snlua/sampler.c): this module checks arguments and writes
-- files.
local skynet = require "skynet"
local core = require "skynet.profiler.core"

local sformat = string.format

local M = {}

local HZ_DEFAULT <const> = 100
local HZ_MAX <const> = 1000

-- nil or "all" -> 0 (every service); a handle, ":hex" or ".name" -> handle.
local function to_target(address)
	if address == nil or address == "all" then
		return 0
	end
	if math.type(address) == "integer" and address > 0 and address <= 0xffffffff then
		return address
	end
	if type(address) == "string" then
		local hex = address:match "^:(%x+)$"
		if hex and #hex <= 8 and tonumber(hex, 16) > 0 then
			return tonumber(hex, 16)
		end
		if address:sub(1, 1) == "." then
			local h = skynet.localname(address)
			if h then
				return h
			end
			error(sformat("skynet.profiler.start: unknown name (%s)", address), 3)
		end
	end
	error(sformat("skynet.profiler.start: bad address (%s)", tostring(address)), 3)
end

local function to_hz(hz)
	if hz == nil then
		return HZ_DEFAULT
	end
	local n = math.tointeger(hz)
	if n == nil or n < 1 or n > HZ_MAX then
		error(sformat("skynet.profiler.start: bad hz (%s), 1 to %d", tostring(hz), HZ_MAX), 3)
	end
	return n
end

-- start([address], [hz]): true, or nil and why (a profile runs already).
function M.start(address, hz)
	local target = to_target(address)
	local rate = to_hz(hz)
	local ok, err = core.start(target, rate)
	if ok then
		return true
	end
	if err == "busy" then
		return nil, "a profile is running already (stop it first)"
	end
	return nil, "the profiler cannot run on this node (its signal or thread is taken; see the log)"
end

local function write_file(file, text)
	local f, err = io.open(file, "wb")
	if f == nil then
		return nil, sformat("cannot write %s: %s", file, err)
	end
	local ok, werr = f:write(text)
	f:close()
	if not ok then
		return nil, sformat("cannot write %s: %s", file, werr)
	end
	return true
end

local function check_file(name, file)
	if file ~= nil and (type(file) ~= "string" or file == "") then
		error(sformat("skynet.profiler.%s: bad file (%s)", name, tostring(file)), 3)
	end
end

-- The folded text and the sample count of a profile that core's get
-- returned, written to file when given; nil and why (missing) when there
-- is no such profile or the file cannot be written.
local function deliver(name, file, get, missing)
	check_file(name, file)
	local text, samples = get()
	if text == nil then
		return nil, missing
	end
	if file then
		local ok, err = write_file(file, text)
		if not ok then
			return nil, err
		end
	end
	return text, samples
end

-- stop([file]): the folded text and the number of samples (the text is
-- also written to file when given); nil and why when no profile runs or
-- the file cannot be written (the profile is kept as the last one anyway).
function M.stop(file)
	return deliver("stop", file, core.stop, "no profile is running")
end

-- dump([file]): the last stopped profile, as stop; nil and why when there is none.
function M.dump(file)
	return deliver("dump", file, core.last, "no profile yet")
end

-- status(): { running, target (0: all), hz, elapsed (s), ticks, signals, samples,
-- stacks, last_samples (nil before the first stop) }.
function M.status()
	return core.status()
end

return M
