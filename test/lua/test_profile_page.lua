-- test: real time (a real browser loads the page over real sockets)
-- The metrics port's /profile: before any profile the page says so and
-- /profile.folded answers 404; the scripts come from the npm install (no
-- internet), other methods get 405; after a profile /profile.folded is the
-- last profile and headless chromium (Debian's, driven through its DevTools
-- protocol on http.websocket) draws it: the DOM has the flame graph's
-- frames, one of them the hot function, which is also the widest frame
-- under its service. A screenshot is kept in build/profile_flamegraph.png.
-- Without chromium the browser part says so and is skipped.
local skynet = require "skynet"
local httpc = require "http.httpc"
local json = require "json_min"
local devtools = require "devtools"
local profiler = require "skynet.profiler"
local t = require "testlib"

local metrics, host

local function get(path, method)
	local recv = {}
	local code, body = httpc.request(method or "GET", host, path, recv)
	return code, body, recv
end

local wait = t.wait_for

---------------------------------------------------------------- cases

t.case("before any profile the page says so", function()
	metrics = skynet.newservice("metrics", "127.0.0.1", 0)
	host = "127.0.0.1:" .. skynet.call(metrics, "lua", "port")
	local code, body, recv = get "/profile"
	t.eq(code, 200, "/profile")
	t.ok(body:find("No profile yet", 1, true), "the page says there is none: " .. body)
	t.ok(recv["content-type"]:find("text/html", 1, true), "html")
	code, body = get "/profile.folded"
	t.eq(code, 404, "/profile.folded")
	t.ok(body:find("no profile yet", 1, true), "why: " .. body)
end)

t.case("the scripts come from the npm install", function()
	local code, body, recv = get "/profile/assets/d3.min.js"
	t.eq(code, 200, "d3")
	t.ok(#body > 100000 and recv["content-type"]:find("javascript", 1, true), "d3 is javascript")
	code, body = get "/profile/assets/d3-flamegraph.min.js"
	t.eq(code, 200, "d3-flame-graph")
	t.ok(body:find("flamegraph", 1, true), "the flame graph library")
	t.eq((get "/profile/assets/d3-flamegraph.css"), 200, "its css")
	t.eq((get "/profile/assets/../../../Makefile"), 404, "no other file")
	t.eq((get("/profile", "POST")), 405, "POST")
	t.eq((get "/metrics"), 200, "/metrics still served")
end)

t.case("the folded download is the last profile", function()
	local hot = skynet.newservice "svc_prof_hot"
	local other = skynet.newservice "svc_prof_hot"
	assert(profiler.start(nil, 250))
	t.spawn(2, function(i)
		if i == 1 then
			skynet.call(hot, "lua", "burn", 50)
		else
			skynet.call(other, "lua", "burn_c", 15)
		end
	end)()
	local text = assert(profiler.stop())
	local code, body, recv = get "/profile.folded"
	t.eq(code, 200, "/profile.folded")
	t.eq(body, text, "the body is the profile")
	t.ok(recv["content-disposition"]:find("profile.folded", 1, true), "a download")
	code, body = get "/profile"
	t.eq(code, 200, "/profile")
	t.ok(body:find("/profile/assets/d3-flamegraph.min.js", 1, true), "the page loads the library locally")
	t.ok(not body:find("https?://"), "nothing from the internet")
	skynet.kill(hot)
	skynet.kill(other)
end)

local browser -- the running chromium (devtools.start)

local function browser_case()
	if not devtools.available() then
		print("skip profile page in chromium: chromium is not installed (3rd/deps-test.sh installs it)")
		return
	end
	browser = devtools.start { window = "1200,800" }
	local c = devtools.connect(browser.url)
	local target = c:call("Target.createTarget", { url = "http://" .. host .. "/profile" })
	local session = c:call("Target.attachToTarget", { targetId = target.targetId, flatten = true })
		.sessionId
	wait(function()
		return c:eval(session, "window.profileReady === true")
	end, 1000, "the page to draw")
	t.eq(c:eval(session, "document.getElementById('error').textContent"), "", "no error on the page")
	local frames = c:eval(session, "document.querySelectorAll('#chart svg g').length")
	t.ok(frames >= 5, "frames drawn: " .. tostring(frames))
	-- the widest frame below the service's own is the hot function's (its label is shown)
	local widest = wait(function()
		local w = c:eval(session, [[(() => {
		let best = null, width = -1;
		for (const g of document.querySelectorAll('#chart svg g')) {
			const name = g.querySelector('title').textContent;
			const w = g.querySelector('rect').getBBox().width;
			if (name.startsWith('burn_hot') && w > width) { best = g; width = w; }
		}
		return best && { width: width, label: best.querySelector('foreignObject div').textContent };
	})()]])
		return w and w.width > 0 and w.label ~= "" and w -- the frames grow in a transition
	end, 500, "burn_hot drawn and labelled")
	t.ok(widest and widest.label:find("burn_hot (", 1, true), "burn_hot drawn and labelled: "
		.. json.encode(widest))
	local wider = c:eval(session, string.format([[(() => {
		let n = 0;
		for (const g of document.querySelectorAll('#chart svg g')) {
			const name = g.querySelector('title').textContent;
			if (!name.startsWith('svc_prof_hot') && !name.startsWith('all')
				&& g.querySelector('rect').getBBox().width > %f + 0.5) n++;
		}
		return n;
	})()]], widest.width))
	-- the frames that call burn_hot are as wide; nothing else is wider
	t.ok(wider <= 6, "frames wider than burn_hot are its callers only: " .. tostring(wider))
	local shot = c:call("Page.captureScreenshot", { format = "png" }, session)
	os.execute("mkdir -p build")
	local f = assert(io.open("build/profile_flamegraph.png", "wb"))
	f:write(require("skynet.crypt").base64decode(shot.data))
	f:close()
end

t.case("headless chromium draws the flame graph", function()
	local ok, err = pcall(browser_case)
	if browser then
		devtools.stop(browser)
	end
	assert(ok, err)
end)

t.start()
