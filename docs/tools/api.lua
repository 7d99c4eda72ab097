-- api.lua: list the public Lua API and the config keys of this repository, read from the code.
--
-- Usage (from the repository root, plain lua5.4, no build needed):
--
--   lua5.4 docs/tools/api.lua               every public `module.function`, one per line, sorted
--   lua5.4 docs/tools/api.lua --where       the same, each followed by a tab and file:line
--   lua5.4 docs/tools/api.lua --modules     the public module names, one per line
--   lua5.4 docs/tools/api.lua --unlisted    the modules left out (internal parts, aliases), with the reason
--   lua5.4 docs/tools/api.lua --config      every config key the code reads, one per line
--   lua5.4 docs/tools/api.lua --root DIR    read another checkout (default: the current directory)
--
-- As a library: `local api = dofile "docs/tools/api.lua"`, then
--   api.functions(root)  -> sorted list of { name =, module =, file =, line = }
--   api.modules(root)    -> sorted list of public module names
--   api.config(root)     -> sorted list of { key =, file =, line = }
--   api.UNLISTED         -> module name -> why its functions are not listed
--   api.PRIVATE          -> exported names that are not API
--
-- How names are found. Nothing is executed: the sources are read as text.
--
-- * Lua modules: every lualib/**/*.lua (lualib/compat10 holds only aliases, and
--   lualib/loader.lua is the service loader, not a module). The module name is the path below lualib/ with dots
--   (a trailing /init is dropped). A small tokenizer skips comments and strings and tracks block
--   depth; at the top level of a file it records
--     - `local t = { f = ... }` constructor fields (values that are literals are constants, left
--       out; functions, names and dotted names are kept),
--     - `function t.f(`, `function t:f(` and `t.f = ...` statements (one per line start),
--     - `local t = require "m"`, so that `function t.f` in one file adds `m.f`
--       (this is how skynet.manager and the lazy parts add functions to `skynet`),
--     - `return t`, `return setmetatable(t, ...)`, `return require "m"` (the module exports the
--       functions of t or m) and `return function` / `return localfunction` (the module itself
--       is a function and is listed under its own name, e.g. `skynet.queue`).
--   skynet.lua's lazy table (`local LAZY = " name=x ..."`) adds `skynet.name` for each name;
--   so does a C module's (`static const struct lazy_name LAZY[] = { {"name", ...} }` in a file
--   of the opener's folder, lualib-src/kernel/lazy.c).
--   `return require "m"` of a C module exports that module's functions.
-- * C modules: every `luaopen_a_b(lua_State *L)` in lualib-src/ (module `a.b`) and the modules
--   snlua preloads (`preload(L, "name", opener)` in service-src/service_snlua.c). Their functions
--   are the entries of the luaL_Reg arrays in the opener whose names do not start with "__",
--   except arrays that become metatables or method tables (passed to anything but luaL_newlib /
--   luaL_setfuncs, or a luaL_newlib followed by lua_setfield(L, -2, "__index")), plus
--   `lua_setfield(L, -2, "name")` right after a lua_pushcfunction/lua_pushcclosure.
-- * A Lua module that returns a table loaded from a C module (`local core = require "md5.core"
--   ... return core`) exports the C functions too, under the Lua module's name.
-- * Names starting with "_" are private. Modules in UNLISTED below are left out (--all keeps them).
--
-- Config keys: string literals passed to skynet_getenv, skynet_optint/_optboolean/_optstring,
-- config_count, set_env_global (key argument) and skynet_command(ctx, "GETENV", "key") in
-- skynet-src/, service-src/ and lualib-src/; `skynet.getenv "key"` / `skynet.getenv("key")` in
-- lualib/ and service/. A C call of those with a key that is not a literal, outside the
-- functions that forward a key (listed in KEY_FORWARDERS), is an error: it would hide a key.

local M = {}

