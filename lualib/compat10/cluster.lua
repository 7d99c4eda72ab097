-- Pre-1.0 name of skynet.cluster (active when lualib/compat10/?.lua is on lua_path).
return require "skynet.cluster"
