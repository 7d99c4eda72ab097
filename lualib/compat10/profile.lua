-- Pre-1.0 name of skynet.profile (active when lualib/compat10/?.lua is on lua_path).
return require "skynet.profile"