-- Modules whose functions are not listed: internal parts and aliases (printed by --unlisted).
M.UNLISTED = {
	["skynet.require"] = "skynet.init and the start-up order, used by skynet.lua",
	["skynet.ext.kill"] = "a lazy part of skynet (its functions are listed as skynet.*)",
	["skynet.ext.request"] = "a lazy part of skynet",
	["skynet.ext.service"] = "a lazy part of skynet",
	["skynet.ext.task"] = "a lazy part of skynet",
	["skynet.ext.trace"] = "a lazy part of skynet",
	["skynet.debug"] = "the debug protocol handler, loaded by skynet.lua on the first debug message",
	["skynet.datasheet.cell"] = "the code of the datasheet service",
	["skynet.multicast.core"] = "the C side of skynet.multicast",
	["skynet.sharedata.core"] = "the C side of skynet.sharedata",
	["skynet.sharetable.core"] = "the C side of skynet.sharetable",
	["skynet.datasheet.core"] = "the C side of skynet.datasheet",
	["skynet.cluster.core"] = "the wire codec of skynet.cluster, used by its services",
	["ltls.init.c"] = "OpenSSL start-up, called by bootstrap when enablessl is true",
	["skynet.tz"] = "time zone rules of skynet.timer (opts.tz)",
	["skynet.cron"] = "cron spec parser of skynet.timer",
	["skynet.reminder.plan"] = "schedules of skynet.reminder (every, cron, misfires), used by it and reminderd",
	["skynet.reminder.sqlite"] = "the SQLite store of the reminder service (service/reminderd.lua)",
	["skynet.reminder.redis"] = "the Redis store of the reminder service (service/reminderd.lua)",
	["md5.core"] = "the C side of md5 (every function is listed under md5)",
	["sproto.core"] = "the C side of sproto (used through sproto and sprotoloader)",
	["sqlite.core"] = "the C side of skynet.db.sqlite (requests and answers of its threads)",
	["client.crypt"] = "skynet.crypt under the name plain lua5.4 clients load (luaclib/client.so)",
	["skynet.snlua"] = "snlua's hooks for skynet.lua (framework marking, memory grants)",
	["skynet.ext.message"] = "a lazy part of skynet",
	["skynet.kernel"] = "the C side of skynet (its functions are listed under skynet)",
	["skynet.profiler.core"] = "the C side of skynet.profiler (the core's sampler and profile)",
	["snax.deadline"] = "the connection deadlines of snax.loginserver and snax.msgserver",
}

-- Exported names that are not API: internal state shared between the parts of a module.
M.PRIVATE = {
	["skynet.private"] = "the kernel functions skynet's lazy parts call (no state of its own)",
}

-- C functions that take a config key as an argument and pass it on.
local KEY_FORWARDERS = {
	config_count = true, -- skynet_main.c
	set_env_global = true, -- service_snlua.c
	cmd_getenv = true, -- skynet_server.c: the GETENV text command
	check_table = true, -- skynet_config.c: refuses a key set twice while loading the file
	skynet_getenv = true, -- skynet_env.c
	skynet_optint = true,
	skynet_optboolean = true,
	skynet_optstring = true,
}

---------------------------------------------------------------- files

local function read(path)
	local f = io.open(path, "rb")
	if not f then
		return nil
	end
	local s = f:read "a"
	f:close()
	return s
end
M.read = read -- the whole file at path, or nil (check.lua uses it too)

-- Files under dir (relative to root) whose name ends with ext, sorted.
local function find(root, dir, ext)
	local cmd = string.format("find '%s/%s' -type f -name '*%s' 2>/dev/null", root, dir, ext)
	local p = assert(io.popen(cmd))
	local out = {}
	for line in p:lines() do
		out[#out + 1] = line:sub(#root + 2)
	end
	p:close()
	table.sort(out)
	return out
end

---------------------------------------------------------------- Lua tokenizer

-- Tokens { t = "name"|"string"|"number"|"op"|"kw", v = text, line = n, first = bool }
-- (first: the first token of its line). Comments are dropped.
local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
	repeat return then true until while]]):gmatch "%a+" do
	KEYWORDS[w] = true
