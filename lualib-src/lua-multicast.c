/*
 * skynet.multicast.core: the shared buffers behind skynet.multicast.
 *
 * Data structure. A publish packs its message once into a package,
 * struct multicast_package: {ref, size, data}, both the package and data
 * skynet_malloc'd, data owned by the package. Between
 * services a package travels in a "box": a skynet_malloc'd slot of
 * sizeof(void *) bytes holding the package pointer, passed as
 * (lightuserdata, sizeof(void *)) inside lua messages and copied, one copy
 * per subscriber, as the payload of the PTYPE_MULTICAST deliveries.
 *
 * Life of a package:
 *   pack / packremote   publisher: new package, ref 0 (unbound), in a box
 *   bind(box, n)        multicastd: ref = n (one per delivery it is about to
 *                       send), frees the box it got from the publisher
 *   delivery            each queued PTYPE_MULTICAST message owns one
 *                       reference; the core drops it when it frees the
 *                       message (after dispatch, or unread when the
 *                       subscriber is gone), so nothing leaks on exit:
 *                       loading this module installs release_delivery as
 *                       PTYPE_MULTICAST's payload release function
 *                       (skynet_payload_set_release, skynet.h), before any
 *                       package exists
 *   unpack(box, 8)      subscriber: takes its delivery's reference over
 *                       (clears the pointer in the payload), so the package
 *                       outlives the callback while the handler runs; an
 *                       unbound box is only read
 *   close(pkg)          drops one reference; the last frees data and package
 *   remote(box)         takes an unbound package apart: its buffer goes to
 *                       the caller, box and package header are freed
 *
 * Invariants: ref > 0 once bound; an unbound package (ref 0) has exactly one
 * owner, the holder of its box. Locking: none; ref is touched only through
 * ATOM_* (seq-cst), from any thread; everything else is written before the
 * package is shared and only read afterwards.
 *
 * Stock Lua: nothing here depends on skynet's patched Lua.
 */
#include "skynet.h"
#include "atomic.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdint.h>
#include <string.h>

struct multicast_package {
	ATOM_INT ref;  // references left; the last release frees data and the package
	uint32_t size; // bytes at data
	void *data;    // owned: skynet_malloc'd
};

#define BOX_SIZE ((lua_Integer)sizeof(struct multicast_package *))

/* Drop one reference on pkg; the last one frees pkg->data and pkg. Thread-safe. */
static void
package_release(struct multicast_package *pkg) {
	if (ATOM_FDEC(&pkg->ref) == 1) {
		skynet_free(pkg->data);
		skynet_free(pkg);
	}
}

/*
 * PTYPE_MULTICAST's payload release function: a delivery (a box of
 * BOX_SIZE bytes) whose pointer is still set owns one package reference
 * (NULL: a receiver took it over with unpack); then the box is freed. A
 * payload of another size was never a delivery: it is only freed.
 */
static void
release_delivery(int type, void *data, size_t sz) {
	if (data != NULL && sz == (size_t)BOX_SIZE) {
		struct multicast_package *pkg;
		memcpy(&pkg, data, sizeof(pkg));
		if (pkg != NULL)
			package_release(pkg);
	}
	skynet_free(data);
}

static uint32_t
check_size(lua_State *L, int idx, void *owned) {
	lua_Integer sz = luaL_checkinteger(L, idx);
	if (sz < 0 || sz > (lua_Integer)UINT32_MAX) {
		skynet_free(owned); // NULL when the caller keeps its buffer
		luaL_error(L, "Size should be 32bit integer");
	}
	return (uint32_t)sz;
}

/* Wrap data (taking it) into a new unbound package in a new box; push box, size. */
static int
push_box(lua_State *L, void *data, uint32_t size) {
	struct multicast_package *pkg = skynet_malloc(sizeof(*pkg));
	ATOM_INIT(&pkg->ref, 0);
	pkg->size = size;
	pkg->data = data;
	struct multicast_package **box = skynet_malloc(sizeof(*box));
	*box = pkg;
	lua_pushlightuserdata(L, box);
	lua_pushinteger(L, BOX_SIZE);
	return 2;
}

static struct multicast_package **
check_box(lua_State *L, int idx) {
	luaL_checktype(L, idx, LUA_TLIGHTUSERDATA);
	struct multicast_package **box = lua_touserdata(L, idx);
	if (box == NULL || *box == NULL)
		luaL_error(L, "Invalid multicast package (empty box)");
	return box;
}

/* pack(msg, sz) -> box, 8: takes msg (a skynet_malloc'd buffer) on every path. */
static int
lpack(lua_State *L) {
	luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
	void *msg = lua_touserdata(L, 1);
	uint32_t size = check_size(L, 2, msg);
	return push_box(L, msg, size);
}

