-- check.lua: `make docs-check`. Verifies that the documentation covers the code and that its
-- links resolve. Run from the repository root: lua5.4 docs/tools/check.lua [--root DIR]
-- Exit status 0 when everything holds, 1 with one line per problem otherwise.
--
-- 1. Every public function listed by docs/tools/api.lua has exactly one reference entry in
--    docs/**/*.md. A reference entry is a Markdown heading (## to ####) made only of code spans
--    separated by "," or "/", one of which is exactly the function's full name:
--        ### `skynet.call`
--        ### `skynet.ret` / `skynet.retpack`
--    A heading of that form naming `module.x` for a public module whose code exports no `x`
--    (and that is not itself a module, like `skynet.datasheet.builder`) is reported too: an
--    entry left behind by a removed or renamed function.
-- 2. Every config key the code reads (api.lua --config) has a row in a table of
--    docs/config.md whose first cell is made only of code spans, one of them the key:
--        | `thread` | 8 | worker threads |
--    The node's own list of its keys (KEYS in skynet-src/skynet_keys.c, which warns at boot about
--    any other key of a config) holds exactly the keys the code reads plus config_keys, and every
--    key with a row in docs/config.md is in that list.
-- 3. Every relative link in README.md and docs/**/*.md ([text](target), outside code) names an
--    existing file or folder, and its #anchor, if any, names a heading of the target Markdown
--    file (GitHub's rule: lower case, punctuation other than - and _ dropped, spaces to -,
--    repeats numbered -1, -2 ...) or an <a id="..."> / <a name="..."> in it.

local here = (arg and arg[0] or ""):match "^(.*)/[^/]*$" or "."
local api = dofile(here .. "/api.lua")

local root = "."
do
	local i = 1
	while arg and i <= #arg do
		if arg[i] == "--root" then
			root = arg[i + 1]
			i = i + 1
		else
			io.stderr:write("check.lua: unknown argument ", arg[i], "\n")
			os.exit(2)
		end
		i = i + 1
	end
end

