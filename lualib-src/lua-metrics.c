/*
 * skynet.metrics: the node-wide figures the metrics service exports, read
 * straight from the core (skynet_service_stats, skynet_timer_stat).
 *
 *   services() -> array of { handle, mqlen, message, cpu (seconds), module,
 *                 heap (bytes, 0: not a Lua service), cpu_share (0..1 over the
 *                 last budget window), message_rate (per second), timers,
 *                 budget (the SKYNET_BUDGET_* bits of skynet.h) }
 *   workers()  -> array of { handle (0: idle), running (seconds), label }
 *   budget()   -> { overruns = { cpu, memory, queue }, throttles, kills }
 *   timers()   -> { pending, fired, late_sum (seconds), lag (seconds: how late
 *                 the most recent timer fired),
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
		lua_createtable(L, 0, 10);
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
		lua_pushinteger(L, (lua_Integer)st[i].heap_bytes);
		lua_setfield(L, -2, "heap");
		lua_pushnumber(L, (double)st[i].cpu_rate_us / 1000000.0);
		lua_setfield(L, -2, "cpu_share");
		lua_pushinteger(L, (lua_Integer)st[i].msg_rate);
		lua_setfield(L, -2, "message_rate");
		lua_pushinteger(L, (lua_Integer)st[i].timers);
		lua_setfield(L, -2, "timers");
		lua_pushinteger(L, st[i].budget);
		lua_setfield(L, -2, "budget");
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int
ltimers(lua_State *L) {
	struct skynet_timer_stat t;
	skynet_timer_stat(&t);
	lua_createtable(L, 0, 5);
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
	lua_pushnumber(L, (double)t.last_late_us / 1000000.0);
	lua_setfield(L, -2, "lag");
	return 1;
}

#define WORKERS_MAX 1024 // the most workers a node has (config thread)

static int
lworkers(lua_State *L) {
	struct skynet_worker_stat *w = lua_newuserdatauv(L, sizeof(*w) * WORKERS_MAX, 0);
	int n = skynet_worker_stats(w, WORKERS_MAX);
	if (n > WORKERS_MAX)
		n = WORKERS_MAX;
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_createtable(L, 0, 3);
		lua_pushinteger(L, w[i].handle);
		lua_setfield(L, -2, "handle");
		lua_pushnumber(L, (double)w[i].running_us / 1000000.0);
		lua_setfield(L, -2, "running");
		lua_pushstring(L, w[i].label);
		lua_setfield(L, -2, "label");
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int
lbudget(lua_State *L) {
	struct skynet_budget_stat b;
	skynet_budget_stat(&b);
	lua_createtable(L, 0, 3);
	lua_createtable(L, 0, 3);
	static const char *const measures[] = {"cpu", "memory", "queue"};
	for (int m = 0; m < 3; m++) {
		lua_pushinteger(L, (lua_Integer)b.overruns[m]);
		lua_setfield(L, -2, measures[m]);
	}
	lua_setfield(L, -2, "overruns");
	lua_pushinteger(L, (lua_Integer)b.throttles);
	lua_setfield(L, -2, "throttles");
	lua_pushinteger(L, (lua_Integer)b.kills);
	lua_setfield(L, -2, "kills");
	return 1;
}

int
luaopen_skynet_metrics(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"services", lservices}, {"timers", ltimers}, {"workers", lworkers},
	    {"budget", lbudget},     {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}
