/*
 * skynet.kernel, protocols: the table of registered protocols.
 *
 * Owns: UV_PROTO, name -> protocol and id -> protocol (the same table for
 * both keys): a protocol is the table given to skynet.register_protocol
 * (name, id, pack, unpack, dispatch, trace); skynet.dispatch sets its
 * dispatch. A name or id is registered once. Sets k->tracing when a
 * protocol asks for forced tracing (its trace field). S.protocol and
 * S.protocols let the Lua parts read the table.
 * Reads: nothing else. The built-in protocols (lua, response, error, debug)
 * are registered when the module opens; debug loads skynet.debug on its
 * first message.
 */

#include "kernel.h"

#include <lauxlib.h>

/* Is the name or the id of the protocol taken? Stack: ..., proto table at P. */
static bool
is_taken(lua_State *L, int P, int name, int id) {
	lua_pushvalue(L, name);
	bool taken = lua_rawget(L, P) != LUA_TNIL;
	lua_pop(L, 1);
	lua_pushvalue(L, id);
	taken = taken || lua_rawget(L, P) != LUA_TNIL;
	lua_pop(L, 1);
	return taken;
}

/* skynet.register_protocol(p) */
int
kernel_lregister_protocol(lua_State *L) {
	enum { ARG_P = 1, SLOT_NAME, SLOT_ID, SLOT_KERNEL, SLOT_PROTO };
	lua_settop(L, ARG_P);
	lua_getfield(L, ARG_P, "name");
	lua_getfield(L, ARG_P, "id");
	if (lua_type(L, SLOT_NAME) != LUA_TSTRING || !lua_isinteger(L, SLOT_ID) ||
	    lua_tointeger(L, SLOT_ID) < 0 || lua_tointeger(L, SLOT_ID) > 255) {
		lua_pushliteral(L, "skynet.register_protocol: bad name or id");
		return lua_error(L);
	}
	struct kernel *k = kernel_push(L);
	kernel_tab(L, SLOT_KERNEL, UV_PROTO);
	if (is_taken(L, SLOT_PROTO, SLOT_NAME, SLOT_ID)) {
		lua_pushfstring(L, "skynet.register_protocol: already registered (%s)",
		                lua_tostring(L, SLOT_NAME));
		return lua_error(L);
	}
	lua_pushvalue(L, SLOT_NAME);
	lua_pushvalue(L, ARG_P);
	lua_rawset(L, SLOT_PROTO);
	lua_pushvalue(L, SLOT_ID);
	lua_pushvalue(L, ARG_P);
	lua_rawset(L, SLOT_PROTO);
	if (lua_getfield(L, ARG_P, "trace") != LUA_TNIL)
		k->tracing = true;
	return 0;
}

/* skynet.dispatch(typename, func) -> the previous dispatch; (typename) -> it */
int
kernel_ldispatch(lua_State *L) {
	enum { ARG_NAME = 1, ARG_FUNC, SLOT_KERNEL, SLOT_PROTO, SLOT_P };
	lua_settop(L, ARG_FUNC);
	kernel_push(L);
	kernel_tab(L, SLOT_KERNEL, UV_PROTO);
	lua_pushvalue(L, ARG_NAME);
	lua_rawget(L, SLOT_PROTO);
	if (lua_toboolean(L, ARG_FUNC)) {
		if (!lua_toboolean(L, SLOT_P)) {
			lua_pushliteral(L, "skynet.dispatch: unknown protocol");
			return lua_error(L);
		}
		lua_getfield(L, SLOT_P, "dispatch");
		lua_pushvalue(L, ARG_FUNC);
		lua_setfield(L, SLOT_P, "dispatch");
		return 1;
	}
	if (!lua_toboolean(L, SLOT_P))
		return 1; // p itself (nil or false), as `p and p.dispatch`
	lua_getfield(L, SLOT_P, "dispatch");
	return 1;
}