/* packremote(msg, sz | string) -> box, 8: copies; msg stays the caller's. */
static int
lpackremote(lua_State *L) {
	const void *msg;
	uint32_t size;
	if (lua_type(L, 1) == LUA_TSTRING) {
		size_t len;
		msg = lua_tolstring(L, 1, &len);
		if (len > UINT32_MAX)
			return luaL_error(L, "Size should be 32bit integer");
		size = (uint32_t)len;
	} else {
		luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
		msg = lua_touserdata(L, 1);
		size = check_size(L, 2, NULL);
		if (msg == NULL && size > 0)
			return luaL_error(L, "Invalid multicast message (NULL)");
	}
	void *data = skynet_malloc(size > 0 ? size : 1);
	if (size > 0)
		memcpy(data, msg, size);
	return push_box(L, data, size);
}

/*
 * unpack(box, 8) -> pkg, msg, sz. For a delivery (a bound package) the
 * caller now owns the delivery's reference; an unbound box is only read.
 */
static int
lunpack(lua_State *L) {
	luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
	lua_Integer sz = luaL_checkinteger(L, 2);
	if (sz != BOX_SIZE)
		return luaL_error(L, "Invalid multicast package size %d", (int)sz);
	struct multicast_package **box = check_box(L, 1);
	struct multicast_package *pkg = *box;
	if (ATOM_LOAD(&pkg->ref) > 0)
		*box = NULL; // a delivery: the core no longer drops its reference with the message
	lua_pushlightuserdata(L, pkg);
	lua_pushlightuserdata(L, pkg->data);
	lua_pushinteger(L, (lua_Integer)pkg->size);
	return 3;
}

/* bind(box, n) -> pkg: the package gets n references; the box is freed. */
static int
lbind(lua_State *L) {
	struct multicast_package **box = check_box(L, 1);
	lua_Integer n = luaL_checkinteger(L, 2);
	if (n < 1 || n > INT32_MAX)
		return luaL_error(L, "Invalid multicast reference count %d", (int)n);
	struct multicast_package *pkg = *box;
	if (!ATOM_CAS(&pkg->ref, 0, (int)n))
		return luaL_error(L, "Can't bind a multicast package more than once");
	skynet_free(box);
	lua_pushlightuserdata(L, pkg);
	return 1;
}

/* close(pkg): drop one reference. */
static int
lclose(lua_State *L) {
	luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
	struct multicast_package *pkg = lua_touserdata(L, 1);
	if (pkg == NULL)
		return luaL_error(L, "Invalid multicast package (NULL)");
	int ref = ATOM_LOAD(&pkg->ref);
	for (;;) {
		if (ref <= 0)
			return luaL_error(L, "Invalid multicast package reference %d", ref - 1);
		if (ATOM_CAS(&pkg->ref, ref, ref - 1))
			break;
		ref = ATOM_LOAD(&pkg->ref);
	}
	if (ref == 1) {
		skynet_free(pkg->data);
		skynet_free(pkg);
	}
	return 0;
}

/* remote(box) -> msg, sz: an unbound package's buffer, now the caller's. */
static int
lremote(lua_State *L) {
	struct multicast_package **box = check_box(L, 1);
	struct multicast_package *pkg = *box;
	if (ATOM_LOAD(&pkg->ref) != 0)
		return luaL_error(L, "Can't take apart a bound multicast package");
	lua_pushlightuserdata(L, pkg->data);
	lua_pushinteger(L, (lua_Integer)pkg->size);
	skynet_free(pkg);
	skynet_free(box);
	return 2;
}

/* nextid(id): the next channel id of the same node, wrapping below bit 31. */
static int
lnextid(lua_State *L) {
	lua_Integer id = luaL_checkinteger(L, 1);
	lua_pushinteger(L, (lua_Integer)(((lua_Unsigned)id + 256) & 0x7fffffff));
	return 1;
}

LUAMOD_API int
luaopen_skynet_multicast_core(lua_State *L) {
	luaL_checkversion(L);
	luaL_Reg l[] = {
	    {"pack", lpack},   {"packremote", lpackremote}, {"unpack", lunpack}, {"bind", lbind},
	    {"close", lclose}, {"remote", lremote},         {"nextid", lnextid}, {NULL, NULL},
	};
	if (skynet_payload_set_release(PTYPE_MULTICAST, release_delivery) != 0)
		return luaL_error(L, "skynet.multicast.core: PTYPE_MULTICAST has another release function");
	luaL_newlib(L, l);
	return 1;
}
