/*
 * skynet.pack / skynet.unpack throughput, called from Lua as services do:
 * a typical game message (a table of 10 fields: integers, short strings and
 * a small nested array) and a 4 KB string. The pack figures include freeing
 * the returned buffer. Prints one BENCH line per figure, in ns per call.
 */
#include "../lualib-src/lua-seri.c"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char SETUP[] =
    "MSG = {cmd = 'move', id = 1001, session = 123456, x = 1024, y = -768,\n"
    "  hp = 35000, level = 60, flags = 3, name = 'player_01',\n"
    "  items = {101, 102, 103, 104, 105}}\n"
    "BIG = ('x'):rep(4096)\n"
    "SMALL_P, SMALL_N = pack(MSG)\n"
    "BIG_P, BIG_N = pack(BIG)\n";

static int
lfree(lua_State *L) {
	skynet_free(lua_touserdata(L, 1));
	return 0;
}

static double
now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Run body (a statement using i) n times inside one Lua loop; ns per iteration. */
static double
run(lua_State *L, const char *body, int n) {
	char code[256];
	snprintf(code, sizeof(code), "local n = ... for i = 1, n do %s end", body);
	if (luaL_loadstring(L, code) != LUA_OK) {
		fprintf(stderr, "bench_seri: %s\n", lua_tostring(L, -1));
		exit(1);
	}
	lua_pushinteger(L, n);
	double t0 = now_ns();
	if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
		fprintf(stderr, "bench_seri: %s\n", lua_tostring(L, -1));
		exit(1);
	}
	return (now_ns() - t0) / n;
}

/* The best of five rounds: the machine is shared, and noise only adds time. */
static void
report(lua_State *L, const char *name, const char *body, int n) {
	run(L, body, n / 5); // warm up caches and the allocator
	double best = run(L, body, n / 5);
	for (int round = 1; round < 5; round++) {
		double ns = run(L, body, n / 5);
		if (ns < best)
			best = ns;
	}
	printf("BENCH name=%s value=%.1f unit=ns\n", name, best);
	fflush(stdout);
}

int
main(void) {
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	lua_register(L, "pack", luaseri_pack);
	lua_register(L, "unpack", luaseri_unpack);
	lua_register(L, "free", lfree);
	if (luaL_dostring(L, SETUP) != LUA_OK) {
		fprintf(stderr, "bench_seri: %s\n", lua_tostring(L, -1));
		return 1;
	}
	report(L, "seri.pack_small_ns", "free((pack(MSG)))", 500000);
	report(L, "seri.unpack_small_ns", "unpack(SMALL_P, SMALL_N)", 500000);
	report(L, "seri.pack_4k_ns", "free((pack(BIG)))", 300000);
	report(L, "seri.unpack_4k_ns", "unpack(BIG_P, BIG_N)", 300000);
	if (luaL_dostring(L, "free(SMALL_P) free(BIG_P)") != LUA_OK)
		return 1;
	lua_close(L);
	return 0;
}
