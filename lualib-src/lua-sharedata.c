/*
 * skynet.sharedata.core: the shared store (lua-sharestore.c) with
 * sharedata's value rules. Keys are integers and strings; values numbers,
 * strings, booleans and tables. The errors are sharedata's own:
 * "Invalid key <f>" for a float key, "Invalid key type <type>" for any other
 * key (a table key included), "Unsupport value type <type>" for a value.
 *
 * On top of the shared functions (see sstore_register) it adds:
 *   build(t) -> reference userdata owning the new version
 *   new(t)   -> handle carrying one raw reference (corelib.host.new); the
 *               caller drops it with decref (host.delete)
 *
 * Compared with skynet's core, strings live in a plain C pool instead of a
 * private lua_State, so no Lua stack limit bounds the number of distinct
 * strings, and nothing here needs a patched Lua.
 */
#include "lua-sharestore.h"

#include <lauxlib.h>
#include <lua.h>

static int
lbuild(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	struct sstore **slot = sstore_pushref(L, NULL);
	*slot = sstore_build(L, 1, SSTORE_DATA);
	return 1;
}

static int
lnew(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	sstore_pushhandle(L, sstore_build(L, 1, SSTORE_DATA)); // the reference goes with the handle
	return 1;
}

LUAMOD_API int
luaopen_skynet_sharedata_core(lua_State *L) {
	luaL_checkversion(L);
	lua_newtable(L);
	sstore_register(L);
	lua_pushcfunction(L, lbuild);
	lua_setfield(L, -2, "build");
	lua_pushcfunction(L, lnew);
	lua_setfield(L, -2, "new");
	return 1;
}
