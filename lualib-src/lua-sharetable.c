/*
 * skynet.sharetable.core: the shared store (lua-sharestore.c) with
 * sharetable's value rules, built from a fresh Lua state.
 *
 * Stock Lua cannot hand one table to several lua_States, so instead of
 * marking the loaded tables shared (what skynet's patched Lua does) the
 * result is converted into an immutable version of the shared store and the
 * temporary state is closed; readers see it through proxies
 * (lualib/skynet/sharetable.lua). The version holds every table once (shared
 * subtables and cycles stay shared), strings in its C pool, Lua functions
 * without upvalues as string.dump bytecode (each reader loads them once),
 * and light C functions and light userdata as they are.
 *
 * On top of the shared functions (see sstore_register) it adds:
 *   matrix({ "file", path } | { "string", source, name }, ...) -> reference
 *       Runs the file or source in a new state with the standard libraries
 *       and the extra arguments (booleans, numbers, light userdata, light C
 *       functions, nil), and builds a version from the table it returns.
 *   build(t) -> reference: a version from a table of the caller's state.
 * Build errors: "Not a table, it's a <type>.", "Can't share metatable",
 * "Invalid function with upvalue", "Invalid type [<type>]", and load or run
 * errors as Lua reports them.
 *
 * The temporary state allocates through skynet_lalloc and lives in a
 * to-be-closed userdata of the caller's stack, so every error path closes
 * it. Everything it does runs under lua_pcall; the extra arguments are read
 * from the caller's stack inside that call (same thread, caller suspended).
 */
#include "lua-sharestore.h"

#include "skynet_malloc.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <string.h>

struct matrix_state {
	lua_State *L; // owned: the temporary state, NULL once closed
};

static int
matrix_close(lua_State *L) {
	struct matrix_state *m = lua_touserdata(L, 1);
	if (m->L) {
		lua_close(m->L);
		m->L = NULL;
	}
	return 0;
}

static void *
matrix_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
	return skynet_lalloc(ptr, osize, nsize);
}

/*
 * Checks the extra arguments from index 2 to the top. The function is named
 * 'matrix' in the message whatever name the caller reached it by.
 */
static void
check_args(lua_State *L) {
	int top = lua_gettop(L);
	for (int i = 2; i <= top; i++) {
		switch (lua_type(L, i)) {
		case LUA_TNIL:
		case LUA_TBOOLEAN:
		case LUA_TNUMBER:
		case LUA_TLIGHTUSERDATA:
			break;
		case LUA_TFUNCTION:
			if (!lua_iscfunction(L, i) || lua_getupvalue(L, i, 1) != NULL)
				luaL_error(L, "bad argument #%d to 'matrix' (Only support light C function)", i);
			break;
		default:
			luaL_error(L, "bad argument #%d to 'matrix' (Type invalid)", i);
		}
	}
}

/* Copies argument i of from (checked by check_args) onto L. */
static void
copy_arg(lua_State *L, lua_State *from, int i) {
	switch (lua_type(from, i)) {
	case LUA_TBOOLEAN:
		lua_pushboolean(L, lua_toboolean(from, i));
		break;
	case LUA_TNUMBER:
		if (lua_isinteger(from, i))
			lua_pushinteger(L, lua_tointeger(from, i));
		else
			lua_pushnumber(L, lua_tonumber(from, i));
		break;
	case LUA_TLIGHTUSERDATA:
		lua_pushlightuserdata(L, lua_touserdata(from, i));
		break;
	case LUA_TFUNCTION:
		lua_pushcfunction(L, lua_tocfunction(from, i));
		break;
	default:
		lua_pushnil(L);
	}
}

/*
 * Runs in the temporary state: arguments (caller's state, its stack top).
 * Returns the built version as a light userdata.
 */
