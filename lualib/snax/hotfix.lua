-- snax.hotfix: patches the handlers of a running snax service.
--
--   hotfix(funcs, source, ...) -> results of the patch's hotfix(...)
--
-- funcs are the service's method records (snax.interface). source is Lua
-- text written like a snax file; it is compiled with the chunk name "=patch"
-- in an environment that is a copy of the service's globals, taken when this
-- module is first loaded (later patches share it). Any failure raises a
-- plain message and leaves the service unchanged: a compile error (its
-- message), an error while the patch's main chunk runs, a handler the
-- service does not have (`Patch mismatch <group>.<name>`: ids are fixed,
-- methods can be neither added nor removed), or an ambiguous local.
--
-- Locals. The service's variables are found as the upvalues of its current
-- handlers, and of the Lua functions those reach through upvalues that come
-- from the same source text (so library internals are not mixed in). Each
-- upvalue of a patch handler (and, the same way, of the patch functions it
-- reaches) that is nil, or is the patch's environment (_ENV), is joined with
-- the service variable of that name when there is one; two different
-- service variables of that name raise `ambiguity local value <name>`
-- (except _ENV when all of them hold the same table). So `local count` in
-- a patch is the service's `count`, shared with the old handlers from then
-- on. Upvalues with a value stay the patch's own.
--
-- Then every handler the patch defines replaces the old one, and the
-- patch's own hotfix(...) hook, if it defines one, is called with the extra
-- arguments; its results are returned.
local snax_interface = require "snax.interface"

local getupvalue = debug.getupvalue
local upvalueid = debug.upvalueid
local upvaluejoin = debug.upvaluejoin
local getinfo = debug.getinfo

local env = {}
for k, v in pairs(_ENV) do
	env[k] = v
end

local function source_of(f)
	local info = getinfo(f, "S")
	if info.what == "C" then
		return nil
	end
	return info.source
end

-- Upvalue names that do not name a variable (C functions, stripped code).
local function named(n)
	return n ~= "" and n ~= "(no name)" and n ~= "?"
end

-- Records the upvalues of f (and of same-source functions it reaches) in
-- vars[name] = { n = distinct variables, [id] = { f, index, value } }.
local function collect(f, source, vars, seen)
	if seen[f] then
		return
	end
	seen[f] = true
	local i = 1
	while true do
		local n, v = getupvalue(f, i)
		if n == nil then
			break
		end
		if named(n) then
			local id = upvalueid(f, i)
			local byname = vars[n]
			if byname == nil then
				byname = { n = 0 }
				vars[n] = byname
			end
			if byname[id] == nil then
				byname[id] = { f, i, v }
				byname.n = byname.n + 1
				byname.first = byname[id]
			end
			if type(v) == "function" and source_of(v) == source then
				collect(v, source, vars, seen)
			end
		end
		i = i + 1
	end
end

-- The single service variable called n, or nil when there is none.
local function resolve(vars, n)
	local byname = vars[n]
	if byname == nil then
		return nil
	end
	if byname.n > 1 then
		local same = n == "_ENV"
		if same then
			local value = byname.first[3]
			for id, var in pairs(byname) do
				if type(id) ~= "string" and var[3] ~= value then
					same = false
					break
				end
			end
		end
		if not same then
			error("ambiguity local value " .. n, 0)
		end
	end
	return byname.first
end

-- Plans the joins of f's open upvalues (and of same-source functions it
-- reaches) into joins[#joins + 1] = { f, index, var }.
local function plan(f, source, vars, joins, seen)
	if seen[f] then
		return
	end
	seen[f] = true
	local i = 1
	while true do
		local n, v = getupvalue(f, i)
		if n == nil then
			break
		end
		if named(n) then
			if v == nil or v == env then
				local var = resolve(vars, n)
				if var then
					joins[#joins + 1] = { f, i, var }
				end
			elseif type(v) == "function" and source_of(v) == source then
				plan(v, source, vars, joins, seen)
			end
		end
		i = i + 1
	end
end

local function patch_loader(source)
	return function()
		local f, err = load(source, "=patch", "bt", env)
		if f == nil then
			error(err, 0)
		end
		return f, "=patch"
	end
end

return function(funcs, source, ...)
	if type(source) ~= "string" then
		error(string.format("snax.hotfix: bad patch source (%s)", tostring(source)), 2)
	end
	local patch = snax_interface("patch", env, patch_loader(source))

	local by_name = {}
	for _, method in ipairs(funcs) do
		by_name[method[2] .. "." .. method[3]] = method
	end
	local replace = {} -- { old record, new function }
	for _, method in ipairs(patch) do
		local f = method[4]
		if f then
			local key = method[2] .. "." .. method[3]
			local old = by_name[key]
			if old == nil then
				error("Patch mismatch " .. key, 0)
			end
			replace[#replace + 1] = { old, f }
		end
	end

	local vars = {}
	local seen = {}
	for _, method in ipairs(funcs) do
		local f = method[4]
		if f then
			collect(f, source_of(f), vars, seen)
		end
	end
	local joins = {}
	seen = {}
	for _, r in ipairs(replace) do
		plan(r[2], "=patch", vars, joins, seen)
	end

	for _, j in ipairs(joins) do
		local var = j[3]
		upvaluejoin(j[1], j[2], var[1], var[2])
	end
	for _, r in ipairs(replace) do
		r[1][4] = r[2]
	end
	local hook = patch[3][4]
	if hook then
		return hook(...)
	end
end
