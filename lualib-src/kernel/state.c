/*
 * skynet.kernel, state access: how the parts reach a state's kernel.
 *
 * Owns: nothing. The kernel userdata (struct kernel plus its user values, see
 * kernel.h) is made by init.c; here are the accessors every part uses, so
 * that a part names a state table by its slot (UV_*) and never builds one
 * itself. A state table is made on first use: a nil user value reads as an
 * empty table, and clearing a key of a table never made makes nothing.
 * Also the small helpers shared by the parts (errors at a level, addresses,
 * tracing). Locking: none; only the worker running the service is here.
 *
 * Session tables. UV_WAITING, UV_TIMERS and UV_WATCHING are keyed by
 * session numbers, which only grow: entries come and go all the time. A
 * Lua 5.4 table never reuses the slot of a removed key; once no slot is
 * free, the next new key makes it count its keys and resize to fit them. So
 * when the live entries plus one make a power of two, the table is full
 * again right after each resize, and every new key rebuilds it: 1024, 2048
 * or 4096 calls in flight made each call cost O(n) (15-28x slower calls,
 * measured). kernel_seti counts the entries set in each session table
 * (k->sess_set); at the end of each dispatch, kernel_sessions_tidy remakes a
 * table that has taken k->sess_room of them, as a copy with room for twice
 * its live entries. Each copy then has at least as many free slots as live
 * entries (its room), so Lua never has to rebuild it before the next tidy:
 * O(1) per entry, amortized. A table of fewer than KERNEL_SESSION_SMALL
 * entries is left as it is (its rebuilds are short). No part holds a state
 * table across the end of a dispatch, so a remade table is never stale.
 */

#include "kernel.h"

#include <lauxlib.h>

#include <stdio.h>
#include <string.h>

/* A weak metatable for the pool: parked coroutines may be collected. */
static void
set_weak(lua_State *L) {
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "kv");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
}

void
kernel_tab(lua_State *L, int K, int v) {
	if (kernel_uv(L, K, v) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	if (v == UV_POOL)
		set_weak(L);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, K, v);
}

void
kernel_seti(lua_State *L, int K, int v, lua_Integer key) {
	if (!lua_isnil(L, -1)) {
		kernel_tab(L, K, v);
		int i = v - UV_WAITING;
		if (i >= 0 && i < KERNEL_SESSION_TABLES)
			((struct kernel *)lua_touserdata(L, K))->sess_set[i]++;
	} else if (!kernel_tab_if(L, K, v)) {
		lua_pop(L, 1); // nothing to clear
		return;
	}
	lua_insert(L, -2);
	lua_rawseti(L, -2, key);
	lua_pop(L, 1);
}

void
kernel_session_remake(lua_State *L, int K, struct kernel *k, int v, int n) {
	int old = lua_gettop(L);
	lua_createtable(L, 0, 2 * n);
	lua_pushnil(L);
	while (lua_next(L, old)) {
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_rawset(L, old + 1);
	}
	lua_setiuservalue(L, K, v);
	k->sess_set[v - UV_WAITING] = 0;
	k->sess_room[v - UV_WAITING] = n;
}

void
kernel_sessions_tidy(lua_State *L, int K, struct kernel *k) {
	for (int i = 0; i < KERNEL_SESSION_TABLES; i++) {
		if (k->sess_set[i] < KERNEL_SESSION_SMALL || k->sess_set[i] < k->sess_room[i])
			continue;
		int v = UV_WAITING + i;
		int n = 0;
		if (kernel_tab_if(L, K, v)) {
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				n++;
				lua_pop(L, 1);
			}
			if (n >= KERNEL_SESSION_SMALL)
				kernel_session_remake(L, K, k, v, n);
			lua_pop(L, 1);
		}
		if (n < KERNEL_SESSION_SMALL) { // left as it is: look again after as many new entries
			k->sess_set[i] = 0;
			k->sess_room[i] = n;
		}
	}
}

void
kernel_set(lua_State *L, int K, int v, int key) {
	key = lua_absindex(L, key);
	if (!lua_isnil(L, -1)) {
		kernel_tab(L, K, v);
	} else if (!kernel_tab_if(L, K, v)) {
		lua_pop(L, 1); // nothing to clear
		return;
	}
	lua_pushvalue(L, key);
	lua_rotate(L, -3, -1); // table, key, value
	lua_rawset(L, -3);
	lua_pop(L, 1);
}

void
kernel_push_error(lua_State *L, int K) {
	if (kernel_uv(L, K, UV_ERRORS) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_createtable(L, 1, 0);
		lua_pushvalue(L, -1);
		lua_setiuservalue(L, K, UV_ERRORS);
	}
	lua_insert(L, -2);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	lua_pop(L, 1);
}

bool
kernel_is_string(lua_State *L, int idx, const char *s) {
	return lua_type(L, idx) == LUA_TSTRING && strcmp(lua_tostring(L, idx), s) == 0;
}

bool
kernel_is_zero(lua_State *L, int idx) {
	return lua_type(L, idx) == LUA_TNUMBER && lua_tonumber(L, idx) == 0;
}

int
kernel_error_at(lua_State *L, int level, const char *msg) {
	luaL_where(L, level);
	lua_pushstring(L, msg);
	lua_concat(L, 2);
	return lua_error(L);
}

const char *
kernel_push_address(lua_State *L, int idx) {
	if (lua_type(L, idx) == LUA_TNUMBER) {
		int isint = 0;
		lua_Integer h = lua_tointegerx(L, idx, &isint);
		if (!isint)
			luaL_error(L, "bad argument #2 to 'format' (number has no integer representation)");
		char buf[32];
		snprintf(buf, sizeof(buf), ":%08llx", (unsigned long long)h);
		lua_pushstring(L, buf);
		return lua_tostring(L, -1);
	}
	return luaL_tolstring(L, idx, NULL);
}

void
kernel_require(lua_State *L, const char *name) {
	lua_getglobal(L, "require");
	lua_pushstring(L, name);
	lua_call(L, 1, 1);
}

void
kernel_trace(lua_State *L, int tag, const char *text) {
	tag = lua_absindex(L, tag);
	kernel_require(L, "skynet.core");
	lua_getfield(L, -1, "trace");
	lua_pushvalue(L, tag);
	lua_pushstring(L, text);
	lua_call(L, 2, 0);
	lua_pop(L, 1);
}