/* S.protocol(name_or_id) -> the protocol registered under it, or nil. A
 * closure: its upvalue is the protocol table (lazy.c makes it). */
int
kernel_lprotocol(lua_State *L) {
	enum { ARG_NAME = 1 };
	lua_settop(L, ARG_NAME);
	lua_rawget(L, lua_upvalueindex(1));
	return 1;
}

/* S.protocols() -> a new table, id -> protocol, of every protocol registered. */
int
kernel_lprotocols(lua_State *L) {
	enum { SLOT_KERNEL = 1, SLOT_PROTO, SLOT_BY_ID, SLOT_KEY, SLOT_VALUE };
	lua_settop(L, 0);
	kernel_push(L);
	kernel_tab(L, SLOT_KERNEL, UV_PROTO);
	lua_newtable(L);
	lua_pushnil(L);
	while (lua_next(L, SLOT_PROTO)) {
		if (lua_type(L, SLOT_KEY) == LUA_TNUMBER) {
			lua_pushvalue(L, SLOT_KEY);
			lua_insert(L, SLOT_VALUE);
			lua_rawset(L, SLOT_BY_ID); // the key stays for lua_next
		} else {
			lua_pop(L, 1);
		}
	}
	return 1;
}

int
kernel_get_proto(lua_State *L, int K, int idx) {
	kernel_tab(L, K, UV_PROTO);
	lua_pushvalue(L, idx);
	int t = lua_rawget(L, -2);
	lua_remove(L, -2);
	if (t == LUA_TNIL || (t == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
		luaL_where(L, 1);
		lua_pushfstring(L, "%sskynet: unknown protocol (%s)", lua_tostring(L, -1),
		                luaL_tolstring(L, idx, NULL));
		return lua_error(L);
	}
	return lua_gettop(L);
}

/* ---- the built-in protocols ---- */

/* The debug protocol: loads skynet.debug on the first request, then hands over. */
static int
debug_dispatch(lua_State *L) {
	int n = lua_gettop(L);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "skynet.debug");
	lua_call(L, 1, 0);
	kernel_push(L);
	kernel_tab(L, lua_gettop(L), UV_PROTO);
	lua_getfield(L, -1, "debug");
	lua_getfield(L, -1, "dispatch");
	lua_replace(L, n + 1);
	lua_settop(L, n + 1);
	lua_insert(L, 1);
	lua_callk(L, n, LUA_MULTRET, 0, kernel_results_k);
	return lua_gettop(L);
}

static int
identity(lua_State *L) {
	return lua_gettop(L);
}

static void
register_builtin(lua_State *L, int core, const char *name, int id, lua_CFunction dispatch,
                 lua_CFunction unpack) {
	lua_pushcfunction(L, kernel_lregister_protocol);
	lua_createtable(L, 0, 5);
	lua_pushstring(L, name);
	lua_setfield(L, -2, "name");
	lua_pushinteger(L, id);
	lua_setfield(L, -2, "id");
	if (id != PTYPE_RESPONSE && id != PTYPE_ERROR) {
		lua_getfield(L, core, "pack");
		lua_setfield(L, -2, "pack");
		lua_getfield(L, core, "unpack");
		lua_setfield(L, -2, "unpack");
	}
	if (unpack != NULL) {
		lua_pushcfunction(L, unpack);
		lua_setfield(L, -2, "unpack");
	}
	if (dispatch != NULL) {
		lua_pushcfunction(L, dispatch);
		lua_setfield(L, -2, "dispatch");
	}
	lua_call(L, 1, 0);
}

void
kernel_register_builtins(lua_State *L, int core) {
	register_builtin(L, core, "lua", PTYPE_LUA, NULL, NULL);
	register_builtin(L, core, "response", PTYPE_RESPONSE, NULL, NULL);
	register_builtin(L, core, "error", PTYPE_ERROR, kernel_lerror_dispatch, identity);
	register_builtin(L, core, "debug", PTYPE_DEBUG, debug_dispatch, NULL);
}
