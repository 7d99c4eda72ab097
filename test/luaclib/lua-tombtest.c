/*
 * tombtest: a Lua C module built only for the tests (make test), never
 * installed in luaclib/. Each function ends the process with one fatal
 * signal raised the way a bug raises it, so that test/node/test_tombstone.sh
 * can read the crash tombstone a node writes:
 *   tombtest.segv()   writes through a NULL pointer (SIGSEGV)
 *   tombtest.abort()  calls abort() (SIGABRT)
 *   tombtest.fpe()    divides an integer by zero (SIGFPE on x86)
 *   tombtest.ill()    executes a trap instruction (SIGILL on x86)
 *   tombtest.double() installs a tombstone stack writer that itself writes
 *                     through NULL, then faults as segv does: the second
 *                     fault, inside the handler, must end the process at once
 * None returns.
 */
#include "skynet.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdlib.h>

static int
tomb_segv(lua_State *L) {
	volatile int *volatile nowhere = NULL;
	*nowhere = 1;
	return 0;
}

static int
tomb_abort(lua_State *L) {
	abort();
}

static int
tomb_fpe(lua_State *L) {
	volatile int zero = 0;
	volatile int seven = 7; // 1 / x would be folded into a comparison
	volatile int r = seven / zero;
	lua_pushinteger(L, r);
	return 1;
}

static int
tomb_ill(lua_State *L) {
	__builtin_trap();
}

/* A stack writer that faults: the handler's second fault. */
static void
faulty_writer(struct skynet_tombstone_out *out) {
	skynet_tombstone_puts(out, "    (faulty writer)\n");
	volatile int *volatile nowhere = NULL;
	*nowhere = 2;
}

static int
tomb_double(lua_State *L) {
	skynet_tombstone_set_stack(faulty_writer);
	return tomb_segv(L);
}

int
luaopen_tombtest(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"segv", tomb_segv}, {"abort", tomb_abort},   {"fpe", tomb_fpe},
	    {"ill", tomb_ill},   {"double", tomb_double}, {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}
