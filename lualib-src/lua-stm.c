/*
 * skynet.stm: a single-writer, many-reader box holding the latest version of
 * a message buffer, shared by the services of one process.
 *
 * API:
 *   stm.new(msg, sz) | stm.new(str) -> writer
 *       A new box whose first version is the message. A light userdata msg
 *       (a skynet_malloc'd buffer such as skynet.pack returns) is taken
 *       over: the box frees it. A string is copied.
 *   writer(msg, sz) | writer(str)
 *       Publishes a new version (same ownership rules). Waits only for the
 *       O(1) lookups of readers in progress, never for a reader's f; the
 *       old version is freed once no reader holds it.
 *   stm.copy(writer) -> ptr
 *       A light userdata to hand to another service (in a message). It
 *       carries one reference on the box, which stm.newcopy passes to the
 *       reader it makes. Turn every pointer into exactly one reader: a
 *       pointer that is dropped leaks the box header (a small fixed size;
 *       the versions are still freed when the writer goes); using one twice
 *       frees the box early.
 *   stm.newcopy(ptr) -> reader
 *   reader(f [, ud]) -> true, f(msg, sz, ud)... | false
 *       When a version newer than the one this reader last saw exists,
 *       calls f with it (msg is a light userdata owned by the box, valid
 *       while the reader holds the version, i.e. at least during f) and
 *       returns true and f's results; else returns false. The first call
 *       sees the current version. If f raises, the error propagates and
 *       the version counts as seen. Once the writer is collected, every
 *       call returns false; the reader keeps the last version it saw.
 *
 * Data structure and ownership.
 *   struct stm_copy: one version. Owns msg (skynet_malloc'd, freed with the
 *       copy). ref counts its holders: the box while it is the current
 *       version (1), and each reader whose last seen version it is.
 *   struct stm_object: the box. ref counts the writer (1 until collected),
 *       every copy pointer not yet turned into a reader, and every reader.
 *       The last release destroys the lock and frees it. copy is the
 *       current version (a reference of its own), NULL once the writer is
 *       gone.
 *   Writer userdata: one reference on its box. Reader userdata: one
 *   reference on its box and one on lastcopy (NULL before the first read).
 *   Both release them in __gc, so a service that exits gives them back.
 *
 * Locking. obj->lock (rwlock.h) covers the swap of obj->copy against a
 * reader that loads it and takes a reference: the writer replaces the
 * pointer under the write lock and drops the box's reference on the old
 * version after unlocking; a reader takes its reference under the read
 * lock, so it never touches a version whose count may already be zero.
 * Readers do not exclude each other. A reader first compares obj->copy with
 * its last version without the lock (an atomic load): when they match there
 * is nothing new, and since the reader holds that version it cannot have
 * been freed and its address reused. Counts are ATOM_* (seq-cst), so the
 * thread that drops a count to zero sees every write made by the others.
 * Only one Lua state uses a given writer or reader userdata, so their own
 * fields need no lock.
 *
 * Stock Lua: nothing here needs a patched Lua.
 * A box found through stm.newcopy is checked by a magic number: this
 * catches light userdata of another kind or of a box already freed on a
 * best-effort basis only (the pointer is read, so it must be readable).
 */
#include "skynet.h"
#include "atomic.h"
#include "rwlock.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdint.h>
#include <string.h>

#define STM_WRITER "skynet.stm.writer"
#define STM_READER "skynet.stm.reader"
#define STM_MAGIC  0x73746d31u // "stm1"

LUAMOD_API int luaopen_skynet_stm(lua_State *L);

struct stm_copy {
	ATOM_INT ref;
	size_t sz;
	void *msg; // owned
};

struct stm_object {
	uint32_t magic;     // STM_MAGIC while the box lives
	ATOM_INT ref;       // writer + copy pointers + readers
	struct rwlock lock; // covers the replacement of copy (see the top)
	ATOM_POINTER copy;  // owned reference: struct stm_copy *, NULL after the writer
};

struct stm_writer {
	struct stm_object *obj; // owned reference, NULL once collected
};

