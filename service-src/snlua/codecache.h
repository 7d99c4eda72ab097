/*
 * snlua's code cache: each Lua file is compiled once per process and later
 * loads undump the cached bytecode. See codecache.c for the design.
 */
#ifndef SKYNET_SNLUA_CODECACHE_H
#define SKYNET_SNLUA_CODECACHE_H

#include <lua.h>

#pragma GCC visibility push(hidden)

/*
 * luaL_loadfilex through the process-wide cache: pushes the chunk (or the
 * error message) on L and returns the load status. A mode without 'b'
 * bypasses the cache. Thread-safe (any number of states at once).
 */
int snlua_codecache_load(lua_State *L, const char *path, const char *mode);

/* The opener of module "skynet.codecache" (loadfile, clear, mode). */
int snlua_codecache_open(lua_State *L);

/* Make require load Lua files through the cache (package.searchers[2]). */
void snlua_codecache_install(lua_State *L);

#pragma GCC visibility pop

#endif