end

local function tokenize(src)
	local toks = {}
	local i, n, line = 1, #src, 1
	local line_has_token = false
	local function push(t, v)
		toks[#toks + 1] = { t = t, v = v, line = line, first = not line_has_token }
		line_has_token = true
	end
	local function newlines(s)
		for _ in s:gmatch "\n" do
			line = line + 1
			line_has_token = false
		end
	end
	while i <= n do
		local ch = src:sub(i, i)
		if ch == "\n" then
			line = line + 1
			line_has_token = false
			i = i + 1
		elseif ch:match "%s" then
			i = i + 1
		elseif src:sub(i, i + 1) == "--" then
			local eq = src:match("^%[(=*)%[", i + 2)
			if eq then
				local _, e = src:find("]" .. eq .. "]", i, true)
				e = e or n
				newlines(src:sub(i, e))
				i = e + 1
			else
				local e = src:find("\n", i, true) or n + 1
				i = e
			end
		elseif ch == "[" and src:match("^%[=*%[", i) then
			local eq = src:match("^%[(=*)%[", i)
			local _, e = src:find("]" .. eq .. "]", i, true)
			e = e or n
			local text = src:sub(i, e)
			push("string", text)
			newlines(text)
			i = e + 1
		elseif ch == '"' or ch == "'" then
			local j = i + 1
			while j <= n do
				local c = src:sub(j, j)
				if c == "\\" then
					j = j + 2
				elseif c == ch or c == "\n" then
					break
				else
					j = j + 1
				end
			end
			local body = src:sub(i + 1, j - 1)
			push("string", body)
			newlines(body)
			i = j + 1
		elseif ch:match "[%a_]" then
			local w = src:match("^[%w_]+", i)
			push(KEYWORDS[w] and "kw" or "name", w)
			i = i + #w
		elseif ch:match "%d" or (ch == "." and src:match("^%.%d", i)) then
			local w = src:match("^0[xX][%x%.]+[pP]?[-+]?%x*", i) or src:match("^[%d%.]+[eE]?[-+]?%d*", i)
			push("number", w)
			i = i + #w
		else
			local op = src:match("^%.%.%.", i) or src:match("^[=~<>]=", i) or src:match("^%.%.", i)
				or src:match("^::", i) or src:match("^//", i) or src:match("^<<", i)
				or src:match("^>>", i) or ch
			push("op", op)
			i = i + #op
		end
	end
	return toks
end

---------------------------------------------------------------- Lua modules

local function lua_module_name(file)
	local name = file:gsub("^lualib/", ""):gsub("%.lua$", ""):gsub("/init$", "")
	return (name:gsub("/", "."))
end

-- Reads one Lua file. Returns a record:
--   defs[name] = { [field] = line }   fields defined on the local or global `name`
--   requires[name] = module           locals bound to require "module"
--   localfuncs[name] = true           local functions
--   ret = { kind = "name"|"require"|"function", v = ..., line = n } or nil
--   lazy = { names } (skynet.lua's LAZY string)
local function scan_lua(src)
	local toks = tokenize(src)
	local rec = { defs = {}, requires = {}, localfuncs = {}, lazy = nil, ret = nil }
	local function def(tbl, field, line)
		rec.defs[tbl] = rec.defs[tbl] or {}
		if not rec.defs[tbl][field] then
			rec.defs[tbl][field] = line
		end
	end
	local function is_literal(tok)
		return tok.t == "number" or tok.t == "string"
			or (tok.t == "kw" and (tok.v == "true" or tok.v == "false" or tok.v == "nil"))
			or (tok.t == "op" and (tok.v == "{" or tok.v == "-"))
	end
	-- Fields of a table constructor starting at toks[k] == "{"; returns the index after "}".
	local function constructor(k, tbl)
		local depth = 0
		while k <= #toks do
			local t = toks[k]
			if t.t == "op" and (t.v == "{" or t.v == "(" or t.v == "[") then
				depth = depth + 1
			elseif t.t == "op" and (t.v == "}" or t.v == ")" or t.v == "]") then
				depth = depth - 1
				if depth == 0 then
					return k + 1
				end
			elseif depth == 1 and t.t == "name" and toks[k + 1] and toks[k + 1].v == "="
				and toks[k - 1] and (toks[k - 1].v == "{" or toks[k - 1].v == "," or toks[k - 1].v == ";") then
				local value = toks[k + 2]
				if value and not is_literal(value) then
					def(tbl, t.v, t.line)
				end
			end
			k = k + 1
		end
		return k
	end
	local depth = 0 -- block depth (function/do/if/repeat ... end/until)
	local paren = 0 -- bracket depth, for statement starts
	local k = 1
	while k <= #toks do
		local t = toks[k]
		local nx = toks[k + 1]
		if depth == 0 and paren == 0 then
			if t.t == "kw" and t.v == "local" and nx and nx.t == "kw" and nx.v == "function" then
				rec.localfuncs[toks[k + 2].v] = true
			elseif t.t == "kw" and t.v == "local" and nx and nx.t == "name" then
				-- local name [<attr>] = ...
				local j = k + 2
				if toks[j] and toks[j].v == "<" then
					j = j + 3
				end
				if toks[j] and toks[j].v == "=" then
					local v = toks[j + 1]
					if v and v.t == "name" and v.v == "require" then
						local s = toks[j + 2]
						if s and s.v == "(" then
							s = toks[j + 3]
						end
						if s and s.t == "string" then
							rec.requires[nx.v] = s.v
						end
					elseif v and v.v == "{" then
						rec.defs[nx.v] = rec.defs[nx.v] or {}
						constructor(j + 1, nx.v)
					elseif v and v.t == "name" and v.v == "setmetatable" and toks[j + 2].v == "("
						and toks[j + 3].v == "{" then
						rec.defs[nx.v] = rec.defs[nx.v] or {}
						constructor(j + 3, nx.v)
					elseif v and v.t == "string" and nx.v == "LAZY" then
						local s, e = j + 1, j + 1
						local text = {}
						while toks[e] and (toks[e].t == "string" or toks[e].v == "..") do
							if toks[e].t == "string" then
								text[#text + 1] = toks[e].v
							end
							e = e + 1
						end
						rec.lazy = {}
						for name in table.concat(text):gmatch "([%w_]+)=%a" do
							rec.lazy[#rec.lazy + 1] = { name = name, line = toks[s].line }
						end
					elseif v and v.t == "kw" and v.v == "function" then
						rec.localfuncs[nx.v] = true
					end
				end
			elseif t.t == "kw" and t.v == "function" and nx and nx.t == "name" then
				-- function a.b(  /  function a:b(  /  function a.b.c(
				local parts, j = { nx.v }, k + 2
				while toks[j] and (toks[j].v == "." or toks[j].v == ":") and toks[j + 1] do
					parts[#parts + 1] = toks[j + 1].v
					j = j + 2
				end
				if #parts == 2 then
					def(parts[1], parts[2], nx.line)
				end
			elseif t.first and t.t == "name" and nx and nx.v == "." and toks[k + 2]
				and toks[k + 2].t == "name" and toks[k + 3] and toks[k + 3].v == "=" then
				local v = toks[k + 4]
				if v and not is_literal(v) then
					def(t.v, toks[k + 2].v, t.line)
				end
			elseif t.t == "kw" and t.v == "return" and nx then
				if nx.t == "name" and nx.v == "setmetatable" and toks[k + 2].v == "(" then
					rec.ret = { kind = "name", v = toks[k + 3].v, line = t.line }
				elseif nx.t == "name" and nx.v == "require" then
					local s = toks[k + 2].v == "(" and toks[k + 3] or toks[k + 2]
					rec.ret = { kind = "require", v = s.v, line = t.line }
				elseif nx.t == "kw" and nx.v == "function" then
					rec.ret = { kind = "function", line = t.line }
				elseif nx.t == "name" then
					rec.ret = { kind = "name", v = nx.v, line = t.line }
				else
					rec.ret = nil
				end
			end
		end
		if t.t == "kw" then
			if t.v == "function" or t.v == "do" or t.v == "if" or t.v == "repeat" then
				depth = depth + 1
			elseif t.v == "end" or t.v == "until" then
				depth = depth - 1
			end
		elseif t.t == "op" then
			if t.v == "(" or t.v == "{" or t.v == "[" then
				paren = paren + 1
			elseif t.v == ")" or t.v == "}" or t.v == "]" then
				paren = paren - 1
			end
		end
		k = k + 1
	end
	return rec
end

---------------------------------------------------------------- C modules

-- The body of the C function `name(` starting at its definition, or nil.
local function c_function_body(src, name)
	local s = src:find("\n" .. name .. "%(lua_State %*[%w_]+%)%s*{")
	if not s then
		return nil
	end
	local open = src:find("{", s, true)
	local depth, i = 0, open
	while i <= #src do
		local c = src:sub(i, i)
		if c == "{" then
			depth = depth + 1
		elseif c == "}" then
			depth = depth - 1
			if depth == 0 then
				return src:sub(open, i), select(2, src:sub(1, s):gsub("\n", "")) + 1
			end
		end
		i = i + 1
	end
end

-- Function names a C opener puts into its module table.
local function scan_c_opener(body, first_line)
	local names = {}
	local function line_of(pos)
		return first_line + select(2, body:sub(1, pos):gsub("\n", ""))
	end
	-- luaL_Reg arrays: name -> { { name, line } }
	local arrays = {}
	for start, aname, content in body:gmatch "()luaL_Reg%s+([%w_]+)%[%]%s*=%s*(%b{})" do
		local entries = {}
		for pos, fname in content:gmatch '(){%s*"([%w_]+)"%s*,' do
			entries[#entries + 1] = { fname, line_of(start) + select(2, content:sub(1, pos):gsub("\n", "")) }
		end
		arrays[aname] = entries
	end
	for aname, entries in pairs(arrays) do
		local module_array = false
		for call, args in body:gmatch "([%w_]+)(%b())" do
			local first, second = args:match "^%(%s*([%w_]+)%s*,%s*([%w_]+)"
			if second == aname and (call == "luaL_setfuncs" or call == "luaL_newlib") then
				module_array = true
			end
		end
		-- a method table: luaL_newlib(L, a) followed by lua_setfield(L, -2, "__index")
		if body:find("luaL_newlib%(L,%s*" .. aname .. "%)%s*;%s*lua_setfield%(L,%s*%-2,%s*\"__index\"%)") then
			module_array = false
		end
		-- passed to a helper (make_meta(L, name, arr, gc)): methods
		for call, args in body:gmatch "([%w_]+)(%b())" do
			if call ~= "luaL_setfuncs" and call ~= "luaL_newlib" and call ~= "luaL_newlibtable"
				and call ~= "sizeof" and args:find("[%(,]%s*" .. aname .. "%s*[,%)]") then
				module_array = false
			end
		end
		if module_array then
			for _, e in ipairs(entries) do
				if not e[1]:match "^__" then
					names[#names + 1] = { name = e[1], line = e[2] }
				end
			end
		end
	end
	-- a function pushed and stored by name: lua_pushcfunction/lua_pushcclosure or a push_x
	-- helper (e.g. push_walltime), then lua_setfield(L, -2, "name")
	for pos, push, fname in body:gmatch '()([%w_]+)%b()%s*;%s*lua_setfield%(L,%s*%-2,%s*"([%w_]+)"%)' do
		if (push:match "^lua_pushc" or push:match "^push_") and not fname:match "^__" then
			names[#names + 1] = { name = fname, line = line_of(pos) }
		end
	end
	return names
end

-- C modules: name -> { file =, line =, funcs = { {name, line} } }
local function c_modules(root)
	local mods = {}
	local files = find(root, "lualib-src", ".c")
	for _, file in ipairs(files) do
		local src = read(root .. "/" .. file)
		for opener in src:gmatch "\n(luaopen_[%w_]+)%(lua_State %*[%w_]+%)%s*{" do
			local name = opener:gsub("^luaopen_", ""):gsub("_", ".")
			local body, line = c_function_body(src, opener)
			mods[name] = { file = file, line = line, funcs = scan_c_opener(body, line) }
			mods[name].alias = body:match "return%s+(luaopen_[%w_]+)%(L%)"
			-- a lazy table in C, in the opener's folder (`static const struct lazy_name
			-- LAZY[] = { {"name", ...}, ... }`, lualib-src/kernel/lazy.c): its names too
			local dir = file:match "^(.*)/"
			for _, other in ipairs(files) do
				local osrc = other:match "^(.*)/" == dir and read(root .. "/" .. other) or ""
				local at, lazy = osrc:match "()static const struct lazy_name LAZY%[%]%s*=%s*(%b{})"
				if lazy then
					local lazy_line = select(2, osrc:sub(1, at):gsub("\n", "")) + 1
					for fname in lazy:gmatch '{%s*"([%w_]+)"' do
						table.insert(mods[name].funcs, { name = fname, line = lazy_line, file = other })
					end
				end
			end
		end
	end
	-- an opener that returns another opener's module (client.crypt is skynet.crypt)
	for _, m in pairs(mods) do
		local target = m.alias and mods[(m.alias:gsub("^luaopen_", ""):gsub("_", "."))]
		if target then
			m.funcs = target.funcs
		end
	end
	-- modules snlua preloads into every service
	local snlua = read(root .. "/service-src/service_snlua.c") or ""
	for name, opener in snlua:gmatch 'preload%(L,%s*"([%w_.]+)",%s*([%w_]+)%)' do
		for _, file in ipairs(find(root, "service-src", ".c")) do
			local src = read(root .. "/" .. file)
			local body, line = c_function_body(src, opener)
			if body and not src:find("\n" .. opener .. "%(lua_State %*[%w_]+%)%s*;") then
				mods[name] = { file = file, line = line, funcs = scan_c_opener(body, line) }
			end
		end
	end
	return mods
end

---------------------------------------------------------------- the API

local function default_root(root)
	return root or "."
end

-- Every exported function: list of { name, module, file, line }, sorted by name.
-- opts.all: keep the modules in UNLISTED.
function M.functions(root, opts)
	root = default_root(root)
	opts = opts or {}
	local out, seen = {}, {}
	local mods = {} -- module name -> true (public or not)
	local function add(module, field, file, line)
		if field and field:match "^_" then
			return
		end
		local name = field and (module .. "." .. field) or module
		if not seen[name] and not M.PRIVATE[name] then
			seen[name] = { name = name, module = module, file = file, line = line }
			out[#out + 1] = seen[name]
		end
	end
	local cmods = c_modules(root)
	local lua = {}
	for _, file in ipairs(find(root, "lualib", ".lua")) do
		if not file:match "^lualib/compat10/" and file ~= "lualib/loader.lua" then
			local src = read(root .. "/" .. file)
			lua[#lua + 1] = { file = file, module = lua_module_name(file), rec = scan_lua(src) }
		end
	end
	-- Which table each Lua module returns, resolved to functions later.
	local lua_by_name = {}
	for _, m in ipairs(lua) do
		mods[m.module] = true
		lua_by_name[m.module] = m
	end
	for name in pairs(cmods) do
		mods[name] = true
	end
	local function public(module)
		return opts.all or not M.UNLISTED[module]
	end
	-- C modules
	for name, c in pairs(cmods) do
		if public(name) then
			for _, f in ipairs(c.funcs) do
				add(name, f.name, f.file or c.file, f.line)
			end
		end
	end
	-- Lua modules
	for _, m in ipairs(lua) do
		local rec, ret = m.rec, m.rec.ret
		if ret and public(m.module) then
			if ret.kind == "function" or (ret.kind == "name" and rec.localfuncs[ret.v]) then
				add(m.module, nil, m.file, ret.line)
			elseif ret.kind == "require" and cmods[ret.v] then
				-- returns a C module's table (skynet.lua returns skynet.kernel's)
				for _, f in ipairs(cmods[ret.v].funcs) do
					add(m.module, f.name, f.file or cmods[ret.v].file, f.line)
				end
			elseif ret.kind == "name" and lua_by_name[rec.requires[ret.v] or ""] then
				-- returns another Lua module it extended (skynet.manager returns skynet): the
				-- functions belong to that module, added below
			elseif ret.kind == "name" then
				local fields = rec.defs[ret.v] or {}
				for field, line in pairs(fields) do
					add(m.module, field, m.file, line)
				end
				local from = rec.requires[ret.v]
				if from and cmods[from] and from ~= m.module then
					for _, f in ipairs(cmods[from].funcs) do
						add(m.module, f.name, f.file or cmods[from].file, f.line)
					end
				end
			end
		end
		-- functions this file adds to other modules (skynet.manager, the lazy parts, timer)
		for tbl, fields in pairs(rec.defs) do
			local target = rec.requires[tbl]
			if target and target ~= m.module and mods[target] and public(target)
				and not (ret and ret.kind == "name" and ret.v == tbl and cmods[target]) then
				for field, line in pairs(fields) do
					add(target, field, m.file, line)
				end
			end
		end
	end
	-- names of skynet.lua's lazy table that no file defined (their definitions, found above,
	-- give the better file:line)
	for _, m in ipairs(lua) do
		for _, l in ipairs(m.rec.lazy or {}) do
			add(m.module, l.name, m.file, l.line)
		end
	end
	table.sort(out, function(a, b)
		return a.name < b.name
	end)
	return out
end

-- The public module names (modules exporting at least one function), sorted.
function M.modules(root, opts)
	local set, out = {}, {}
	for _, f in ipairs(M.functions(root, opts)) do
		if not set[f.module] then
			set[f.module] = true
			out[#out + 1] = f.module
		end
	end
	table.sort(out)
	return out
end

---------------------------------------------------------------- config keys

-- The C function enclosing position pos of src (the name of the last definition before it).
local function enclosing_c_function(src, pos)
	local name
	for p, n in src:gmatch "\n()([%w_]+)%b()%s*{" do
		if p > pos then
			break
		end
		name = n
	end
	return name
end

local function line_at(src, pos)
	return select(2, src:sub(1, pos):gsub("\n", "")) + 1
end

-- Every config key: list of { key, file, line }, sorted by key (first place each is read).
function M.config(root)
	root = default_root(root)
	local seen, out, errors = {}, {}, {}
	local function add(key, file, line)
		if not seen[key] then
			seen[key] = { key = key, file = file, line = line }
			out[#out + 1] = seen[key]
		end
	end
	local cfiles = {}
	for _, dir in ipairs { "skynet-src", "service-src", "lualib-src" } do
		for _, f in ipairs(find(root, dir, ".c")) do
			cfiles[#cfiles + 1] = f
		end
	end
	for _, file in ipairs(cfiles) do
		local src = read(root .. "/" .. file)
		-- drop comments, keeping line numbers
		src = src:gsub("/%*.-%*/", function(c)
			return (c:gsub("[^\n]", " "))
		end):gsub("//[^\n]*", "")
		local patterns = {
			"()skynet_getenv%(%s*([^,%)]+)",
			"()skynet_opt%a+%(%s*([^,%)]+)",
			"()config_count%(%s*([^,%)]+)",
			"()set_env_global%([^,]+,[^,]+,[^,]+,%s*([^,%)]+)",
			'()skynet_command%([^,]+,%s*"GETENV",%s*([^,%)]+)',
		}
		for _, pat in ipairs(patterns) do
			for pos, arg in src:gmatch(pat) do
				local key = arg:match '^"([%w_]+)"%s*$'
				local fn = enclosing_c_function(src, pos)
				local is_decl = src:sub(pos - 20, pos):match "[%w_*]%s+$"
					and not src:sub(pos - 20, pos):match "return%s+$"
				if key then
					add(key, file, line_at(src, pos))
				elseif not KEY_FORWARDERS[fn] and not is_decl then
					errors[#errors + 1] = string.format("%s:%d: config key read with a non-literal key (%s) in %s;"
						.. " add the function to KEY_FORWARDERS in docs/tools/api.lua if it forwards a key",
						file, line_at(src, pos), arg, tostring(fn))
				end
			end
		end
	end
	local luafiles = {}
	for _, dir in ipairs { "lualib", "service" } do
		for _, f in ipairs(find(root, dir, ".lua")) do
			luafiles[#luafiles + 1] = f
		end
	end
	for _, file in ipairs(luafiles) do
		local toks = tokenize(read(root .. "/" .. file))
		for k = 1, #toks - 3 do
			local a, b, c = toks[k], toks[k + 1], toks[k + 2]
			if a.v == "skynet" and b.v == "." and c.v == "getenv" then
				local s = toks[k + 3]
				if s.v == "(" then
					s = toks[k + 4]
				end
				if s and s.t == "string" and s.v:match "^[%w_]+$" then
					add(s.v, file, s.line)
				end
			end
		end
	end
	table.sort(out, function(a, b)
		return a.key < b.key
	end)
	return out, errors
end

---------------------------------------------------------------- command line

local function main(args)
	local root, mode, all = ".", "functions", false
	local i = 1
	while i <= #args do
		local a = args[i]
		if a == "--root" then
			root = args[i + 1]
			i = i + 1
		elseif a == "--all" then
			all = true
		elseif a == "--where" or a == "--modules" or a == "--unlisted" or a == "--config" then
			mode = a:sub(3)
		else
			io.stderr:write("api.lua: unknown argument ", a, " (see the usage at the top of the file)\n")
			os.exit(2)
		end
		i = i + 1
	end
	if mode == "functions" or mode == "where" then
		for _, f in ipairs(M.functions(root, { all = all })) do
			if mode == "where" then
				print(f.name .. "\t" .. f.file .. ":" .. f.line)
			else
				print(f.name)
			end
		end
	elseif mode == "modules" then
		for _, m in ipairs(M.modules(root, { all = all })) do
			print(m)
		end
	elseif mode == "unlisted" then
		local names = {}
		for name in pairs(M.UNLISTED) do
			names[#names + 1] = name
		end
		table.sort(names)
		for _, name in ipairs(names) do
			print(name .. "\t" .. M.UNLISTED[name])
		end
	elseif mode == "config" then
		local keys, errors = M.config(root)
		for _, k in ipairs(keys) do
			print(k.key)
		end
		if #errors > 0 then
			for _, e in ipairs(errors) do
				io.stderr:write(e, "\n")
			end
			os.exit(1)
		end
	end
end

if arg and arg[0] and arg[0]:match "api%.lua$" and select("#", ...) == #arg then
	main(arg)
end

return M
