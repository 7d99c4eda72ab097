-- skynet.profiler.page: the node's last profile over HTTP, for the metrics
-- service (service/metrics.lua), which passes it every request first.
--
--   /profile                     the flame graph page (web/flamegraph/index.html),
--                                or a page saying that no profile exists yet
--   /profile.folded              the folded stacks, text/plain (404 with why before
--                                the first profile)
--   /profile/assets/NAME         d3 and d3-flame-graph, read from the npm install
--                                under the folder of config key profile_web
--                                (default web/flamegraph; make runs npm ci there)
--
-- Nothing comes from the internet: the page loads its scripts from this
-- server. The assets are read once and kept (they do not change while the
-- node runs); the page and the profile are read on every request.
local skynet = require "skynet"
local profiler = require "skynet.profiler"

local M = {}

-- name -> path below the web folder, and its content type.
local ASSETS <const> = {
	["d3.min.js"] = { "node_modules/d3/dist/d3.min.js", "text/javascript; charset=utf-8" },
	["d3-flamegraph.min.js"] = { "node_modules/d3-flame-graph/dist/d3-flamegraph.umd.min.js",
		"text/javascript; charset=utf-8" },
	["d3-flamegraph.css"] = { "node_modules/d3-flame-graph/dist/d3-flamegraph.css",
		"text/css; charset=utf-8" },
}

local HTML <const> = "text/html; charset=utf-8"
local TEXT <const> = "text/plain; charset=utf-8"

local NO_PROFILE <const> = [[<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>skywheel profile</title></head>
<body style="font-family: Verdana, sans-serif; margin: 16px">
<h1 style="font-size: 20px">Node profile</h1>
<p id="no-profile">No profile yet. Take one with the debug console, then reload this page:</p>
<pre>profile start [address|all] [hz]
profile stop [file]</pre>
<p>or from Lua with <code>skynet.profiler.start()</code> and <code>skynet.profiler.stop()</code>.</p>
</body></html>
]]

local cache = {} -- asset name -> its bytes

local function web_dir()
	return skynet.getenv "profile_web" or "web/flamegraph"
end

local function read_file(path)
	local f = io.open(path, "rb")
	if f == nil then
		return nil
	end
	local data = f:read "a"
	f:close()
	return data
end

local function asset(name)
	local a = ASSETS[name]
	if a == nil then
		return 404, "no such asset: " .. name .. "\n", { ["content-type"] = TEXT }
	end
	local data = cache[name]
	if data == nil then
		local path = web_dir() .. "/" .. a[1]
		data = read_file(path)
		if data == nil then
			return 503, string.format("%s is not installed (make runs npm ci in %s)\n", path, web_dir()),
				{ ["content-type"] = TEXT }
		end
		cache[name] = data
	end
	return 200, data, { ["content-type"] = a[2], ["cache-control"] = "max-age=3600" }
end

local function page()
	if profiler.dump() == nil then
		return 200, NO_PROFILE, { ["content-type"] = HTML }
	end
	local path = web_dir() .. "/index.html"
	local html = read_file(path)
	if html == nil then
		return 503, path .. " is missing\n", { ["content-type"] = TEXT }
	end
	return 200, html, { ["content-type"] = HTML, ["cache-control"] = "no-store" }
end

local function folded()
	local text = profiler.dump()
	if text == nil then
		return 404, "no profile yet: profile start, then profile stop (debug console)\n",
			{ ["content-type"] = TEXT }
	end
	return 200, text, { ["content-type"] = TEXT, ["cache-control"] = "no-store",
		["content-disposition"] = 'attachment; filename="profile.folded"' }
end

-- serve(req): status, body, headers for the paths above; nil for any other
-- path (the caller serves it). GET and HEAD only (HEAD: the same, no body).
function M.serve(req)
	local path = req.path
	local status, body, headers
	if path == "/profile" then
		status, body, headers = page()
	elseif path == "/profile.folded" then
		status, body, headers = folded()
	elseif path:sub(1, 16) == "/profile/assets/" then
		status, body, headers = asset(path:sub(17))
	else
		return nil
	end
	if req.method ~= "GET" and req.method ~= "HEAD" then
		return 405, "GET only\n", { allow = "GET, HEAD" }
	end
	return status, req.method == "HEAD" and "" or body, headers
end

return M
