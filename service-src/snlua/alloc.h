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
#define SNLUA_GRANT_BYTES  (128 * 1024) // past the limit, while loading on first use

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
	size_t bytes;             // held by the Lua state now
	size_t warn_bytes;        // the next usage that logs a warning
	size_t limit_bytes;       // 0: no limit
	size_t reserve_bytes;     // allowed past the limit once exit has begun
	int grants;               // nesting depth of the grant (snlua_mem_call_granted)
	size_t grant_start_bytes; // bytes when the outermost grant began
	size_t lifted_bytes;      // the limit was raised by this much for loads under grants
	struct snlua_pool pool;   // the state's small objects
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
 * Call the function below nargs arguments on L's stack (lua_call style,
 * nresults results) with the limit lifted by SNLUA_GRANT_BYTES while it
 * runs; afterwards the limit rises by what it kept (SNLUA_GRANT_BYTES in
 * all, over the state's life). Code the service did not hold when its limit
 * was set (a library or framework part loaded on first use) thus loads at
 * the limit and does not count against it. Nests; an error propagates
 * after the grant is taken back.
 */
void snlua_mem_call_granted(lua_State *L, int nargs, int nresults);

/*
 * Registry "snlua.granted"(f, ...): f(...) under the grant above; returns
 * what f returns. f may yield; the grant then lasts until it returns (or
 * for good, should its coroutine never be resumed: still bounded).
 */
int snlua_mem_granted(lua_State *L);

/*
 * Registry "snlua.exit_reserve"(): the service is exiting; from now on its
 * heap may grow a bounded reserve past the limit. Returns nothing to Lua.
 */
int snlua_mem_exit_reserve(lua_State *L);

#pragma GCC visibility pop

#endif
