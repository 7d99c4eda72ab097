#ifndef SKYNET_LUA_SKYNET_H
#define SKYNET_LUA_SKYNET_H

/*
 * What skynet.core (lua-skynet.c) shares with the other parts of
 * luaclib/skynet.so that send messages (skynet.kernel): how a message
 * payload is read from the Lua stack, sent, and the result reported.
 */

#include <lua.h>

#include <stddef.h>
#include <stdint.h>

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

struct skynet_context;

/*
 * Send p from source to the address at addr_idx (an integer handle or a
 * name, already checked) with type and session; the core takes a donated
 * payload. Returns skynet_send's result: a session, or a negative error.
 */
int skynet_payload_send(lua_State *L, struct skynet_context *ctx, int addr_idx, uint32_t source,
                        int type, int session, const struct skynet_payload *p);

/* Push what skynet.core's send returns for result r: the session, false (too big) or nil. */
int skynet_push_send_result(lua_State *L, int r);

/*
 * Push msg and the traceback of co from level, as luaL_traceback does, less
 * the frames that are only "[C]: in ?" (they say nothing); when no other
 * frame is left, or msg holds a traceback already, push msg alone.
 */
void skynet_push_traceback(lua_State *L, lua_State *co, const char *msg, int level);

#pragma GCC visibility pop

#endif
