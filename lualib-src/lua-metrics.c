/*
 * skynet.metrics: the node-wide figures the metrics service exports, read
 * straight from the core (skynet_service_stats, skynet_timer_stat).
 *
 *   services() -> array of { handle, mqlen, message, cpu (seconds), module }
 *   timers()   -> { pending, fired, late_sum (seconds),
 *                   buckets = { { le (seconds, math.huge last), count }, ... } }
 *                 (bucket counts are per bucket, not cumulative)
 */
#include "skynet.h"

#include <lauxlib.h>
#include <lua.h>
#include <math.h>

static int
lservices(lua_State *L) {
	int cap = 256;
	struct skynet_service_stat *st = NULL;
	int n;
	for (;;) {
		st = skynet_malloc(sizeof(*st) * (size_t)cap);
		n = skynet_service_stats(st, cap);
		if (n <= cap)
			break;
		skynet_free(st);
		cap = n + n / 4 + 16;
	}
	/* Lua may raise (out of memory) while building the result: keep the
	 * figures in a Lua-owned buffer, not in st. */
	struct skynet_service_stat *copy = lua_newuserdatauv(L, sizeof(*st) * (size_t)(n ? n : 1), 0);
	for (int i = 0; i < n; i++)
		copy[i] = st[i];
	skynet_free(st);
	st = copy;
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_createtable(L, 0, 5);
		lua_pushinteger(L, st[i].handle);
		lua_setfield(L, -2, "handle");
		lua_pushinteger(L, st[i].mqlen);
		lua_setfield(L, -2, "mqlen");
		lua_pushinteger(L, (lua_Integer)st[i].messages);
		lua_setfield(L, -2, "message");
		lua_pushnumber(L, (double)st[i].cpu_us / 1000000.0);
		lua_setfield(L, -2, "cpu");
		lua_pushstring(L, st[i].module);
		lua_setfield(L, -2, "module");
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int
ltimers(lua_State *L) {
	struct skynet_timer_stat t;
	skynet_timer_stat(&t);
	lua_createtable(L, 0, 4);
	lua_pushinteger(L, (lua_Integer)t.pending);
	lua_setfield(L, -2, "pending");
	lua_pushinteger(L, (lua_Integer)t.fired);
	lua_setfield(L, -2, "fired");
	lua_pushnumber(L, (double)t.late_sum_us / 1000000.0);
	lua_setfield(L, -2, "late_sum");
	lua_createtable(L, SKYNET_TIMER_LATE_BUCKETS, 0);
	for (int i = 0; i < SKYNET_TIMER_LATE_BUCKETS; i++) {
		lua_createtable(L, 2, 0);
		uint32_t le = skynet_timer_late_le_us(i);
		lua_pushnumber(L, le ? (double)le / 1000000.0 : HUGE_VAL);
		lua_rawseti(L, -2, 1);
		lua_pushinteger(L, (lua_Integer)t.late[i]);
		lua_rawseti(L, -2, 2);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "buckets");
	return 1;
}

int
luaopen_skynet_metrics(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"services", lservices},
	    {"timers", ltimers},
	    {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}
