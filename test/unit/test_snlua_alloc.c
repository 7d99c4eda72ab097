/*
 * snlua's allocator (service-src/snlua/alloc.c) and lazy standard libraries
 * (lazylib.c) on a plain lua_State: the pool's 8-byte size classes, the
 * memory limit, and the grant under which code loaded on first use passes
 * the limit (and then lifts it by what it kept, never by more than
 * SNLUA_GRANT_BYTES in all).
 */
#include "snlua/alloc.h"
#include "snlua/instance.h"
#include "snlua/lazylib.h"

#include "tt.h"

#include "skynet.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ON 0 // the pool is off under AddressSanitizer
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ON 0
#endif
#endif
#ifndef POOL_ON
#define POOL_ON 1
#endif

static struct snlua *
instance_create(void) {
	struct snlua *l = skynet_calloc(1, sizeof(*l));
	snlua_mem_init(&l->mem);
	l->L = lua_newstate(snlua_mem_alloc, l);
	return l;
}

static void
instance_release(struct snlua *l) {
	lua_close(l->L);
	snlua_mem_destroy(&l->mem);
	skynet_free(l);
}

static void
pool_packs_objects_in_8_byte_classes(int *failed) {
	struct snlua *l = instance_create();
	/* Fresh objects of one class come one after the other from the chunk. */
	char *a = snlua_mem_alloc(l, NULL, LUA_TTABLE, 40);
	char *b = snlua_mem_alloc(l, NULL, LUA_TTABLE, 40);
	char *c = snlua_mem_alloc(l, NULL, LUA_TSTRING, 17);
	char *d = snlua_mem_alloc(l, NULL, LUA_TSTRING, 17);
	TT_CHECK(((uintptr_t)a & 7) == 0 && ((uintptr_t)c & 7) == 0);
	if (POOL_ON) {
		TT_CHECK(b - a == 40); // 48 with 16-byte classes
		TT_CHECK(d - c == 24);
	}
	memset(a, 1, 40); // every byte is the object's
	memset(c, 2, 17);
	size_t before = l->mem.bytes;
	snlua_mem_alloc(l, b, 40, 0);
	TT_CHECK(l->mem.bytes == before - 40);
	char *e = snlua_mem_alloc(l, NULL, LUA_TTABLE, 33); // the same class: reuses b
	if (POOL_ON)
		TT_CHECK(e == b);
	char *f = snlua_mem_alloc(l, e, 33, 200); // grows out of the pool, keeps the bytes
	TT_CHECK(f != NULL);
	snlua_mem_alloc(l, a, 40, 0);
	snlua_mem_alloc(l, c, 17, 0);
	snlua_mem_alloc(l, d, 17, 0);
	snlua_mem_alloc(l, f, 200, 0);
	instance_release(l);
}

/* keep(n): a string of n bytes, anchored in the registry. */
static int
keep(lua_State *L) {
	size_t n = (size_t)luaL_checkinteger(L, 1);
	luaL_Buffer b;
	char *p = luaL_buffinitsize(L, &b, n);
	memset(p, 'k', n);
	luaL_pushresultsize(&b, n);
	lua_pushvalue(L, -1);
	(void)luaL_ref(L, LUA_REGISTRYINDEX); // kept for the state's life
	return 1;
}

static int
try_keep(lua_State *L, size_t n) {
	lua_pushcfunction(L, keep);
	lua_pushinteger(L, (lua_Integer)n);
	int status = lua_pcall(L, 1, 0, 0);
	lua_settop(L, 0);
	return status;
}

static int
keep_granted(lua_State *L) {
	lua_pushcfunction(L, keep);
	lua_insert(L, 1);
	snlua_mem_call_granted(L, 1, 0);
	return 0;
}

static int
try_keep_granted(lua_State *L, size_t n) {
	lua_pushcfunction(L, keep_granted);
	lua_pushinteger(L, (lua_Integer)n);
	int status = lua_pcall(L, 1, 0, 0);
	lua_settop(L, 0);
	return status;
}

