/*
 * snlua's standard libraries, some opened on first use.
 *
 * Most services never touch io, os, utf8, math or debug, yet luaL_openlibs
 * builds every one of them in every state (their tables, function names
 * and, for math, the random state). Here each of those five starts as an
 * empty table, set as the global and as package.loaded[name] just like the
 * real one, whose metatable fills it on the first read, write or pairs():
 * the library is opened (its luaopen_ function, under the memory grant of
 * alloc.c, so this works for a service at its skynet.memlimit), every field
 * of the library table is copied into the stub, and the metatable is
 * removed. From then on the stub is the library; the functions are the
 * very ones luaL_openlibs would have made. Before the first use, rawget,
 * next and getmetatable see the empty stub: only code that inspects the
 * library table without reading a field through it can tell.
 *
 * Data: the registry table at &LAZY_KEY maps each stub still empty to its
 * opener (a light C function); the one metatable (registry &META_KEY) is
 * shared by the stubs. Invariant: a stub has the metatable exactly while it
 * is in the map. Locking: none (the thread running the service only).
 */
#include "lazylib.h"
#include "alloc.h"

#include <lauxlib.h>
#include <lualib.h>

#include <stdint.h>

/* Registry keys: their addresses are unique per process. */
static const char LAZY_KEY = 0;
static const char META_KEY = 0;

/* fill_body(stub, opener): open the library, copy it into the stub, unmark it. */
static int
fill_body(lua_State *L) {
	lua_CFunction open = (lua_CFunction)(uintptr_t)lua_touserdata(L, 2);
	lua_settop(L, 1);
	lua_pushcfunction(L, open);
	lua_call(L, 0, 1);
	lua_pushnil(L);
	while (lua_next(L, 2) != 0) {
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_rawset(L, 1);
	}
	lua_rawgetp(L, LUA_REGISTRYINDEX, &LAZY_KEY);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	lua_rawset(L, -3);
	lua_pushnil(L);
	lua_setmetatable(L, 1);
	return 0;
}

/* Fill the stub at index idx if it is still empty. */
static void
fill(lua_State *L, int idx) {
	idx = lua_absindex(L, idx);
	lua_rawgetp(L, LUA_REGISTRYINDEX, &LAZY_KEY);
	lua_pushvalue(L, idx);
	int type = lua_rawget(L, -2);
	lua_remove(L, -2);
	if (type != LUA_TLIGHTUSERDATA) {
		lua_pop(L, 1); // filled already (or not a stub)
		return;
	}
	/* All of it under the grant: the stub's own table grows as it fills. */
	lua_pushcfunction(L, fill_body);
	lua_insert(L, -2);
	lua_pushvalue(L, idx);
	lua_insert(L, -2);
	snlua_mem_call_granted(L, 2, 0);
}

static int
stub_index(lua_State *L) {
	fill(L, 1);
	lua_settop(L, 2);
	lua_gettable(L, 1);
	return 1;
}

static int
stub_newindex(lua_State *L) {
	fill(L, 1);
	lua_settop(L, 3);
	lua_settable(L, 1);
	return 0;
}

/* The iterator pairs() returns for a plain table, as the base library's next. */
static int
stub_next(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 2);
	if (lua_next(L, 1))
		return 2;
	lua_pushnil(L);
	return 1;
}

static int
stub_pairs(lua_State *L) {
	fill(L, 1);
	lua_pushcfunction(L, stub_next);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	return 3;
}

static void
add_stub(lua_State *L, const char *name, lua_CFunction open) {
	lua_newtable(L);
	lua_rawgetp(L, LUA_REGISTRYINDEX, &META_KEY);
	lua_setmetatable(L, -2);
	lua_rawgetp(L, LUA_REGISTRYINDEX, &LAZY_KEY);
	lua_pushvalue(L, -2);
	lua_pushlightuserdata(L, (void *)(uintptr_t)open);
	lua_rawset(L, -3);
	lua_pop(L, 1);
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_pushvalue(L, -2);
	lua_setfield(L, -2, name);
	lua_pop(L, 1);
	lua_setglobal(L, name);
}

void
snlua_lazylib_open(lua_State *L) {
	static const luaL_Reg eager[] = {
	    {LUA_GNAME, luaopen_base},          {LUA_LOADLIBNAME, luaopen_package},
	    {LUA_COLIBNAME, luaopen_coroutine}, {LUA_TABLIBNAME, luaopen_table},
	    {LUA_STRLIBNAME, luaopen_string},   {NULL, NULL},
	};
	static const luaL_Reg lazy[] = {
	    {LUA_IOLIBNAME, luaopen_io},     {LUA_OSLIBNAME, luaopen_os},
	    {LUA_UTF8LIBNAME, luaopen_utf8}, {LUA_MATHLIBNAME, luaopen_math},
	    {LUA_DBLIBNAME, luaopen_debug},  {NULL, NULL},
	};
	for (const luaL_Reg *lib = eager; lib->func; lib++) {
		luaL_requiref(L, lib->name, lib->func, 1);
		lua_pop(L, 1);
	}
	lua_createtable(L, 0, 3);
	lua_pushcfunction(L, stub_index);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, stub_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushcfunction(L, stub_pairs);
	lua_setfield(L, -2, "__pairs");
	lua_rawsetp(L, LUA_REGISTRYINDEX, &META_KEY);
	lua_createtable(L, 0, 5);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &LAZY_KEY);
	for (const luaL_Reg *lib = lazy; lib->func; lib++)
		add_stub(L, lib->name, lib->func);
}
