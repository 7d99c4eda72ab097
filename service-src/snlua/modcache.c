/*
 * snlua's module search cache.
 *
 * For each require, Lua tries every template of package.path, then of
 * package.cpath, then the all-in-one C libraries, opening each candidate
 * file to see whether it is there. The code cache spares the parsing, but
 * every new service still paid the search: require "skynet.core" alone
 * opened five files (four of them missing) and called dlopen, about a sixth
 * of the time a service took to start. This cache remembers, once per
 * process, where each search succeeded, so later services load the module
 * without touching the file system.
 *
 * An entry is keyed by the module name together with package.path and
 * package.cpath as they were (a state with other paths searches for
 * itself). Its value is the searcher that found the module (kind 2: a Lua
 * file; 3: a C library; 4: an all-in-one C library), the file name it
 * reported and, for C, the luaopen_ function it returned. Searchers 2, 3
 * and 4 are wrapped (the wrapper knows its kind): the one that found the
 * module answers from the entry; one that comes before it answers "not
 * found" at once, as it did when the entry was made; without an entry the
 * searcher runs as before and a success is recorded. A failed search is
 * never recorded, so a module installed later is found.
 *
 * Staleness is the code cache's: a file moved or deleted after its first
 * search is still where the entry says (a Lua file loads from the cached
 * bytecode), and a new file earlier in the path does not shadow a module
 * already found. codecache.clear() forgets every entry (console
 * "clearcache"); a state in code cache mode "OFF" neither uses nor fills
 * the cache, and mode "EXIST" uses it without adding to it.
 *
 * A C library found through the cache was never opened by the state that
 * uses it, so the state will not close it: the cache keeps its own dlopen
 * reference, for the life of the process (even after clear), so the
 * function stays valid in every state that took it.
 *
 * Data: MODS, a fixed array of MOD_SLOTS hash chains (FNV-1a of the key;
 * the entries are few: one per module and path setting). Invariants: a key
 * is in the table at most once; entries never change after insertion.
 * Locking: MODS.lock, a mutex, covers the chains; a lookup copies the
 * entry's file name and function out under it (file names longer than
 * MOD_FILE_MAX are not cached), so no entry is used outside the lock and
 * clear may free them at once. No Lua call is made under the lock.
 * Units: bytes.
 */
#include "modcache.h"
#include "codecache.h"

#include "skynet.h"

#include <lauxlib.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MOD_SLOTS    64
#define MOD_FILE_MAX 1024
#define KIND_LUA     2 // package.searchers index of each searcher wrapped
#define KIND_C       3
#define KIND_CROOT   4

struct mod_entry {
	struct mod_entry *next; // owned: chain
	uint32_t hash;
	int kind;
	lua_CFunction open; // kinds 3 and 4
	size_t key_len;
	char *key;  // owned: name NUL path NUL cpath
	char *file; // owned
};

struct mod_cache {
	pthread_mutex_t lock;
	struct mod_entry *slots[MOD_SLOTS];
};

static struct mod_cache MODS = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* What a lookup copies out of an entry. */
struct mod_found {
	int kind; // 0: no entry
	lua_CFunction open;
	char file[MOD_FILE_MAX];
};

static void
mods_lock(void) {
	if (pthread_mutex_lock(&MODS.lock) != 0)
		abort();
}

static void
mods_unlock(void) {
	if (pthread_mutex_unlock(&MODS.lock) != 0)
		abort();
}

static uint32_t
key_hash(const char *key, size_t len) {
	uint32_t h = 2166136261u; // FNV-1a
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)key[i]) * 16777619u;
	return h;
}

/* Caller holds MODS.lock. */
static struct mod_entry *
mods_find(const char *key, size_t len, uint32_t hash) {
	struct mod_entry *e = MODS.slots[hash % MOD_SLOTS];
	while (e != NULL && (e->hash != hash || e->key_len != len || memcmp(e->key, key, len) != 0))
		e = e->next;
	return e;
}

static void
mods_lookup(const char *key, size_t len, struct mod_found *out) {
	uint32_t hash = key_hash(key, len);
	out->kind = 0;
	mods_lock();
	struct mod_entry *e = mods_find(key, len, hash);
	if (e != NULL) {
		out->kind = e->kind;
		out->open = e->open;
		strcpy(out->file, e->file); // shorter than MOD_FILE_MAX (mods_insert)
	}
	mods_unlock();
}

static void
entry_free(struct mod_entry *e) {
	skynet_free(e->key);
	skynet_free(e->file);
	skynet_free(e);
}

