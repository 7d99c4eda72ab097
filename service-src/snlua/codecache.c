/*
 * snlua's code cache.
 *
 * Code cache. Each Lua file is compiled once per process: the first load
 * dumps the chunk (with debug info, so tracebacks keep file and line) into a
 * process-wide table keyed by path; later loads undump that bytecode. The
 * table is guarded by CACHE.lock; entries are refcounted under that lock so
 * clear() can drop them while another state is still undumping one. Files
 * that env codecache_strip names are cached slim (without local and upvalue
 * names, see slim.c) when the rewriter accepts their dump; otherwise, and
 * for every other file, the dump is cached as Lua wrote it.
 *
 * Data: CACHE, a chained hash table (FNV-1a of the path; the bucket count is
 * a power of two, doubled when the entries reach it). Invariants: an entry
 * is in the table at most once per path; its refs count the table's
 * reference (while it is in the table) and one per reader; it is freed by
 * whoever drops the last one, outside the lock. Locking: CACHE.lock, a
 * mutex (growing the table rehashes every entry under it), covers the table
 * and every entry's refs and next; undumping runs outside it, on a reference.
 * Each state also keeps a mode (ON, EXIST, OFF) in its registry; clear()
 * also empties the module search cache (modcache.c). Units:
 * bytes.
 */
#include "codecache.h"
#include "modcache.h"
#include "slim.h"

#include "skynet.h"

#include <lauxlib.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MIN_SLOTS  64
#define CACHE_MODE_ON    SNLUA_CACHE_ON
#define CACHE_MODE_EXIST SNLUA_CACHE_EXIST
#define CACHE_MODE_OFF   SNLUA_CACHE_OFF

struct cache_entry {
	struct cache_entry *next; // owned: bucket chain
	int refs;                 // under CACHE.lock: 1 for the table, 1 per reader
	uint32_t hash;
	size_t code_bytes;
	char *path; // owned
	char *code; // owned: lua_dump output
};

struct code_cache {
	pthread_mutex_t lock;       // covers every field below and the entries
	struct cache_entry **slots; // owned; slot_count buckets
	size_t slot_count;          // power of two, 0 before the first insert
	size_t entry_count;
};

static struct code_cache CACHE = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Registry key: its address is unique per process. */
static const char CACHE_MODE_KEY = 0;

static void
mutex_lock(pthread_mutex_t *m) {
	if (pthread_mutex_lock(m) != 0)
		abort();
}

static void
mutex_unlock(pthread_mutex_t *m) {
	if (pthread_mutex_unlock(m) != 0)
		abort();
}

static uint32_t
path_hash(const char *path) {
	uint32_t h = 2166136261u; // FNV-1a
	for (const unsigned char *s = (const unsigned char *)path; *s; s++)
		h = (h ^ *s) * 16777619u;
	return h;
}

/* Caller holds CACHE.lock. */
static struct cache_entry *
cache_find(const char *path, uint32_t hash) {
	if (CACHE.slot_count == 0)
		return NULL;
	struct cache_entry *e = CACHE.slots[hash & (CACHE.slot_count - 1)];
	while (e != NULL && (e->hash != hash || strcmp(e->path, path) != 0))
		e = e->next;
	return e;
}

static void
cache_entry_release(struct cache_entry *e) {
	skynet_free(e->path);
	skynet_free(e->code);
	skynet_free(e);
}

/* Caller holds CACHE.lock. Doubles the bucket array when it is full. */
static void
cache_grow(void) {
	if (CACHE.entry_count < CACHE.slot_count)
		return;
	size_t count = CACHE.slot_count ? CACHE.slot_count * 2 : CACHE_MIN_SLOTS;
	struct cache_entry **slots = skynet_calloc(count, sizeof(*slots));
	for (size_t i = 0; i < CACHE.slot_count; i++) {
		struct cache_entry *e = CACHE.slots[i];
		while (e != NULL) {
			struct cache_entry *next = e->next;
			e->next = slots[e->hash & (count - 1)];
			slots[e->hash & (count - 1)] = e;
			e = next;
		}
	}
	skynet_free(CACHE.slots);
	CACHE.slots = slots;
	CACHE.slot_count = count;
}

