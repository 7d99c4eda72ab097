/*
 * snlua's bytecode rewriter: strips local and upvalue names from a Lua 5.4
 * dump (keeping line numbers), for the code cache. See slim.c for the design.
 * Pure functions on memory; any thread.
 */
#ifndef SKYNET_SNLUA_SLIM_H
#define SKYNET_SNLUA_SLIM_H

#include <lua.h>

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* A growing byte buffer; {NULL, 0, 0} is empty. */
struct snlua_dump {
	char *data; // owned
	size_t len;
	size_t cap;
};

/* A lua_Writer that appends sz bytes at p to ud (a struct snlua_dump). Returns 0. */
int snlua_dump_write(lua_State *L, const void *p, size_t sz, void *ud);

/*
 * Rewrite dump into out (empty on entry) without local and upvalue names.
 * Returns true on success. Returns false, with out left empty, when the
 * header is not exactly the one the rewriter was written for (Lua 5.4,
 * format 0, 4-byte instructions, 8-byte integers and floats, the check
 * values), or when the rest is not a well-formed function of that format.
 * Reads no byte of dump outside [data, data + len).
 */
bool snlua_slim_dump(const struct snlua_dump *dump, struct snlua_dump *out);

/*
 * The code cache's choice: replace *dump by its rewrite when the rewriter
 * accepts it and the rewrite loads in L (as chunkname); otherwise leave
 * *dump exactly as it is, so the caller keeps the full dump. Returns true
 * when it replaced *dump. Leaves L's stack as it was.
 */
bool snlua_slim_apply(lua_State *L, const char *chunkname, struct snlua_dump *dump);

#pragma GCC visibility pop

#endif
