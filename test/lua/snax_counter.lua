-- A snax service for test_snax and test_stdin_console. Method ids: init 1,
-- exit 2, hotfix 3, profile 4, then inc 5, get 6, fail 7, quit 8, echo 9,
-- whoami 10, paths 11, block 12, say 13, cluster 14, total 15.
local skynet = require "skynet"
local snax = require "skynet.snax"
local util = require "snax_counter_util"

local count = 0
local owner -- address that receives the marks (first argument of init)

local function mark(text)
	skynet.send(owner, "lua", "mark", text)
end

function init(addr, ...)
	owner = addr
	mark("init " .. table.concat({ ... }, ","))
end

function exit(...)
	mark("exit " .. table.concat({ ... }, ","))
end

function accept.inc(n)
	count = count + (n or 1)
end

function response.get()
	return count
end

function response.fail(msg)
	error(msg)
end

function accept.quit(...)
	snax.exit(...)
end

function response.echo(...)
	return ...
end

function response.whoami()
	local me = snax.self()
	return tostring(me), me.handle == skynet.self(), me.type, me == snax.self()
end

function response.paths()
	return SERVICE_NAME, SERVICE_PATH, util.tag, package.path:sub(1, #SERVICE_PATH + 5)
end

function response.block()
	skynet.wait()
end

function response.say(fmt, ...)
	local said
	local log = skynet.error
	skynet.error = function(text)
		said = text
	end
	local ok, err = pcall(snax.printf, fmt, ...)
	skynet.error = log
	assert(ok, err)
	return said
end

function response.cluster()
	snax.enablecluster()
end

function accept.total(n)
	count = count + n * 2
end
