-- One hop of the call chain of test/node/test_trace.sh, by role:
--   entry NEXT   an HTTP server (127.0.0.1, port 0; ADDRESS tells it); GET
--                /<path> logs "hop entry /<path>" and answers what NEXT's
--                work gives
--   mid          work(path): logs, then cluster.call("b", "@back", "work", path)
--   back ECHO    work(path): logs, then GETs ECHO's /echo with httpc and
--                returns its body; flush: its node's tracer writes now
--   echo         an HTTP server answering the traceparent header it got, or
--                "none"
local skynet = require "skynet"
local cluster = require "skynet.cluster"
local httpc = require "http.httpc"
local server = require "http.server"

local role, arg = ...

local CMD = {}
local port

local function listen(handler)
	local _, _, p = server.listen { address = "127.0.0.1", port = 0, handler = handler }
	port = p
end

function CMD.ADDRESS()
	return port
end

function CMD.work(path)
	skynet.error("hop " .. role .. " " .. path)
	if role == "mid" then
		return cluster.call("b", "@back", "work", path)
	end
	local code, body = httpc.request("GET", arg, "/echo")
	assert(code == 200, "echo answered " .. tostring(code))
	return body
end

function CMD.flush()
	return skynet.call(".tracer", "lua", "FLUSH")
end

function CMD.abort()
	skynet.abort(0)
end

skynet.start(function()
	if role == "entry" then
		local next_hop = math.tointeger(tonumber(arg))
		listen(function(req)
			skynet.error("hop entry " .. req.path)
			return 200, skynet.call(next_hop, "lua", "work", req.path)
		end)
	elseif role == "echo" then
		listen(function(req)
			local tp = req.header.traceparent
			skynet.error("hop echo " .. tostring(tp))
			return 200, type(tp) == "string" and tp or "none"
		end)
	end
	skynet.dispatch("lua", function(_, _, cmd, ...)
		skynet.retpack(CMD[cmd](...))
	end)
end)
