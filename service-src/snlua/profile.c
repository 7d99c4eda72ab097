/*
 * snlua's coroutine profiler and the accounting coroutine functions.
 *
 * Profiling. profile.start(co) attaches a record to a coroutine; the
 * accounting resume then adds the time the coroutine runs (inclusive of the
 * coroutines it resumes) to the record, and profile.stop returns seconds.
 * The clock is CLOCK_MONOTONIC, which is read through the vDSO without a
 * system call; it measures elapsed time while the coroutine runs, so time the
 * worker thread spends preempted is counted as well (an approximation of CPU
 * time that is exact on an idle core). A record is found through the thread's
 * extra space (LUA_EXTRASPACE), so a resume of an unprofiled coroutine costs
 * one pointer read; the record itself is anchored in a weak-keyed registry
 * table, so it lives exactly as long as its coroutine. The main thread keeps
 * its extra space NULL (new threads copy it); its record lives in the table.
 *
 * Every resume also tells the signal trap which coroutine runs now
 * (snlua_trap_set_active), so a pending break is served on it. C code that
 * resumes coroutines (skynet.kernel) reaches the same function through
 * registry "snlua.resume": a light userdata pointing at a struct whose one
 * member is the resume function (resume(L, co, narg) moves narg values from
 * L to co and co's results back to L; returns their count, or -1 with the
 * error object on L).
 *
 * Data: struct co_profile (a full userdata) per profiled coroutine, the
 * table co -> record under PROFILE_TABLE_KEY in the registry. Invariant: a
 * record's run_start_ns is 0 while its coroutine does not run; the main
 * thread's record is the exception (nothing resumes the main thread, so it
 * counts the time from start to stop). Locking: none (the thread running the service only). Units: nanoseconds
 * inside, seconds to Lua.
 */
#include "profile.h"
#include "instance.h"
#include "trap.h"
#include "skynet.h"

#include <lauxlib.h>

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

_Static_assert(LUA_EXTRASPACE >= sizeof(void *), "snlua keeps a pointer in the extra space");

/* The accounting record of one profiled coroutine; a full userdata. */
struct co_profile {
	uint64_t total_ns;
	uint64_t run_start_ns; // 0 while the coroutine does not run
};

/* Registry key: its address is unique per process. */
static const char PROFILE_TABLE_KEY = 0;

static struct co_profile *
profile_of(lua_State *co) {
	return *(struct co_profile **)lua_getextraspace(co);
}

static void
set_profile_of(lua_State *co, struct co_profile *p) {
	*(struct co_profile **)lua_getextraspace(co) = p;
}

static bool
is_main_thread(lua_State *L, lua_State *co) {
	return co == snlua_of(L)->L;
}

/* Resume co with narg values from L's top; returns result count or -1 (error on L's top). */
static int
resume_accounted(lua_State *L, lua_State *co, int narg) {
	if (!lua_checkstack(co, narg)) {
		lua_pushliteral(L, "too many arguments to resume");
		return -1;
	}
	lua_xmove(L, co, narg);
	struct snlua *l = snlua_of(L);
	struct co_profile *p = profile_of(co);
	if (p != NULL)
		p->run_start_ns = skynet_monotonic_ns();
	snlua_trap_set_active(l, co);
	int nres = 0;
	int status = lua_resume(co, L, narg, &nres);
	snlua_trap_set_active(l, L);
	p = profile_of(co); // co may have started or stopped its own profile
	if (p != NULL && p->run_start_ns != 0) {
		p->total_ns += skynet_monotonic_ns() - p->run_start_ns;
		p->run_start_ns = 0;
	}
	if (status != LUA_OK && status != LUA_YIELD) {
		lua_xmove(co, L, 1);
		return -1;
	}
	if (!lua_checkstack(L, nres + 1)) {
		lua_pop(co, nres);
		lua_pushliteral(L, "too many results to resume");
		return -1;
	}
	lua_xmove(co, L, nres);
	return nres;
}

static int
co_resume(lua_State *L) {
	lua_State *co = lua_tothread(L, 1);
	luaL_argexpected(L, co != NULL, 1, "coroutine");
	int n = resume_accounted(L, co, lua_gettop(L) - 1);
	if (n < 0) {
		lua_pushboolean(L, 0);
		lua_insert(L, -2);
		return 2;
	}
	lua_pushboolean(L, 1);
	lua_insert(L, -(n + 1));
	return n + 1;
}

static int
close_thread(lua_State *co, lua_State *from) {
#if LUA_VERSION_RELEASE_NUM >= 50406
	return lua_closethread(co, from);
#else
	(void)from;
	return lua_resetthread(co);
#endif
}