/* The entry for path with a reference for the caller, or NULL. */
static struct cache_entry *
cache_grab(const char *path) {
	uint32_t hash = path_hash(path);
	mutex_lock(&CACHE.lock);
	struct cache_entry *e = cache_find(path, hash);
	if (e != NULL)
		e->refs++;
	mutex_unlock(&CACHE.lock);
	return e;
}

static void
cache_drop(struct cache_entry *e) {
	mutex_lock(&CACHE.lock);
	bool last = --e->refs == 0;
	mutex_unlock(&CACHE.lock);
	if (last)
		cache_entry_release(e);
}

/* Takes ownership of code. Keeps an entry that another state added first. */
static void
cache_insert(const char *path, char *code, size_t code_bytes) {
	struct cache_entry *e = skynet_malloc(sizeof(*e));
	e->refs = 1;
	e->hash = path_hash(path);
	e->code_bytes = code_bytes;
	e->path = skynet_strdup(path);
	e->code = code;
	mutex_lock(&CACHE.lock);
	if (cache_find(path, e->hash) != NULL) {
		mutex_unlock(&CACHE.lock);
		cache_entry_release(e);
		return;
	}
	cache_grow();
	struct cache_entry **slot = &CACHE.slots[e->hash & (CACHE.slot_count - 1)];
	e->next = *slot;
	*slot = e;
	CACHE.entry_count++;
	mutex_unlock(&CACHE.lock);
}

/* Drop every entry; states that are undumping one keep it until they finish. */
static void
cache_clear(void) {
	mutex_lock(&CACHE.lock);
	struct cache_entry *dead = NULL;
	for (size_t i = 0; i < CACHE.slot_count; i++) {
		struct cache_entry *e = CACHE.slots[i];
		while (e != NULL) {
			struct cache_entry *next = e->next;
			if (--e->refs == 0) {
				e->next = dead;
				dead = e;
			}
			e = next;
		}
		CACHE.slots[i] = NULL;
	}
	CACHE.entry_count = 0;
	mutex_unlock(&CACHE.lock);
	while (dead != NULL) {
		struct cache_entry *next = dead->next;
		cache_entry_release(dead);
		dead = next;
	}
}

static const char *
entry_reader(lua_State *L, void *ud, size_t *size) {
	struct cache_entry **pe = ud;
	if (*pe == NULL) {
		*size = 0;
		return NULL;
	}
	*size = (*pe)->code_bytes;
	const char *code = (*pe)->code;
	*pe = NULL;
	return code;
}

int
snlua_codecache_mode(lua_State *L) {
	int mode = CACHE_MODE_ON;
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &CACHE_MODE_KEY) == LUA_TNUMBER)
		mode = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
	return mode;
}

/* True when env codecache_strip names a fragment of path. */
static bool
want_slim(lua_State *L, const char *path) {
	lua_getfield(L, LUA_REGISTRYINDEX, "skynet_context");
	struct skynet_context *ctx = lua_touserdata(L, -1);
	lua_pop(L, 1);
	const char *list = ctx ? skynet_command(ctx, "GETENV", "codecache_strip") : NULL;
	if (list == NULL)
		list = "lualib/";
	while (*list) {
		size_t len = strcspn(list, ";");
		if (len > 0 && len < 256) {
			char frag[256];
			memcpy(frag, list, len);
			frag[len] = '\0';
			if (strstr(path, frag))
				return true;
		}
		list += len;
		if (*list == ';')
			list++;
	}
	return false;
}

