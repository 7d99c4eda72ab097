-- Pre-1.0 name of skynet.db.mysql (active when lualib/compat10/?.lua is on lua_path).
return require "skynet.db.mysql"