struct stm_reader {
	struct stm_object *obj;    // owned reference, NULL once collected
	struct stm_copy *lastcopy; // owned reference, NULL before the first read
};

/* Takes ownership of msg. */
static struct stm_copy *
copy_create(void *msg, size_t sz) {
	struct stm_copy *c = skynet_malloc(sizeof(*c));
	ATOM_INIT(&c->ref, 1); // the caller's reference (becomes the box's)
	c->sz = sz;
	c->msg = msg;
	return c;
}

static void
copy_release(struct stm_copy *c) {
	if (c == NULL)
		return;
	if (ATOM_FDEC(&c->ref) == 1) {
		skynet_free(c->msg);
		skynet_free(c);
	}
}

static void
object_release(struct stm_object *obj) {
	if (ATOM_FDEC(&obj->ref) != 1)
		return;
	/* Last holder: the writer is gone, so copy is NULL already. */
	obj->magic = 0;
	rwlock_destroy(&obj->lock);
	skynet_free(obj);
}

/*
 * The message at idx (a light userdata and a size, or a string): a buffer
 * the caller now owns (the light userdata itself, or a copy of the string).
 * Raises on bad arguments before taking anything.
 */
static void *
check_message(lua_State *L, int idx, const char *fname, size_t *sz) {
	int t = lua_type(L, idx);
	if (t == LUA_TSTRING) {
		size_t len;
		const char *s = lua_tolstring(L, idx, &len);
		void *buf = skynet_malloc(len > 0 ? len : 1);
		memcpy(buf, s, len);
		*sz = len;
		return buf;
	}
	if (t != LUA_TLIGHTUSERDATA)
		luaL_error(L, "%s: bad argument #%d (string or lightuserdata expected, got %s)", fname, idx,
		           luaL_typename(L, idx));
	void *msg = lua_touserdata(L, idx);
	if (msg == NULL)
		luaL_error(L, "%s: bad argument #%d (null message)", fname, idx);
	int isnum;
	lua_Integer n = lua_tointegerx(L, idx + 1, &isnum);
	if (!isnum)
		luaL_error(L, "%s: bad argument #%d (integer size expected, got %s)", fname, idx + 1,
		           luaL_typename(L, idx + 1));
	if (n < 0 || (uint64_t)n > SIZE_MAX / 2)
		luaL_error(L, "%s: bad argument #%d (invalid size %I)", fname, idx + 1, n);
	*sz = (size_t)n;
	return msg;
}

static int
lnew(lua_State *L) {
	if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TLIGHTUSERDATA)
		return luaL_error(L, "stm.new: bad argument #1 (string or lightuserdata expected, got %s)",
		                  luaL_typename(L, 1));
	lua_settop(L, 2);
	/* The userdata first: after check_message nothing may raise. */
	struct stm_writer *w = lua_newuserdatauv(L, sizeof(*w), 0);
	w->obj = NULL;
	luaL_setmetatable(L, STM_WRITER);
	size_t sz;
	void *msg = check_message(L, 1, "stm.new", &sz);
	struct stm_object *obj = skynet_malloc(sizeof(*obj));
	obj->magic = STM_MAGIC;
	ATOM_INIT(&obj->ref, 1); // the writer's reference
	rwlock_init(&obj->lock);
	ATOM_INIT(&obj->copy, copy_create(msg, sz));
	w->obj = obj;
	return 1;
}

static struct stm_object *
check_writer(lua_State *L, int idx, const char *fname) {
	struct stm_writer *w = luaL_checkudata(L, idx, STM_WRITER);
	if (w->obj == NULL)
		luaL_error(L, "%s: the writer is released", fname);
	return w->obj;
}

static int
lwriter_update(lua_State *L) {
	struct stm_object *obj = check_writer(L, 1, "stm writer");
	size_t sz;
	void *msg = check_message(L, 2, "stm writer", &sz);
	struct stm_copy *c = copy_create(msg, sz);
	rwlock_wlock(&obj->lock);
	struct stm_copy *old = ATOM_LOAD(&obj->copy);
	ATOM_STORE(&obj->copy, c);
	rwlock_wunlock(&obj->lock);
	copy_release(old);
	return 0;
}

