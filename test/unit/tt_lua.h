#ifndef SKYNET_TT_LUA_H
#define SKYNET_TT_LUA_H

/* Helpers for unit tests that drive a Lua C module from a plain lua_State. */

#include <lauxlib.h>
#include <lua.h>
#include <stdbool.h>
#include <stdio.h>

/* Runs chunk; true when it returns a true value. Errors are printed to stderr. */
static bool
tt_lua_run(lua_State *L, const char *chunk) {
	if (luaL_loadstring(L, chunk) != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK) {
		fprintf(stderr, "lua: %s\n", lua_tostring(L, -1));
		lua_pop(L, 1);
		return false;
	}
	bool ok = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return ok;
}

#endif