static void
grant_passes_the_limit_and_lifts_it_by_what_was_kept(int *failed) {
	struct snlua *l = instance_create();
	lua_State *L = l->L;
	lua_gc(L, LUA_GCCOLLECT);
	snlua_mem_set_limit(&l->mem, l->mem.bytes + 1024);
	size_t limit = l->mem.limit_bytes;
	TT_CHECK(try_keep(L, 16 * 1024) == LUA_ERRMEM); // plain: refused
	TT_CHECK(l->mem.limit_bytes == limit);
	TT_CHECK(try_keep_granted(L, 16 * 1024) == LUA_OK);
	TT_CHECK(l->mem.grants == 0);
	TT_CHECK(l->mem.limit_bytes >= limit + 16 * 1024);
	TT_CHECK(l->mem.limit_bytes - limit == l->mem.lifted_bytes);
	TT_CHECK(try_keep(L, 256) == LUA_OK); // the room it had is still there
	/* Never more than SNLUA_GRANT_BYTES in all (each load also needs a buffer as big). */
	for (int i = 0; i < 3; i++)
		TT_CHECK(try_keep_granted(L, 50 * 1024) == LUA_OK);
	TT_CHECK(l->mem.lifted_bytes == SNLUA_GRANT_BYTES);
	TT_CHECK(l->mem.limit_bytes == limit + SNLUA_GRANT_BYTES);
	TT_CHECK(try_keep(L, 64 * 1024) == LUA_ERRMEM);
	/* A load bigger than the grant fails like any allocation, and ends the grant. */
	TT_CHECK(try_keep_granted(L, 2 * SNLUA_GRANT_BYTES) == LUA_ERRMEM);
	TT_CHECK(l->mem.grants == 0);
	instance_release(l);
}

static void
no_lift_without_a_limit(int *failed) {
	struct snlua *l = instance_create();
	TT_CHECK(try_keep_granted(l->L, 16 * 1024) == LUA_OK);
	TT_CHECK(l->mem.limit_bytes == 0 && l->mem.lifted_bytes == 0);
	instance_release(l);
}

/* Runs the chunk at stack index 1 (removing it); true when it returns true. */
static bool
run_first(lua_State *L) {
	lua_pushvalue(L, 1);
	lua_remove(L, 1);
	if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
		fprintf(stderr, "lua: %s\n", lua_tostring(L, -1));
		lua_pop(L, 1);
		return false;
	}
	bool ok = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return ok;
}

static void
lazy_libraries_fill_at_the_limit(int *failed) {
	struct snlua *l = instance_create();
	lua_State *L = l->L;
	snlua_lazylib_open(L);
	static const char *const chunks[] = {
	    "return math.floor(2.5) == 2 and os.time() > 0 and utf8.len('ab') == 2"
	    " and io.type(1) == nil and debug.gethook() == nil",
	    "return getmetatable(math) == nil and rawget(math, 'pi') ~= nil",
	    "return package.loaded.io == io and require('os') == os",
	};
	for (int i = 0; i < 3; i++) // compiled before the limit: only the libraries load at it
		TT_CHECK(luaL_loadstring(L, chunks[i]) == LUA_OK);
	lua_gc(L, LUA_GCCOLLECT);
	snlua_mem_set_limit(&l->mem, l->mem.bytes + 512);
	TT_CHECK(run_first(L));
	TT_CHECK(run_first(L));
	TT_CHECK(run_first(L));
	TT_CHECK(l->mem.lifted_bytes > 0);
	instance_release(l);
}

int
main(void) {
	TT_RUN(pool_packs_objects_in_8_byte_classes);
	TT_RUN(grant_passes_the_limit_and_lifts_it_by_what_was_kept);
	TT_RUN(no_lift_without_a_limit);
	TT_RUN(lazy_libraries_fill_at_the_limit);
	return tt_summary();
}
