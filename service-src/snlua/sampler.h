/*
 * snlua's side of the sampling profiler: the stack of the running service
 * as a folded line. See sampler.c for the design.
 */
#ifndef SKYNET_SNLUA_SAMPLER_H
#define SKYNET_SNLUA_SAMPLER_H

#include "atomic.h"

#include <lua.h>

#include <stdint.h>

#pragma GCC visibility push(hidden)

#define SNLUA_SAMPLER_NAME 40 // bytes of the service's name kept, with the NUL

struct snlua;
struct sampler_names;

/*
 * The profiler's state of one service, embedded in struct snlua; only
 * sampler.c (and trap.c's handler, which reads handle and stores ticket)
 * touches it. Set
 * before the service's first message; then the thread running the service
 * alone uses it.
 */
struct snlua_sampler {
	uint32_t handle;               // the service's address
	ATOM_U32 ticket;               // the profile that asked for the sample owed (trap.c)
	char name[SNLUA_SAMPLER_NAME]; // the script's name ("agent"), the first word of the args
	struct sampler_names *names;   // owned, NULL until the first sample: C function names
};

/* Name the service (handle, its snlua args) for its samples. Before the first message. */
void snlua_sampler_init(struct snlua *l, uint32_t handle, const char *args);

/* Free what the samples cached; after the state is closed. */
void snlua_sampler_destroy(struct snlua *l);

/*
 * From trap.c's hook, in the thread running the service: record the stack
 * of L (the coroutine running; with the main thread's frames first when L
 * is a coroutine) as one sample.
 */
void snlua_sampler_take(struct snlua *l, lua_State *L);

/* A sample was due but the message ended first: record it as time outside Lua. */
void snlua_sampler_outside(struct snlua *l);

/* Register snlua's sampler with the profiler (once per process is enough; repeats are cheap). */
void snlua_sampler_install(void);

#pragma GCC visibility pop

#endif
