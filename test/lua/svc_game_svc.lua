-- Runs one service of the demo game, examples/<name>.lua, on the test node
-- (test/config.test has no examples/ on its paths). Launch parameter: the
-- service name, then that service's own arguments. The game's watchdog
-- launches its agents through this wrapper when settings.wrapper names it.
local name = ...
package.path = "./examples/?.lua;" .. package.path
local main = assert(loadfile("./examples/" .. name .. ".lua"))
return main(select(2, ...))
