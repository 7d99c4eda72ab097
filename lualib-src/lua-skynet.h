#ifndef SKYNET_LUA_SKYNET_H
#define SKYNET_LUA_SKYNET_H

/*
 * What skynet.core (lua-skynet.c) shares with the other parts of
 * luaclib/skynet.so that send messages (skynet.kernel): how a message
 * payload is read from the Lua stack.
 */

#include <lua.h>

#include <stddef.h>

#pragma GCC visibility push(hidden)

/* A message payload read from the Lua stack. */
struct skynet_payload {
	void *data; // borrowed from a Lua string, or donated (tag PTYPE_TAG_DONTCOPY)
	size_t sz;
	int tag; // 0 or PTYPE_TAG_DONTCOPY
};

/*
 * The payload at idx: a string (borrowed: the core copies it), a light
 * userdata with its size at idx + 1 (donated), or nil/none (empty). Raises
 * on a negative size or any other type.
 */
void skynet_payload_get(lua_State *L, int idx, struct skynet_payload *p);

#pragma GCC visibility pop

#endif