local problems = {}
local function problem(fmt, ...)
	problems[#problems + 1] = string.format(fmt, ...)
end

local read = api.read

local function exists(path)
	local ok = os.rename(path, path)
	return ok ~= nil
end

-- The Markdown files: README.md and docs/**/*.md, relative to root.
local function markdown_files()
	local out = { "README.md" }
	local p = assert(io.popen(string.format("cd '%s' && find docs -type f -name '*.md' | sort", root)))
	for line in p:lines() do
		out[#out + 1] = line
	end
	p:close()
	return out
end

-- Lines of a Markdown file outside fenced code blocks: list of { n = line number, text = }.
local function prose_lines(text)
	local out, fence = {}, nil
	local n = 0
	for line in (text .. "\n"):gmatch "(.-)\n" do
		n = n + 1
		local f = line:match "^%s*(```+)" or line:match "^%s*(~~~+)"
		if fence then
			if f and line:match("^%s*" .. fence:sub(1, 1):rep(#fence)) then
				fence = nil
			end
		elseif f then
			fence = f
		elseif not line:match "^    " and not line:match "^\t" then
			out[#out + 1] = { n = n, text = line }
		end
	end
	return out
end

-- GitHub's anchor of a heading text.
local function slug(text)
	text = text:gsub("%[([^%]]*)%]%b()", "%1") -- links keep their text
	text = text:gsub("<[^>]+>", "") -- inline html
	text = text:lower()
	text = text:gsub("[^%w%s%-_\128-\255]", "")
	text = text:gsub(" ", "-")
	return text
end

-- Headings and explicit anchors of a Markdown file.
local anchor_cache = {}
local function anchors_of(path)
	if anchor_cache[path] then
		return anchor_cache[path]
	end
	local set, count = {}, {}
	local text = read(root .. "/" .. path) or ""
	for _, l in ipairs(prose_lines(text)) do
		local h = l.text:match "^#+%s+(.-)%s*#*%s*$"
		if h then
			local s = slug(h)
			if count[s] then
				count[s] = count[s] + 1
				set[s .. "-" .. count[s]] = true
			else
				count[s] = 0
				set[s] = true
			end
		end
		for id in l.text:gmatch '<a%s+[^>]*id="([^"]+)"' do
			set[id] = true
		end
		for id in l.text:gmatch '<a%s+[^>]*name="([^"]+)"' do
			set[id] = true
		end
	end
	anchor_cache[path] = set
	return set
end

-- Normalise a/b/../c and ./ parts.
local function normalise(path)
	local parts = {}
	for p in path:gmatch "[^/]+" do
		if p == ".." and #parts > 0 and parts[#parts] ~= ".." then
			parts[#parts] = nil
		elseif p ~= "." then
			parts[#parts + 1] = p
		end
	end
	return table.concat(parts, "/")
end

---------------------------------------------------------------- gather the docs

local files = markdown_files()
local entries = {} -- name -> { {file, line} }
local key_rows = {} -- config key -> { {file, line} }
local nlinks = 0

for _, file in ipairs(files) do
	local text = read(root .. "/" .. file)
	if not text then
		problem("%s: missing", file)
	else
		local dir = file:match "^(.*)/[^/]*$" or "."
		for _, l in ipairs(prose_lines(text)) do
			-- 1. reference entries (docs/ only)
			local h = l.text:match "^##%#?%#?%s+(.-)%s*$"
			if h and file:match "^docs/" then
				local names, rest = {}, h
				while true do
					local name, after = rest:match "^`([^`]+)`%s*(.*)$"
					if not name then
						break
					end
					names[#names + 1] = name
					rest = after:match "^[,/]%s*(.*)$"
					if not rest then
						rest = after
						break
					end
				end
				if #names > 0 and rest == "" then
					for _, name in ipairs(names) do
						entries[name] = entries[name] or {}
						table.insert(entries[name], { file = file, line = l.n })
					end
				end
			end
			-- 2. config rows
			if file == "docs/config.md" then
				local cell = l.text:match "^|%s*([^|]-)%s*|"
				if cell and cell:match "^`" then
					local ok = cell:gsub("`[^`]+`", ""):match "^[%s,/]*$"
					if ok then
						for key in cell:gmatch "`([^`]+)`" do
							key_rows[key] = key_rows[key] or {}
							table.insert(key_rows[key], { file = file, line = l.n })
						end
					end
				end
			end
			-- 3. links, outside code spans
			local line = l.text:gsub("`[^`]*`", "")
			for target in line:gmatch "%]%(([^)%s]+)[^)]*%)" do
				if not target:match "^%a[%w+.-]*:" then
					nlinks = nlinks + 1
					local path, anchor = target:match "^([^#]*)#?(.*)$"
					local resolved = path == "" and file or normalise(dir .. "/" .. path)
					if not exists(root .. "/" .. resolved) then
						problem("%s:%d: link to %s: no file %s", file, l.n, target, resolved)
					elseif anchor ~= "" then
						if not resolved:match "%.md$" then
							problem("%s:%d: link to %s: an anchor into a file that is not Markdown", file, l.n, target)
						elseif not anchors_of(resolved)[anchor] then
							problem("%s:%d: link to %s: no heading with anchor #%s in %s", file, l.n, target, anchor,
								resolved)
						end
					end
				end
			end
		end
	end
end

---------------------------------------------------------------- compare with the code

local funcs = api.functions(root)
local known, modules = {}, {}
for _, f in ipairs(funcs) do
	known[f.name] = f
	modules[f.module] = true
end
for _, f in ipairs(funcs) do
	local e = entries[f.name]
	if not e then
		problem("%s:%d: %s has no reference entry in docs/ (a heading ### `%s`)", f.file, f.line, f.name, f.name)
	elseif #e > 1 then
		problem("%s:%d: %s has %d reference entries (also %s:%d)", e[2].file, e[2].line, f.name, #e, e[1].file,
			e[1].line)
	end
end
-- entries naming a function of a public module that the code does not export
local names = {}
for name in pairs(entries) do
	names[#names + 1] = name
end
table.sort(names)
for _, name in ipairs(names) do
	local module = name:match "^(.*)%.[%w_]+$"
	if module and modules[module] and not known[name] and not api.PRIVATE[name] and not modules[name] then
		local e = entries[name][1]
		problem("%s:%d: entry for %s, which %s does not export", e.file, e.line, name, module)
	end
end

local keys, key_errors = api.config(root)
for _, e in ipairs(key_errors) do
	problem("%s", e)
end
for _, k in ipairs(keys) do
	if not key_rows[k.key] then
		problem("%s:%d: config key %s has no row in docs/config.md (| `%s` | ... |)", k.file, k.line, k.key, k.key)
	end
end

-- KEYS of skynet_keys.c: the string literals between its braces.
local KEYS_FILE = "skynet-src/skynet_keys.c"
local node_keys = {}
do
	local src = read(root .. "/" .. KEYS_FILE) or ""
	local body = src:match "static const char %*const KEYS%[%] = (%b{})"
	if not body then
		problem("%s: no KEYS list found", KEYS_FILE)
	else
		for key in body:gmatch '"([^"]+)"' do
			node_keys[key] = true
		end
	end
end
local code_keys = {}
for _, k in ipairs(keys) do
	code_keys[k.key] = true
end
local function sorted(set)
	local out = {}
	for k in pairs(set) do
		out[#out + 1] = k
	end
	table.sort(out)
	return out
end
for _, k in ipairs(sorted(code_keys)) do
	if not node_keys[k] then
		problem("%s: KEYS lacks %s, a key the code reads (the node would warn about it)", KEYS_FILE, k)
	end
end
for _, k in ipairs(sorted(node_keys)) do
	if not code_keys[k] then
		problem("%s: KEYS has %s, which no code reads", KEYS_FILE, k)
	end
end
for _, k in ipairs(sorted(key_rows)) do
	if not node_keys[k] then
		local row = key_rows[k][1]
		problem("%s:%d: config key %s is documented but not in KEYS of %s", row.file, row.line, k, KEYS_FILE)
	end
end

for _, p in ipairs(problems) do
	print(p)
end
print(string.format("docs-check: %d functions, %d config keys, %d links in %d files; %d problem(s)", #funcs,
	#keys, nlinks, #files, #problems))
os.exit(#problems == 0 and 0 or 1)
