#ifndef SKYNET_LUA_SHARESTORE_H
#define SKYNET_LUA_SHARESTORE_H

/*
 * The shared immutable store behind skynet.sharedata.core and
 * skynet.sharetable.core (design comment in lua-sharestore.c).
 */

#include <lua.h>

struct sstore;

/* Which values a build accepts, and with which error texts. */
enum sstore_mode {
	/* sharedata: integer and string keys; number, string, boolean, table values. */
	SSTORE_DATA = 0,
	/*
	 * sharetable: any key or value except nil, userdata and threads; tables
	 * without metatables, Lua functions without upvalues, light C functions.
	 */
	SSTORE_TABLE = 1,
};

/*
 * Builds a version from the table at index idx of L. Raises a Lua error on
 * a value the mode rejects; nothing leaks then. Returns a version with one
 * reference, owned by the caller. Runs in the caller's thread only.
 */
struct sstore *sstore_build(lua_State *L, int idx, enum sstore_mode mode);

/* Drops one reference; the last one frees the version. Thread-safe. */
void sstore_release(struct sstore *s);

/*
 * Pushes a new reference userdata: the owner of one reference, dropped by its
 * __gc or by close. It takes over the caller's reference to s (which may be
 * NULL: then store the version through the returned slot later, so that a
 * version built after the push is owned at once).
 */
struct sstore **sstore_pushref(lua_State *L, struct sstore *s);

/* Pushes the handle (a light userdata) naming s; no reference is taken. */
void sstore_pushhandle(lua_State *L, const struct sstore *s);

/*
 * Puts the functions every core shares (open, close, handle, index, len,
 * next, copy, funcbytes, stat, build; see lua-sharestore.c) into the table
 * on top of L.
 */
void sstore_register(lua_State *L);

#endif