static int
co_wrap_call(lua_State *L) {
	lua_State *co = lua_tothread(L, lua_upvalueindex(1));
	int n = resume_accounted(L, co, lua_gettop(L));
	if (n >= 0)
		return n;
	int status = lua_status(co);
	if (status != LUA_OK && status != LUA_YIELD) { // the coroutine died: run its tbc variables
		status = close_thread(co, L);
		lua_xmove(co, L, 1);
	}
	if (status != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
		luaL_where(L, 1);
		lua_insert(L, -2);
		lua_concat(L, 2);
	}
	return lua_error(L);
}

static int
co_wrap(lua_State *L) {
	luaL_checktype(L, 1, LUA_TFUNCTION);
	lua_State *co = lua_newthread(L);
	lua_pushvalue(L, 1);
	lua_xmove(L, co, 1);
	lua_pushcclosure(L, co_wrap_call, 1);
	return 1;
}

/* The coroutine argument 1 names (default: the running one); pushes it as the table key. */
static lua_State *
push_profile_target(lua_State *L) {
	if (lua_isnoneornil(L, 1)) {
		lua_pushthread(L);
		return L;
	}
	lua_State *co = lua_tothread(L, 1);
	luaL_argexpected(L, co != NULL, 1, "coroutine");
	lua_pushvalue(L, 1);
	return co;
}

/* Push the weak-keyed table co -> record. */
static void
push_profile_table(lua_State *L) {
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &PROFILE_TABLE_KEY) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	lua_createtable(L, 0, 4);
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &PROFILE_TABLE_KEY);
}

/* Is co on the current call chain (running, or resuming the running one)? */
static bool
is_on_call_chain(lua_State *L, lua_State *co) {
	lua_Debug ar;
	return co == L || (lua_status(co) == LUA_OK && lua_getstack(co, 0, &ar) != 0);
}

/* profile.start([co]): start accounting the running time of co. */
static int
profile_start(lua_State *L) {
	lua_settop(L, 1);
	push_profile_table(L);
	lua_State *co = push_profile_target(L); // table, co
	lua_pushvalue(L, -1);
	if (lua_rawget(L, -3) != LUA_TNIL)
		return luaL_error(L, "thread %p start profile more than once", (void *)co);
	lua_pop(L, 1);
	struct co_profile *p = lua_newuserdatauv(L, sizeof(*p), 0);
	p->total_ns = 0;
	p->run_start_ns = is_on_call_chain(L, co) ? skynet_monotonic_ns() : 0;
	lua_rawset(L, -3);
	if (!is_main_thread(L, co))
		set_profile_of(co, p);
	return 0;
}

/* profile.stop([co]): seconds co ran since profile.start(co). */
static int
profile_stop(lua_State *L) {
	lua_settop(L, 1);
	push_profile_table(L);
	lua_State *co = push_profile_target(L); // table, co
	lua_pushvalue(L, -1);
	if (lua_rawget(L, -3) != LUA_TUSERDATA)
		return luaL_error(L, "call profile.start() before profile.stop()");
	struct co_profile *p = lua_touserdata(L, -1);
	uint64_t ns = p->total_ns;
	if (p->run_start_ns != 0)
		ns += skynet_monotonic_ns() - p->run_start_ns;
	lua_pop(L, 1);
	lua_pushnil(L);
	lua_rawset(L, -3);
	if (!is_main_thread(L, co))
		set_profile_of(co, NULL);
	lua_pushnumber(L, (lua_Number)ns / 1e9);
	return 1;
}

void
snlua_profile_init_state(lua_State *L) {
	set_profile_of(L, NULL); // new threads copy the main thread's extra space
}

int
snlua_profile_open(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"start", profile_start}, {"stop", profile_stop}, {"resume", co_resume},
	    {"wrap", co_wrap},        {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}

/* The accounting resume for C code (skynet.kernel), as registry "snlua.resume". */
struct snlua_resume {
	int (*resume)(lua_State *L, lua_State *co, int narg);
};

static const struct snlua_resume RESUME = {resume_accounted};

void
snlua_profile_install(lua_State *L) {
	lua_pushlightuserdata(L, (void *)&RESUME);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.resume");
	lua_getglobal(L, "coroutine");
	lua_pushcfunction(L, co_resume);
	lua_setfield(L, -2, "resume");
	lua_pushcfunction(L, co_wrap);
	lua_setfield(L, -2, "wrap");
	lua_pop(L, 1);
}
