-- lualib/compat10: every pre-1.0 module name returns exactly the current
-- module (the same table), and the folder holds no name the table below
-- does not know. Names whose module does not exist yet are not shipped.
local t = require "testlib"

local NAMES = {
	cluster = "skynet.cluster",
	crypt = "skynet.crypt",
	datacenter = "skynet.datacenter",
	dns = "skynet.dns",
	mqueue = "skynet.mqueue",
	multicast = "skynet.multicast",
	mysql = "skynet.db.mysql",
	netpack = "skynet.netpack",
	profile = "skynet.profile",
	redis = "skynet.db.redis",
	sharedata = "skynet.sharedata",
	sharemap = "skynet.sharemap",
	snax = "skynet.snax",
	socketchannel = "skynet.socketchannel",
	socket = "skynet.socket",
	socketdriver = "skynet.socketdriver",
	stm = "skynet.stm",
}

local function files()
	local p = assert(io.popen "ls lualib/compat10")
	local list = {}
	for name in p:lines() do
		list[#list + 1] = name:match "^(.+)%.lua$" or name
	end
	p:close()
	return list
end

t.case("each old name is the current module", function()
	local saved = package.path
	package.path = "./lualib/compat10/?.lua;" .. saved
	local results = {}
	for old, new in pairs(NAMES) do
		local ok, mod = pcall(require, old)
		results[old] = { ok, mod, new }
	end
	package.path = saved
	for old, r in pairs(results) do
		t.ok(r[1], string.format("require %q: %s", old, tostring(r[2])))
		t.ok(r[2] == require(r[3]), string.format("%q is %s", old, r[3]))
	end
end)

t.case("the folder holds only the names above", function()
	local n = 0
	for _, name in ipairs(files()) do
		n = n + 1
		t.ok(NAMES[name], "unexpected compat10 file " .. name)
	end
	local want = 0
	for _ in pairs(NAMES) do
		want = want + 1
	end
	t.eq(n, want, "file count")
end)

t.start()
