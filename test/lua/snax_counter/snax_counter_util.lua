-- Required by test/lua/snax_counter.lua: only found through the folder that
-- snaxd puts first on package.path (SERVICE_PATH).
return { tag = "from the service folder" }
