/*
 * The snlua instance: one per service, created by service_snlua.c and shared
 * with the parts in this folder (alloc, trap, sampler, profile; codecache and slim
 * need no instance). Each part owns the fields its embedded struct names;
 * the instance itself owns the state and borrows the context.
 */
#ifndef SKYNET_SNLUA_INSTANCE_H
#define SKYNET_SNLUA_INSTANCE_H

#include "alloc.h"
#include "sampler.h"
#include "trap.h"

#include <lua.h>

#include <stdbool.h>
#include <stddef.h>

#define SNLUA_WARN_BUF 256

struct skynet_context;

struct snlua {
	lua_State *L;                 // owned
	struct skynet_context *ctx;   // borrowed: the context outlives its instance
	struct snlua_mem mem;         // the state's memory (alloc.c)
	struct snlua_trap trap;       // signals not yet served (trap.c)
	struct snlua_sampler sampler; // the profiler's name for it, cached names (sampler.c)
	bool warn_off;                // Lua warnings ("@off"/"@on")
	size_t warn_len;
	char warn_buf[SNLUA_WARN_BUF]; // a warning being assembled from pieces
};

/* The instance of the state L belongs to (its allocator's ud). */
static inline struct snlua *
snlua_of(lua_State *L) {
	void *ud = NULL;
	(void)lua_getallocf(L, &ud);
	return ud;
}

#endif
