/*
 * snlua's memory: the allocator of each service's Lua state (a small-object
 * pool under a byte counter with a limit). See alloc.c for the design.
 * Only the thread running the service calls these, except where noted.
 */
#ifndef SKYNET_SNLUA_ALLOC_H
#define SKYNET_SNLUA_ALLOC_H

#include <lua.h>

#include <stddef.h>

#pragma GCC visibility push(hidden)

#define SNLUA_POOL_GRAIN   8
#define SNLUA_POOL_MAX     128
#define SNLUA_POOL_CLASSES (SNLUA_POOL_MAX / SNLUA_POOL_GRAIN)

struct snlua;
struct snlua_pool_chunk;

/* Embedded in struct snlua; only alloc.c touches the fields. */
struct snlua_pool {
	void *free[SNLUA_POOL_CLASSES]; // per class: freed objects, linked through their first word
	char *bump;                     // the unused tail of the newest chunk
	char *bump_end;
	struct snlua_pool_chunk *chunks; // owned
};

/*
 * The memory account of one service, embedded in struct snlua. Only the
 * service's thread touches it; the other parts read bytes (to report it).
 */
struct snlua_mem {
	size_t bytes;           // held by the Lua state now
	size_t warn_bytes;      // the next usage that logs a warning
	size_t limit_bytes;     // 0: no limit
	size_t reserve_bytes;   // allowed past the limit once exit has begun
	struct snlua_pool pool; // the state's small objects
};

/* Set up an empty account with no limit. m is embedded in its instance. */
void snlua_mem_init(struct snlua_mem *m);

/* Refuse growth past limit_bytes from now on (0: no limit). */
void snlua_mem_set_limit(struct snlua_mem *m, size_t limit_bytes);

/*
 * Free the pool's chunks. Call it after lua_close (which frees into the
 * pool); every object the pool handed out is then gone.
 */
void snlua_mem_destroy(struct snlua_mem *m);

/*
 * The lua_Alloc of a service's state; ud is its struct snlua (borrowed: it
 * outlives the state). Counts the bytes, refuses growth past the limit (Lua
 * then raises "not enough memory") and logs a warning at 32 MB and every
 * doubling after it.
 */
void *snlua_mem_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/*
 * Registry "snlua.exit_reserve"(): the service is exiting; from now on its
 * heap may grow a bounded reserve past the limit. Returns nothing to Lua.
 */
int snlua_mem_exit_reserve(lua_State *L);

#pragma GCC visibility pop

#endif
