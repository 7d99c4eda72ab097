#ifndef SKYNET_LUA_SERI_H
#define SKYNET_LUA_SERI_H

/*
 * skynet.pack / skynet.unpack: the value serialization, byte for byte skynet's.
 * These are lua_CFunctions; the skynet.core binding (lua-skynet.c) registers
 * them under the names pack, packstring and unpack. Each runs on the Lua
 * state that calls it and touches no shared data, so any number of states may
 * use them at once.
 */

#include <lua.h>

/*
 * pack(...): encode every argument, in order. Returns a lightuserdata
 * pointing at a skynet_malloc buffer and the buffer's size in bytes (an
 * integer, possibly 0). The caller owns the buffer and frees it with
 * skynet_free (or passes it on to skynet_send, which takes it).
 * Raises "Unsupport type <typename> to serialize" for functions, threads and
 * full userdata, "serialize can't pack too depth table" when a value sits
 * more than 32 tables deep (this also stops cycles), and an error when the
 * result would not fit a C int. Errors raised by a __pairs metamethod
 * propagate. No memory leaks on any error path.
 */
int luaseri_pack(lua_State *L);

/*
 * Bytes pack leaves to spare past the encoding it returns, on this thread
 * (0 but while the kernel resumes a traced coroutine: the room of the
 * trace trailer its sends append in place, skynet_trace_attach). The
 * returned size is the encoding's alone.
 */
extern __thread size_t luaseri_room
    __attribute__((visibility("hidden"), tls_model("initial-exec")));

/*
 * The bytes the allocation that pack returned last on this thread holds:
 * its encoding and the room it left (what it asked the allocator for). Set
 * as pack returns, after any metamethod it ran, so right after a call of
 * luaseri_pack itself it describes the buffer that call returned.
 */
extern __thread size_t luaseri_packed
    __attribute__((visibility("hidden"), tls_model("initial-exec")));

/* packstring(...): like pack, but returns the encoding as one Lua string. */
int luaseri_packstring(lua_State *L);

/*
 * unpack(msg, sz) or unpack(str) or unpack(nil): decode every value of the
 * buffer (borrowed, never freed) and return them all. A nil or zero-length
 * input returns nothing. A NULL pointer with a non-zero size raises
 * "deserialize null pointer", a negative size is an argument error, and a
 * truncated or malformed buffer (or one nesting deeper than pack allows) raises
 * "Invalid serialize stream <remaining bytes> (line:<n>)". Every read is
 * bounds-checked: no input makes it read outside [msg, msg + sz).
 */
int luaseri_unpack(lua_State *L);

#endif
