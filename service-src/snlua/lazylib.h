/*
 * snlua's standard libraries, some opened on first use. See lazylib.c for
 * the design. The thread running the service only.
 */
#ifndef SKYNET_SNLUA_LAZYLIB_H
#define SKYNET_SNLUA_LAZYLIB_H

#include <lua.h>

#pragma GCC visibility push(hidden)

/*
 * Open the standard libraries in a new state, as luaL_openlibs does, except
 * that io, os, utf8, math and debug are empty tables that fill themselves
 * from the real library on first use (under the memory grant of alloc.h).
 * The state's allocator must be snlua_mem_alloc.
 */
void snlua_lazylib_open(lua_State *L);

#pragma GCC visibility pop

#endif
