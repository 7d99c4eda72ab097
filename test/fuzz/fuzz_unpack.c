/*
 * Fuzz target "unpack": skynet.unpack (lualib-src/lua-seri.c) on arbitrary
 * bytes, given as (pointer, size) so that ASan sees any read past the end.
 *
 * Properties, for every input:
 *   - unpack returns values or raises "Invalid serialize stream ...", no
 *     other error;
 *   - whatever unpacks packs again: pack and packstring both succeed and
 *     give the same bytes, and unpacking those bytes gives values equal to
 *     the first ones (same types, integer/float subtypes, float bits,
 *     strings, light userdata, and table contents; tables used as keys are
 *     only counted, since they cannot be looked up across two unpacks).
 *
 * A fresh lua_State per input keeps runs independent of each other and lets
 * LeakSanitizer attribute a leak to the input that caused it.
 */
#include "../../lualib-src/lua-seri.c"

#include "fuzz.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static bool same_value(lua_State *L, int a, int b);

/* Entries of the table at idx: all of them, and those whose key is a table. */
static void
count_entries(lua_State *L, int idx, size_t *all, size_t *table_keys) {
	*all = 0;
	*table_keys = 0;
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		(*all)++;
		if (lua_type(L, -2) == LUA_TTABLE)
			(*table_keys)++;
		lua_pop(L, 1);
	}
}

static bool
same_table(lua_State *L, int a, int b) {
	luaL_checkstack(L, 4, NULL);
	size_t na, ta, nb, tb;
	count_entries(L, a, &na, &ta);
	count_entries(L, b, &nb, &tb);
	if (na != nb || ta != tb)
		return false;
	lua_pushnil(L);
	while (lua_next(L, a) != 0) {
		if (lua_type(L, -2) != LUA_TTABLE) {
			lua_pushvalue(L, -2);
			lua_rawget(L, b);
			bool same = same_value(L, lua_gettop(L) - 1, lua_gettop(L));
			lua_pop(L, 1);
			if (!same) {
				lua_pop(L, 2);
				return false;
			}
		}
		lua_pop(L, 1);
	}
	return true;
}

/* Equality of the values at absolute indices a and b, as described at the top. */
static bool
same_value(lua_State *L, int a, int b) {
	int type = lua_type(L, a);
	if (type != lua_type(L, b))
		return false;
	switch (type) {
	case LUA_TNIL:
		return true;
	case LUA_TBOOLEAN:
		return lua_toboolean(L, a) == lua_toboolean(L, b);
	case LUA_TNUMBER: {
		if (lua_isinteger(L, a) != lua_isinteger(L, b))
			return false;
		if (lua_isinteger(L, a))
			return lua_tointeger(L, a) == lua_tointeger(L, b);
		lua_Number x = lua_tonumber(L, a), y = lua_tonumber(L, b);
		return memcmp(&x, &y, sizeof(x)) == 0;
	}
	case LUA_TSTRING: {
		size_t la, lb;
		const char *sa = lua_tolstring(L, a, &la);
		const char *sb = lua_tolstring(L, b, &lb);
		return la == lb && memcmp(sa, sb, la) == 0;
	}
	case LUA_TLIGHTUSERDATA:
		return lua_touserdata(L, a) == lua_touserdata(L, b);
	case LUA_TTABLE:
		return same_table(L, a, b);
	default:
		return false; // unpack makes no other type
	}
}

/* Call f with the n values at 1..n as arguments; its results go on top. */
static int
call_with_values(lua_State *L, lua_CFunction f, int n, int nresults) {
	luaL_checkstack(L, n + 2, NULL);
	lua_pushcfunction(L, f);
	for (int i = 1; i <= n; i++)
		lua_pushvalue(L, i);
	return lua_pcall(L, n, nresults, 0);
}

static bool
is_stream_error(lua_State *L) {
	const char *msg = lua_tostring(L, -1);
	return msg != NULL && strncmp(msg, "Invalid serialize stream", 24) == 0;
}

/* The values at 1..n unpacked without error: check they pack and come back equal. */
static void
check_round_trip(lua_State *L, int n) {
	FUZZ_CHECK(call_with_values(L, luaseri_pack, n, 2) == LUA_OK);
	void *buf = lua_touserdata(L, -2);
	size_t sz = (size_t)lua_tointeger(L, -1);
	lua_pop(L, 2);
	FUZZ_CHECK(call_with_values(L, luaseri_packstring, n, 1) == LUA_OK);
	size_t len;
	const char *s = lua_tolstring(L, -1, &len);
	FUZZ_CHECK(len == sz && memcmp(s, buf, sz) == 0);
	skynet_free(buf);

	int str = lua_gettop(L); // n + 1
	lua_pushcfunction(L, luaseri_unpack);
	lua_pushvalue(L, str);
	FUZZ_CHECK(lua_pcall(L, 1, LUA_MULTRET, 0) == LUA_OK);
	FUZZ_CHECK(lua_gettop(L) - str == n);
	for (int i = 1; i <= n; i++)
		FUZZ_CHECK(same_value(L, i, str + i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	lua_State *L = fuzz_lua_open();
	lua_pushcfunction(L, luaseri_unpack);
	lua_pushlightuserdata(L, (void *)data);
	lua_pushinteger(L, (lua_Integer)size);
	if (lua_pcall(L, 2, LUA_MULTRET, 0) == LUA_OK)
		check_round_trip(L, lua_gettop(L));
	else
		FUZZ_CHECK(is_stream_error(L));
	lua_close(L);
	return 0;
}
