/*
 * snlua's coroutine profiler: skynet.profile, and the coroutine.resume and
 * coroutine.wrap that account the time each profiled coroutine runs. See
 * profile.c for the design. The thread running the service only.
 */
#ifndef SKYNET_SNLUA_PROFILE_H
#define SKYNET_SNLUA_PROFILE_H

#include <lua.h>

#pragma GCC visibility push(hidden)

/*
 * Prepare a new state's main thread: clear its extra space, which every
 * thread the state creates later copies. Call once, right after
 * lua_newstate.
 */
void snlua_profile_init_state(lua_State *L);

/* The opener of module "skynet.profile" (start, stop, resume, wrap). */
int snlua_profile_open(lua_State *L);

/* Replace coroutine.resume and coroutine.wrap with the accounting ones. */
void snlua_profile_install(lua_State *L);

#pragma GCC visibility pop

#endif