static int
lwriter_gc(lua_State *L) {
	struct stm_writer *w = luaL_checkudata(L, 1, STM_WRITER);
	struct stm_object *obj = w->obj;
	if (obj == NULL)
		return 0;
	w->obj = NULL;
	rwlock_wlock(&obj->lock);
	struct stm_copy *old = ATOM_LOAD(&obj->copy);
	ATOM_STORE(&obj->copy, NULL);
	rwlock_wunlock(&obj->lock);
	copy_release(old);
	object_release(obj);
	return 0;
}

static int
lcopy(lua_State *L) {
	struct stm_object *obj = check_writer(L, 1, "stm.copy");
	ATOM_FINC(&obj->ref); // handed to the reader stm.newcopy makes
	lua_pushlightuserdata(L, obj);
	return 1;
}

static int
lnewcopy(lua_State *L) {
	if (lua_type(L, 1) != LUA_TLIGHTUSERDATA)
		return luaL_error(L, "stm.newcopy: bad argument #1 (lightuserdata expected, got %s)",
		                  luaL_typename(L, 1));
	struct stm_object *obj = lua_touserdata(L, 1);
	if (obj == NULL || obj->magic != STM_MAGIC)
		return luaL_error(L, "stm.newcopy: bad argument #1 (not a pointer from stm.copy)");
	struct stm_reader *r = lua_newuserdatauv(L, sizeof(*r), 0);
	r->obj = obj; // takes over the pointer's reference
	r->lastcopy = NULL;
	luaL_setmetatable(L, STM_READER);
	return 1;
}

/* A reference on the box's current version when it differs from last, else NULL. */
static struct stm_copy *
grab_newer(struct stm_object *obj, struct stm_copy *last) {
	if (ATOM_LOAD(&obj->copy) == last)
		return NULL;
	rwlock_rlock(&obj->lock);
	struct stm_copy *c = ATOM_LOAD(&obj->copy);
	if (c == last)
		c = NULL;
	else if (c != NULL)
		ATOM_FINC(&c->ref);
	rwlock_runlock(&obj->lock);
	return c;
}

static int
lreader_read(lua_State *L) {
	struct stm_reader *r = luaL_checkudata(L, 1, STM_READER);
	if (r->obj == NULL)
		return luaL_error(L, "stm reader: the reader is released");
	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_settop(L, 3);
	struct stm_copy *c = grab_newer(r->obj, r->lastcopy);
	if (c == NULL) {
		lua_pushboolean(L, 0);
		return 1;
	}
	copy_release(r->lastcopy);
	r->lastcopy = c;
	lua_pushboolean(L, 1);
	lua_pushvalue(L, 2);
	lua_pushlightuserdata(L, c->msg);
	lua_pushinteger(L, (lua_Integer)c->sz);
	lua_pushvalue(L, 3);
	lua_call(L, 3, LUA_MULTRET);
	return lua_gettop(L) - 3;
}

static int
lreader_gc(lua_State *L) {
	struct stm_reader *r = luaL_checkudata(L, 1, STM_READER);
	if (r->obj == NULL)
		return 0;
	copy_release(r->lastcopy);
	r->lastcopy = NULL;
	object_release(r->obj);
	r->obj = NULL;
	return 0;
}

static void
new_metatable(lua_State *L, const char *name, lua_CFunction call, lua_CFunction gc) {
	luaL_newmetatable(L, name);
	lua_pushcfunction(L, call);
	lua_setfield(L, -2, "__call");
	lua_pushcfunction(L, gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
}

LUAMOD_API int
luaopen_skynet_stm(lua_State *L) {
	luaL_checkversion(L);
	static const luaL_Reg funcs[] = {
	    {"new", lnew},
	    {"copy", lcopy},
	    {"newcopy", lnewcopy},
	    {NULL, NULL},
	};
	new_metatable(L, STM_WRITER, lwriter_update, lwriter_gc);
	new_metatable(L, STM_READER, lreader_read, lreader_gc);
	luaL_newlib(L, funcs);
	return 1;
}
