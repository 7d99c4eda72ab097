/*
 * snlua's memory: the allocator of each service's Lua state.
 *
 * Accounting. Each service gets its own lua_State whose allocator
 * (snlua_mem_alloc) counts the bytes the VM holds (struct snlua_mem, units:
 * bytes). A limit (registry field "memlimit", read once after the loader
 * returns) makes a growing allocation that would pass it fail, so Lua
 * raises "not enough memory" and only that call fails. A warning is logged
 * when usage passes 32 MB and again at every doubling.
 * Exiting must never need memory the service cannot get: skynet.exit first
 * calls registry "snlua.exit_reserve", which lets the heap grow up to
 * SNLUA_EXIT_RESERVE bytes past the limit for the rest of the service's life
 * (bounded: a runaway __close handler still meets a limit). skynet.memlimit
 * also loads the exit code before the limit applies, so exit never loads a
 * module. Only entering exit itself (a CallInfo or a few stack slots for
 * the call, which Lua normally keeps from earlier calls) is not covered.
 * Code loaded on first use (the standard libraries snlua opens lazily and
 * the framework's lazy parts) loads under a grant: while it loads, the
 * heap may pass the limit by up to SNLUA_GRANT_BYTES more, and what the
 * load kept then raises the limit by as much (at most SNLUA_GRANT_BYTES
 * over the service's life). So it does not count against the limit, as if
 * it had been loaded before the limit was set, and a service at its limit
 * keeps the room it had for its own work (a few free stack slots, a small
 * table), and the next part it loads on first use works too.
 *
 * Small-object pool, one per Lua state (only the thread running the service
 * touches it). Objects of up to POOL_MAX bytes are carved from 4 KB chunks
 * in 8-byte size classes, with no per-object header; a freed object goes
 * on its class's free list and is reused by the next object of that class.
 * Objects are 8-byte aligned, which is all Lua asks of its allocator (its
 * strictest type is 8 bytes, and a userdata's memory sits at a multiple of
 * 8 past the block anyway): 16-byte classes wasted about 5 KB per service
 * in rounding, 8-byte classes about 1.6 KB.
 * All classes carve from one shared chunk, so at most one chunk is partly
 * used. Lua always passes the exact old size, which names the class. This
 * saves glibc's per-object header and locking: a Lua state is mostly small
 * objects (strings, tables, closures), so services start faster and hold
 * less memory. Chunks go back only when the state closes. Under
 * AddressSanitizer the pool is off, so every object stays visible to it.
 *
 * Locking: none. The account and the pool belong to the state, and only
 * the thread running the service calls into the state.
 */
#include "alloc.h"
#include "instance.h"

#include "skynet.h"

#include <lauxlib.h>

#include <stdbool.h>
#include <string.h>

#define SNLUA_WARN_BYTES   (32 * 1024 * 1024)
#define SNLUA_MB           (1024.0 * 1024.0)
#define SNLUA_EXIT_RESERVE (256 * 1024)

#define POOL_GRAIN   SNLUA_POOL_GRAIN
#define POOL_MAX     SNLUA_POOL_MAX
#define POOL_CLASSES SNLUA_POOL_CLASSES
#define POOL_CHUNK   4096

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ENABLED 0
#endif
#endif
#ifndef POOL_ENABLED
#define POOL_ENABLED 1
#endif

struct snlua_pool_chunk {
	struct snlua_pool_chunk *next; // objects follow, 8-byte aligned
};

_Static_assert(sizeof(struct snlua_pool_chunk) % POOL_GRAIN == 0, "objects stay aligned");
_Static_assert(POOL_GRAIN >= sizeof(void *), "a free object holds the free-list link");

static inline int
pool_class(size_t sz) {
	return (int)((sz + POOL_GRAIN - 1) / POOL_GRAIN) - 1;
}

static void *
pool_alloc(struct snlua_pool *p, size_t sz) {
	int c = pool_class(sz);
	void *obj = p->free[c];
	if (obj != NULL) {
		p->free[c] = *(void **)obj;
		return obj;
	}
	size_t bytes = (size_t)(c + 1) * POOL_GRAIN;
	if ((size_t)(p->bump_end - p->bump) < bytes) {
		struct snlua_pool_chunk *chunk = skynet_malloc(POOL_CHUNK);
		chunk->next = p->chunks;
		p->chunks = chunk;
		p->bump = (char *)(chunk + 1);
		p->bump_end = (char *)chunk + POOL_CHUNK;
	}
	obj = p->bump;
	p->bump += bytes;
	return obj;
}

static void
pool_free(struct snlua_pool *p, void *obj, size_t sz) {
	int c = pool_class(sz);
	*(void **)obj = p->free[c];
	p->free[c] = obj;
}