/* Cache the dump of the chunk on top of L, slimmed when configured and sound. */
static void
cache_chunk(lua_State *L, const char *path) {
	struct snlua_dump b = {NULL, 0, 0};
	if (lua_dump(L, snlua_dump_write, &b, 0) != 0 || b.len == 0) {
		skynet_free(b.data);
		return;
	}
	if (want_slim(L, path))
		snlua_slim_apply(L, path, &b); // keeps b as it is when the rewrite is refused
	cache_insert(path, b.data, b.len);
}

int
snlua_codecache_load(lua_State *L, const char *path, const char *mode) {
	int cmode = snlua_codecache_mode(L);
	if (cmode == CACHE_MODE_OFF || (mode != NULL && strchr(mode, 'b') == NULL))
		return luaL_loadfilex(L, path, mode);
	struct cache_entry *e = cache_grab(path);
	if (e != NULL) {
		struct cache_entry *reading = e;
		lua_pushfstring(L, "@%s", path);
		int status = lua_load(L, entry_reader, &reading, lua_tostring(L, -1), "b");
		lua_remove(L, -2);
		cache_drop(e);
		return status;
	}
	int status = luaL_loadfilex(L, path, mode);
	if (status != LUA_OK || cmode == CACHE_MODE_EXIST)
		return status;
	cache_chunk(L, path);
	return LUA_OK;
}

/* codecache.loadfile(path [, mode [, env]]): like loadfile, through the cache. */
static int
cache_loadfile(lua_State *L) {
	const char *path = luaL_checkstring(L, 1);
	const char *mode = luaL_optstring(L, 2, NULL);
	bool has_env = !lua_isnone(L, 3);
	if (snlua_codecache_load(L, path, mode) != LUA_OK) {
		luaL_pushfail(L);
		lua_insert(L, -2);
		return 2;
	}
	if (has_env) {
		lua_pushvalue(L, 3);
		if (lua_setupvalue(L, -2, 1) == NULL)
			lua_pop(L, 1);
	}
	return 1;
}

static int
cache_clear_lua(lua_State *L) {
	cache_clear();
	snlua_modcache_clear();
	return 0;
}

/* codecache.mode([m]): the previous mode; m is "ON", "EXIST" or "OFF" (this state only). */
static int
cache_mode_lua(lua_State *L) {
	static const char *const names[] = {"ON", "EXIST", "OFF", NULL};
	lua_pushstring(L, names[snlua_codecache_mode(L)]);
	if (!lua_isnoneornil(L, 1)) {
		int mode = luaL_checkoption(L, 1, NULL, names);
		lua_pushinteger(L, mode);
		lua_rawsetp(L, LUA_REGISTRYINDEX, &CACHE_MODE_KEY);
	}
	return 1;
}

int
snlua_codecache_open(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"loadfile", cache_loadfile},
	    {"clear", cache_clear_lua},
	    {"mode", cache_mode_lua},
	    {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}

/* package.searchers[2] replacement: finds name along package.path, loads through the cache. */
static int
search_lua_cached(lua_State *L) {
	const char *name = luaL_checkstring(L, 1);
	lua_getfield(L, lua_upvalueindex(1), "searchpath");
	lua_pushvalue(L, 1);
	lua_getfield(L, lua_upvalueindex(1), "path");
	if (!lua_isstring(L, -1))
		return luaL_error(L, "'package.path' must be a string");
	lua_call(L, 2, 2);
	if (lua_isnil(L, -2))
		return 1; // the "no file ..." list
	lua_pop(L, 1);
	return snlua_codecache_module(L, name, lua_tostring(L, -1));
}

int
snlua_codecache_module(lua_State *L, const char *name, const char *path) {
	lua_pushstring(L, path);
	path = lua_tostring(L, -1);
	if (snlua_codecache_load(L, path, NULL) != LUA_OK)
		return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, path,
		                  lua_tostring(L, -1));
	lua_insert(L, -2); // loader, path
	return 2;
}

void
snlua_codecache_install(lua_State *L) {
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "searchers");
	lua_pushvalue(L, -2);
	lua_pushcclosure(L, search_lua_cached, 1);
	lua_rawseti(L, -2, 2);
	lua_pop(L, 2);
}
