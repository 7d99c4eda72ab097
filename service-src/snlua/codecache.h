/*
 * snlua's code cache: each Lua file is compiled once per process and later
 * loads undump the cached bytecode. See codecache.c for the design.
 */
#ifndef SKYNET_SNLUA_CODECACHE_H
#define SKYNET_SNLUA_CODECACHE_H

#include <lua.h>

#pragma GCC visibility push(hidden)

/* Code cache modes (codecache.mode), per state. */
#define SNLUA_CACHE_ON    0 // use and fill the cache
#define SNLUA_CACHE_EXIST 1 // use cached chunks, do not add new ones
#define SNLUA_CACHE_OFF   2 // always read the file

/* L's code cache mode (SNLUA_CACHE_ON unless codecache.mode changed it). */
int snlua_codecache_mode(lua_State *L);

/*
 * The second half of a Lua file searcher: load module name from path
 * through the cache and return 2 (the loader and the path pushed on L);
 * raises the standard "error loading module" error when it does not load.
 */
int snlua_codecache_module(lua_State *L, const char *name, const char *path);

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
