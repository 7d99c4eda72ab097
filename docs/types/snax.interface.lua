---@meta snax.interface
-- Editor help: `require "snax.interface"` returns one function that runs the
-- main chunk of a snax service file and numbers its methods.

---Loads the snax file name in environment G (through loader, along the config key `snax`) and
---returns its method records { id, group, name, f } (ids 1-4: init, exit, hotfix, profile)
---and the template it was found through. prepare(template) runs before the main chunk.
---@param name string
---@param G table
---@param loader? fun(path: string, name: string, G: table): function, string
---@param prepare? fun(template: string)
---@return table[] funcs, string template
local function interface(name, G, loader, prepare) end

return interface
