#ifndef SKYNET_LUA_CRYPT_H
#define SKYNET_LUA_CRYPT_H

/*
 * The crypt module table (hashes, DES, Diffie-Hellman, base64, hex). One
 * implementation serves two require names: skynet.crypt inside
 * luaclib/skynet.so, and client.crypt in luaclib/client.so for terminal
 * clients run by a plain lua5.4 (lualib-src/client/ links lua-crypt.o too).
 * The code uses only Lua and libcrypto: no symbol of the skynet runtime.
 */

#include <lua.h>

/*
 * Pushes a new table holding every crypt function and the padding table.
 * Returns 1. Touches no shared data except libcrypto's thread-safe random
 * generator, so any number of Lua states may use the module at once.
 */
int luaopen_skynet_crypt(lua_State *L);

#endif
