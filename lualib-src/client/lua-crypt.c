/*
 * client.crypt: the crypt module for terminal clients run by a plain lua5.4
 * (LUA_CPATH pointing at luaclib/ finds luaclib/client.so). The functions are
 * those of skynet.crypt: client.so links the same object (lua-crypt.o), which
 * needs only Lua and libcrypto.
 */
#include "../lua-crypt.h"

#include <lua.h>

int luaopen_client_crypt(lua_State *L);

int
luaopen_client_crypt(lua_State *L) {
	return luaopen_skynet_crypt(L);
}