static void
pool_destroy(struct snlua_pool *p) {
	struct snlua_pool_chunk *chunk = p->chunks;
	while (chunk) {
		struct snlua_pool_chunk *next = chunk->next;
		skynet_free(chunk);
		chunk = next;
	}
	memset(p, 0, sizeof(*p));
}

static inline bool
is_small(size_t sz) {
	return POOL_ENABLED && sz <= POOL_MAX;
}

/* realloc for the state: small objects from the pool, the rest from skynet_malloc. */
static void *
pool_realloc(struct snlua_pool *p, void *ptr, size_t old_bytes, size_t nsize) {
	if (nsize == 0) {
		if (ptr == NULL)
			return NULL;
		if (is_small(old_bytes))
			pool_free(p, ptr, old_bytes);
		else
			skynet_free(ptr);
		return NULL;
	}
	if (ptr == NULL)
		return is_small(nsize) ? pool_alloc(p, nsize) : skynet_malloc(nsize);
	if (!is_small(old_bytes) && !is_small(nsize))
		return skynet_realloc(ptr, nsize);
	if (is_small(old_bytes) && is_small(nsize) && pool_class(old_bytes) == pool_class(nsize))
		return ptr;
	void *q = is_small(nsize) ? pool_alloc(p, nsize) : skynet_malloc(nsize);
	memcpy(q, ptr, old_bytes < nsize ? old_bytes : nsize);
	if (is_small(old_bytes))
		pool_free(p, ptr, old_bytes);
	else
		skynet_free(ptr);
	return q;
}

void
snlua_mem_init(struct snlua_mem *m) {
	memset(m, 0, sizeof(*m));
	m->warn_bytes = SNLUA_WARN_BYTES;
}

void
snlua_mem_set_limit(struct snlua_mem *m, size_t limit_bytes) {
	m->limit_bytes = limit_bytes;
}

void
snlua_mem_destroy(struct snlua_mem *m) {
	pool_destroy(&m->pool);
}

void *
snlua_mem_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
	struct snlua *l = ud;
	struct snlua_mem *m = &l->mem;
	size_t old_bytes = ptr ? osize : 0; // for a new object osize is its type tag
	if (nsize == 0) {
		pool_realloc(&m->pool, ptr, old_bytes, 0);
		m->bytes -= old_bytes;
		return NULL;
	}
	if (nsize > old_bytes && m->limit_bytes != 0 &&
	    m->bytes + (nsize - old_bytes) >
	        m->limit_bytes + m->reserve_bytes + (m->grants > 0 ? SNLUA_GRANT_BYTES : 0))
		return NULL; // Lua collects and retries, then raises "not enough memory"
	void *p = pool_realloc(&m->pool, ptr, old_bytes, nsize);
	m->bytes += nsize - old_bytes; // unsigned wrap-around also covers shrinking
	if (m->bytes > m->warn_bytes) {
		while (m->warn_bytes < m->bytes)
			m->warn_bytes *= 2;
		skynet_error(l->ctx, "warn: snlua: memory usage size_mb=%.2f", m->bytes / SNLUA_MB);
	}
	return p;
}

static void
grant_begin(struct snlua_mem *m) {
	if (m->grants++ == 0)
		m->grant_start_bytes = m->bytes;
}

/* The outermost grant ends: raise the limit by what the load kept. */
static void
grant_end(struct snlua_mem *m) {
	if (--m->grants > 0 || m->limit_bytes == 0 || m->bytes <= m->grant_start_bytes)
		return;
	size_t kept = m->bytes - m->grant_start_bytes;
	if (kept > SNLUA_GRANT_BYTES - m->lifted_bytes)
		kept = SNLUA_GRANT_BYTES - m->lifted_bytes;
	m->lifted_bytes += kept;
	m->limit_bytes += kept;
}

void
snlua_mem_call_granted(lua_State *L, int nargs, int nresults) {
	struct snlua_mem *m = &snlua_of(L)->mem;
	grant_begin(m);
	int status = lua_pcall(L, nargs, nresults, 0);
	grant_end(m);
	if (status != LUA_OK)
		lua_error(L); // the same error object, raised past the grant
}

/* After f returns, fails, or returns following a yield inside it. */
static int
granted_done(lua_State *L, int status, lua_KContext ctx) {
	grant_end(&snlua_of(L)->mem);
	if (status != LUA_OK && status != LUA_YIELD)
		lua_error(L);
	return lua_gettop(L) - (int)ctx;
}

int
snlua_mem_granted(lua_State *L) {
	luaL_checktype(L, 1, LUA_TFUNCTION);
	grant_begin(&snlua_of(L)->mem);
	/* pcallk: f may yield (skynet.require waits for a module another coroutine loads) */
	int status = lua_pcallk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, 0, granted_done);
	return granted_done(L, status, 0);
}

int
snlua_mem_exit_reserve(lua_State *L) {
	snlua_of(L)->mem.reserve_bytes = SNLUA_EXIT_RESERVE;
	return 0;
}