static int
matrix_main(lua_State *L) {
	lua_State *from = lua_touserdata(L, 1);
	int nargs = (int)lua_tointeger(L, 2);
	luaL_openlibs(L);
	lua_rawgeti(from, 1, 1);
	lua_rawgeti(from, 1, 2);
	lua_rawgeti(from, 1, 3);
	const char *kind = lua_tostring(from, -3);
	size_t len;
	const char *src = lua_tolstring(from, -2, &len);
	const char *name = lua_tostring(from, -1);
	int status;
	if (strcmp(kind, "file") == 0) {
		status = luaL_loadfilex(L, src, "t");
	} else {
		lua_pushfstring(L, "=%s", name);
		status = luaL_loadbufferx(L, src, len, lua_tostring(L, -1), "t");
		lua_remove(L, -2);
	}
	lua_pop(from, 3);
	if (status != LUA_OK)
		return lua_error(L);
	luaL_checkstack(L, nargs, NULL);
	for (int i = 0; i < nargs; i++)
		copy_arg(L, from, 2 + i);
	lua_call(L, nargs, 1);
	if (lua_type(L, -1) != LUA_TTABLE)
		luaL_error(L, "Not a table, it's a %s.", luaL_typename(L, -1));
	lua_pushlightuserdata(L, sstore_build(L, -1, SSTORE_TABLE));
	return 1;
}

static int
lmatrix(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_rawgeti(L, 1, 1);
	lua_rawgeti(L, 1, 2);
	lua_rawgeti(L, 1, 3);
	const char *kind = lua_tostring(L, -3);
	if (kind == NULL || (strcmp(kind, "file") != 0 && strcmp(kind, "string") != 0))
		luaL_argerror(L, 1, "{ \"file\", path } or { \"string\", source, name } expected");
	if (lua_type(L, -2) != LUA_TSTRING)
		luaL_argerror(L, 1, "the path or source must be a string");
	if (strcmp(kind, "string") == 0 && lua_type(L, -1) != LUA_TSTRING)
		luaL_argerror(L, 1, "the name must be a string");
	lua_pop(L, 3);
	check_args(L);
	int nargs = lua_gettop(L) - 1;
	struct sstore **slot = sstore_pushref(L, NULL); // owns the result once built
	struct matrix_state *m = lua_newuserdatauv(L, sizeof(*m), 0);
	m->L = NULL;
	if (luaL_newmetatable(L, "skynet.sharetable.matrix")) {
		lua_pushcfunction(L, matrix_close);
		lua_setfield(L, -2, "__close");
		lua_pushcfunction(L, matrix_close);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	lua_toclose(L, -1);
	int mslot = lua_gettop(L);
	m->L = lua_newstate(matrix_alloc, NULL);
	if (m->L == NULL)
		return luaL_error(L, "memory error");
	lua_State *L2 = m->L;
	/* No allocation before the protected call: the fresh stack has room. */
	lua_pushcfunction(L2, matrix_main);
	lua_pushlightuserdata(L2, L);
	lua_pushinteger(L2, nargs);
	if (lua_pcall(L2, 2, 1, 0) != LUA_OK) {
		const char *msg = lua_tostring(L2, -1);
		lua_pushstring(L, msg ? msg : "(error object is not a string)");
		lua_replace(L, 1);
		lua_closeslot(L, mslot);
		lua_settop(L, 1);
		return lua_error(L);
	}
	*slot = lua_touserdata(L2, -1);
	lua_closeslot(L, mslot);
	lua_pop(L, 1);
	return 1;
}

static int
lbuild(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	struct sstore **slot = sstore_pushref(L, NULL);
	*slot = sstore_build(L, 1, SSTORE_TABLE);
	return 1;
}

LUAMOD_API int
luaopen_skynet_sharetable_core(lua_State *L) {
	luaL_checkversion(L);
	lua_newtable(L);
	sstore_register(L);
	lua_pushcfunction(L, lmatrix);
	lua_setfield(L, -2, "matrix");
	lua_pushcfunction(L, lbuild);
	lua_setfield(L, -2, "build");
	return 1;
}
