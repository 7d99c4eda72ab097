/*
 * snlua's module search cache: where require found each module, remembered
 * per process so that later services skip the file search. See modcache.c
 * for the design.
 */
#ifndef SKYNET_SNLUA_MODCACHE_H
#define SKYNET_SNLUA_MODCACHE_H

#include <lua.h>

#pragma GCC visibility push(hidden)

/*
 * Wrap package.searchers 2 (Lua files, already the code cache's), 3 (C
 * libraries) and 4 (all-in-one C libraries) of L so they consult and fill
 * the cache. Call after snlua_codecache_install.
 */
void snlua_modcache_install(lua_State *L);

/* Forget every remembered search (codecache.clear calls it). Thread-safe. */
void snlua_modcache_clear(void);

#pragma GCC visibility pop

#endif
