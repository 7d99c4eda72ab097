-- Every public Lua function has an editor annotation in docs/types/.
--
-- Usage (repository root, plain lua5.4): lua5.4 test/lint/annotations.lua [--root DIR]
-- Prints one line per problem, then "N passed, N failed": N passed counts the
-- modules whose public functions are all annotated, N failed the problems;
-- exit status 1 on any problem.
--
-- The public functions come from docs/tools/api.lua (read from the code, so
-- the list cannot go stale). The annotation files are docs/types/<module>.lua,
-- each starting with "---@meta <module>" and returning one local: a table
-- whose functions (`function t.f(...) end`, `function t:f(...) end`) and
-- fields (`t.f = ...`) are the module's, or a function (`local function f(...)
-- end`: the module itself is a function). A declaration counts when the
-- `---` lines right above it annotate it:
--   * a function: one `---@param name type` for each of its parameters
--     (`...` included, `self` excepted), none for a parameter it does not
--     have, and a description line or a `---@return`;
--   * a field: a `---@type`.
-- The methods of the other classes a file declares are held to the same
-- rules. Problems: a public function without a declaration, a declaration
-- the code does not export, a malformed declaration, a file whose @meta
-- name does not match its file name.

local root = "."
do
	local i = 1
	while arg and i <= #arg do
		if arg[i] == "--root" and arg[i + 1] then
			root = arg[i + 1]
			i = i + 1
		else
			io.stderr:write("annotations.lua: unknown argument ", tostring(arg[i]), "\n")
			os.exit(2)
		end
		i = i + 1
	end
end

local api = dofile(root .. "/docs/tools/api.lua")

local problems = {}
local function problem(fmt, ...)
	problems[#problems + 1] = string.format(fmt, ...)
end

local function lines_of(path)
	local out = {}
	for line in io.lines(path) do
		out[#out + 1] = line
	end
	return out
end

local function type_files()
	local out = {}
	local cmd = string.format("cd '%s' && ls docs/types/*.lua 2>/dev/null | sort", root)
	local p = assert(io.popen(cmd))
	for line in p:lines() do
		out[#out + 1] = line
	end
	p:close()
	return out
end

-- Parameter names of a "(a, b, ...)" list.
local function params_of(list)
	local out = {}
	for name in list:gmatch "[^,%s()]+" do
		out[#out + 1] = name
	end
	return out
end

-- Checks the annotation block above one declaration; returns true when it is good.
local function check_block(where, decl, block)
	local ok = true
	if decl.field then
		for _, b in ipairs(block) do
			if b:match "^%-%-%-@type%s+%S" then
				return true
			end
		end
		problem("%s: field %s has no ---@type", where, decl.name)
		return false
	end
	local documented, has_text = {}, false
	for _, b in ipairs(block) do
		local pname = b:match "^%-%-%-@param%s+([%w_%.]+)%??%s+%S"
		if pname then
			documented[pname] = (documented[pname] or 0) + 1
		elseif b:match "^%-%-%-@return%s+%S" or not b:match "^%-%-%-@" then
			has_text = true
		end
	end
	local wanted = {}
	for _, pname in ipairs(decl.params) do
		if pname ~= "self" then
			wanted[pname] = true
			if documented[pname] ~= 1 then
				problem("%s: %s: parameter %s needs one ---@param (has %d)", where, decl.name,
					pname, documented[pname] or 0)
				ok = false
			end
		end
	end
	for pname in pairs(documented) do
		if not wanted[pname] then
			problem("%s: %s: ---@param %s names no parameter", where, decl.name, pname)
			ok = false
		end
	end
	if not has_text then
		problem("%s: %s: no description and no ---@return", where, decl.name)
		ok = false
	end
	return ok
end

-- Reads one annotation file: the module name and the full names it annotates correctly.
local function read_types(file, annotated, declared)
	local lines = lines_of(root .. "/" .. file)
	local meta = lines[1] and lines[1]:match "^%-%-%-@meta%s+(%S+)%s*$"
	local base = file:match "([^/]+)%.lua$"
	if meta == nil then
		problem("%s:1: the file must start with ---@meta <module>", file)
		return
	elseif meta ~= base then
		problem("%s:1: ---@meta %s does not match the file name", file, meta)
	end
	local returned
	for i = #lines, 1, -1 do
		returned = lines[i]:match "^return%s+([%w_]+)%s*$"
		if returned or lines[i]:match "%S" then
			break
		end
	end
	if returned == nil then
		problem("%s: must end with `return <local>`", file)
		return
	end
	local block = {}
	for n, line in ipairs(lines) do
		local where = file .. ":" .. n
		local decl
		local t, sep, name, list =
			line:match "^function%s+([%w_]+)([.:])([%w_]+)%s*(%b())%s*end%s*$"
		if t then
			decl = { table = t, name = name, params = params_of(list) }
			if sep == ":" then
				table.insert(decl.params, 1, "self")
			end
		else
			name, list = line:match "^local%s+function%s+([%w_]+)%s*(%b())%s*end%s*$"
			if name then
				decl = { fn = name, name = name, params = params_of(list) }
			else
				t, name = line:match "^([%w_]+)%.([%w_]+)%s*="
				if t then
					decl = { table = t, name = name, field = true }
				end
			end
		end
		if decl then
			local good = check_block(where, decl, block)
			local full
			if decl.fn then
				full = decl.fn == returned and meta or nil
			elseif decl.table == returned then
				full = meta .. "." .. decl.name
			end
			if full then
				if declared[full] then
					problem("%s: %s is declared twice", where, full)
				end
				declared[full] = where
				if good then
					annotated[full] = true
				end
			end
			block = {}
		elseif line:match "^%-%-%-" then
			block[#block + 1] = line
		else
			block = {}
		end
	end
end

local annotated, declared = {}, {}
local files = type_files()
if #files == 0 then
	problem("docs/types: no annotation file")
end
for _, file in ipairs(files) do
	read_types(file, annotated, declared)
end

local public = {}
local functions, modules, incomplete = 0, {}, {}
for _, f in ipairs(api.functions(root)) do
	public[f.name] = true
	modules[f.module] = true
	if annotated[f.name] then
		functions = functions + 1
	else
		incomplete[f.module] = true
		if not declared[f.name] then
			problem("%s (%s:%d): no annotation in docs/types/%s.lua", f.name, f.file, f.line,
				f.module)
		end
	end
end
local passed, total = 0, 0
for m in pairs(modules) do
	total = total + 1
	if not incomplete[m] then
		passed = passed + 1
	end
end
for full, where in pairs(declared) do
	if not public[full] then
		problem("%s: %s is annotated but the code exports no such function", where, full)
	end
end

table.sort(problems)
for _, p in ipairs(problems) do
	print(p)
end
print(string.format("%d of %d modules, %d public functions annotated", passed, total, functions))
print(string.format("%d passed, %d failed", passed, #problems))
os.exit(#problems == 0 and 0 or 1)