/* Keeps an entry that another state added first. */
static void
mods_insert(const char *key, size_t len, int kind, lua_CFunction open, const char *file) {
	if (strlen(file) >= MOD_FILE_MAX)
		return;
	struct mod_entry *e = skynet_malloc(sizeof(*e));
	e->hash = key_hash(key, len);
	e->kind = kind;
	e->open = open;
	e->key_len = len;
	e->key = skynet_malloc(len);
	memcpy(e->key, key, len);
	e->file = skynet_strdup(file);
	mods_lock();
	if (mods_find(key, len, e->hash) != NULL) {
		mods_unlock();
		entry_free(e);
		return;
	}
	struct mod_entry **slot = &MODS.slots[e->hash % MOD_SLOTS];
	e->next = *slot;
	*slot = e;
	mods_unlock();
}

void
snlua_modcache_clear(void) {
	mods_lock();
	struct mod_entry *dead = NULL;
	for (int i = 0; i < MOD_SLOTS; i++) {
		struct mod_entry *e = MODS.slots[i];
		while (e != NULL) {
			struct mod_entry *next = e->next;
			e->next = dead;
			dead = e;
			e = next;
		}
		MODS.slots[i] = NULL;
	}
	mods_unlock();
	while (dead != NULL) {
		struct mod_entry *next = dead->next;
		entry_free(dead);
		dead = next;
	}
}

/*
 * Push the key of the module named at index 1 ("name\0path\0cpath") and
 * return it; NULL (nothing pushed) when package.path or package.cpath is
 * not a string, which the wrapped searcher reports in its own words.
 */
static const char *
push_key(lua_State *L, size_t *len) {
	int top = lua_gettop(L);
	lua_getfield(L, lua_upvalueindex(1), "path");
	lua_getfield(L, lua_upvalueindex(1), "cpath");
	if (lua_type(L, 1) != LUA_TSTRING || lua_type(L, top + 1) != LUA_TSTRING ||
	    lua_type(L, top + 2) != LUA_TSTRING) {
		lua_settop(L, top);
		return NULL;
	}
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	const int parts[3] = {1, top + 1, top + 2};
	for (int i = 0; i < 3; i++) {
		size_t n;
		const char *s = lua_tolstring(L, parts[i], &n);
		luaL_addlstring(&b, s, n);
		luaL_addchar(&b, '\0');
	}
	luaL_pushresult(&b);
	lua_replace(L, top + 1);
	lua_settop(L, top + 1);
	return lua_tolstring(L, top + 1, len);
}

/* After a successful search by the wrapped searcher: make it permanent and record it. */
static void
record(lua_State *L, const char *key, size_t len, int kind, int loader, int file) {
	if (lua_type(L, file) != LUA_TSTRING)
		return;
	const char *path = lua_tostring(L, file);
	lua_CFunction open = NULL;
	if (kind != KIND_LUA) {
		open = lua_tocfunction(L, loader);
		if (open == NULL || lua_getupvalue(L, loader, 1) != NULL) {
			lua_settop(L, file > loader ? file : loader); // a closure: not a bare function to keep
			return;
		}
		/* The state that opened the library closes it with the state: hold it for good. */
		if (dlopen(path, RTLD_NOW | RTLD_LOCAL) == NULL)
			return;
	}
	mods_insert(key, len, kind, open, path);
}

/* Answer from a found entry (kind is this searcher's own): loader and file name. */
static int
answer(lua_State *L, int kind, const struct mod_found *f) {
	if (kind == KIND_LUA)
		return snlua_codecache_module(L, lua_tostring(L, 1), f->file);
	lua_pushcfunction(L, f->open);
	lua_pushstring(L, f->file);
	return 2;
}

/*
 * The wrapper of package.searchers[kind]. Upvalues: 1 the package table,
 * 2 the searcher wrapped, 3 its kind.
 */
static int
search_cached(lua_State *L) {
	int kind = (int)lua_tointeger(L, lua_upvalueindex(3));
	int mode = snlua_codecache_mode(L);
	size_t len = 0;
	const char *key = mode == SNLUA_CACHE_OFF ? NULL : push_key(L, &len);
	if (key != NULL) {
		struct mod_found found;
		mods_lookup(key, len, &found);
		if (found.kind == kind)
			return answer(L, kind, &found);
		if (found.kind > kind) {
			lua_pushliteral(L, ""); // not found here when the entry was made
			return 1;
		}
	}
	int base = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(2));
	lua_pushvalue(L, 1);
	lua_call(L, 1, 2);
	if (key != NULL && mode == SNLUA_CACHE_ON && lua_isfunction(L, base + 1))
		record(L, key, len, kind, base + 1, base + 2);
	return 2;
}

void
snlua_modcache_install(lua_State *L) {
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "searchers");
	for (int kind = KIND_LUA; kind <= KIND_CROOT; kind++) {
		lua_pushvalue(L, -2);
		lua_rawgeti(L, -2, kind);
		lua_pushinteger(L, kind);
		lua_pushcclosure(L, search_cached, 3);
		lua_rawseti(L, -2, kind);
	}
	lua_pop(L, 2);
}
