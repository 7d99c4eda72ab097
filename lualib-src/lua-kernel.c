/*
 * skynet.kernel: the message path of the Lua service API, in C.
 *
 * require "skynet.kernel" returns the skynet table (lualib/skynet.lua returns
 * it in turn); before, that file held the code below in Lua, and every
 * service kept its own copy of those function prototypes. Here the code is
 * shared by all states; a state holds only its data.
 *
 * Data. One full userdata per state, struct kernel, anchored in the registry
 * under KERNEL_KEY (every function, a light C function, finds it there). Its
 * user values are the state tables, shared with the Lua parts loaded on
 * demand (the files of skynet/ext and skynet/manager.lua) through
 * skynet.private (S):
 *   waiting       session -> thread | handler table | "BREAK"
 *                   thread: a coroutine blocked in call/sleep/wait, resumed
 *                   with (true, msg, sz, session) on a reply, (false) when
 *                   the call failed, (false, "BREAK") when wakeup cut it
 *                   short; table t: a skynet.request handler, called inline
 *                   as t[1](t, session, ok, msg, sz); "BREAK": the late
 *                   message is dropped.
 *   timers        session -> function of a pending skynet.timeout (no
 *                 coroutine exists until it fires); rebuilt once most of a
 *                 batch of at least 1024 is gone, so its memory comes back.
 *   watching      session -> address, for calls in flight.
 *   req_session, req_source   co -> session (0: a send) and source of the
 *                 request the coroutine serves.
 *   sleep_session token -> session (> 0: sleep with a timer, < 0: wait).
 *   unresponse    response closure -> address owed.
 *   fired         co <-> session of a fired timeout that is blocked.
 *   trace_tag, trace_source, timeout_tb   tracing (co -> tag, source ->
 *                 announced tag, session -> creation traceback).
 *   pool          the parked coroutines (weak), proto the protocols (by name
 *                 and id), wakeup/error/fork queues (FIFOs: wq + wq_token,
 *                 eq, fq + fq_args; heads and tails in struct kernel), woken
 *                 (token -> its queued wakeup session, so a second wakeup
 *                 still returns true).
 * Each state table is made on first use (a nil user value reads as empty),
 * and so are S's fields (its __index) and most of the skynet table's (its
 * __index stores each name of LAZY on first use): a state pays only for
 * what its service uses.
 * Sessions count up to SESSION_MAX and then start again at 1: once the
 * counter has wrapped, every allocation first skips sessions in use.
 *
 * running. The coroutine the dispatcher resumed last (anchored in a user
 * value). Sessions are registered for it, not for the running coroutine: a
 * skynet.coroutine nested in it passes every framework yield up, so the
 * framework resumes the root.
 *
 * Coroutines. A pooled coroutine's body is co_body, a C function: the first
 * resume passes the job (f, args...), it calls f(args...) with lua_callk;
 * when f returns it warns when a request went unanswered, forgets the fired
 * timeout and trace tag, parks itself in the pool and yields "EXIT", waiting
 * for the next job. An error in f kills the coroutine (co_error logs it,
 * fails its request and closes it).
 * Yield protocol (first yielded value): "SUSPEND" blocked, registered
 * first; "QUIT" skynet.exit, the dispatcher closes the coroutine; "EXIT" the
 * job is done; nothing or nil: suspended for good. Anything else is an error.
 * Blocking functions (call, sleep, wait, S.yield_call) yield with
 * lua_yieldk and finish in their continuation.
 *
 * Resumes go through the host's accounting resume when it publishes one
 * (registry "snlua.resume": a light userdata pointing at a struct
 * kernel_resume), so that skynet.profile and the signal trap see framework
 * coroutines; plain lua_resume otherwise. The trap's hook fires on Lua
 * instructions only, so nothing here is broken midway; skynet.lua still
 * marks itself, and the kernel marks the functions of the lazy parts it
 * loads (snlua.framework), so a break there still waits for service code.
 *
 * Errors raised while a message is dispatched are collected (errors, a
 * table made on first use) and raised together, joined by newlines, at the
 * end of dispatch_message, after the wakeup, error and fork queues ran.
 *
 * Last will. The kernel userdata's __gc runs when the state closes: unless
 * the service went through skynet.exit (S.exited), it sends an error to the
 * source of every request still unanswered and fails each detached
 * response closure, so no caller waits forever on a killed service.
 *
 * Units: timeouts in centiseconds; sessions are positive C ints.
 * Locking: none; only the worker running the service touches its state.
 * This file is built without ThreadSanitizer (see the Makefile): its
 * functions yield through Lua's longjmp with their frames on the stack,
 * which ThreadSanitizer's shadow stack does not survive.
 */

#include "skynet.h"
#include "lua-seri.h"
#include "lua-skynet.h"

#include <lauxlib.h>
#include <lua.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_SESSION_MAX   0x7fffffff
#define KERNEL_TIMER_REBUILD 1024 // pending timeouts before the table is ever rebuilt

/* The host's accounting resume: same contract as lua_resume plus moving values.
 * resume(L, co, narg) moves narg values from L to co, resumes co and moves its
 * results to L; returns their count, or -1 with the error object on L. */
struct kernel_resume {
	int (*resume)(lua_State *L, lua_State *co, int narg);
};

enum {
	UV_WAITING = 1,
	UV_TIMERS,
	UV_WATCHING,
	UV_REQ_SESSION,
	UV_REQ_SOURCE,
	UV_SLEEP_SESSION,
	UV_UNRESPONSE,
	UV_FIRED,
	UV_TRACE_TAG,
	UV_TRACE_SOURCE,
	UV_TIMEOUT_TB,
	UV_POOL,
	UV_PROTO,
	UV_WQ,
	UV_WQ_TOKEN,
	UV_WOKEN,
	UV_EQ,
	UV_FQ,
	UV_FQ_ARGS,
	UV_S,
	UV_SKYNET,
	UV_REQUIRE, // the skynet.require module
	UV_RUNNING,
	UV_ERRORS,
	UV_UNKNOWN_REQUEST,
	UV_UNKNOWN_RESPONSE,
	UV_FRAMEWORK,   // snlua's framework marker, or nil
	UV_GRANTED,     // snlua's granted, or nil
	UV_INIT_THREAD, // the start coroutine while it runs (S.init_thread)
	UV_COUNT = UV_INIT_THREAD,
};

struct kernel {
	struct skynet_context *ctx;
	const struct kernel_resume *host; // NULL: plain lua_resume
	lua_State *running;               // the coroutine resumed last (anchored in UV_RUNNING)
	uint32_t self;                    // 0 until skynet.self asked
	int last_session;
	int timer_n, timer_peak; // pending timeouts, most since the last rebuild
	int fired_n;
	int wq_h, wq_t, eq_h, eq_t, fq_h, fq_t;
	bool wrapped;
	bool tracing;
	bool trace_timeouts;
	bool unpacking; // a request is being unpacked (an error then fails it)
};

static const char KERNEL_KEY = 0;

/*
 * The names of the skynet table, stored on first use: " name=<letter>" (one
 * static string for all states). K: a kernel function; C (skynet.core's), G
 * (the global) and R (skynet.require's) are copied when the table is made;
 * any other letter: the lazy module below.
 */
static const char LAZY[] =
    " send=K call=K ret=K retpack=K genid=K self=K address=K timeout=K sleep=K wait=K wakeup=K"
    " fork=K register_protocol=K dispatch=K dispatch_message=K init_service=K start=K"
    " pack=C packstring=C unpack=C tostring=C trash=C error=C now=C hpc=C pcall=G init=R"
    " exit=k killthread=k term=k localname=s harbor=s getenv=s setenv=s"
    " starttime=s time=s endless=s mqlen=s stat=s memlimit=s newservice=s uniqueservice=s"
    " queryservice=s info_func=s trace=t tracetag=t tracelog=t traceproto=t tracecall=t"
    " trace_timeout=t task=T uniqtask=T request=r launch=m kill=m abort=m register=m name=m"
    " forward_type=m filter=m monitor=m cache=c response=e ignoreret=e context=e redirect=e"
    " rawsend=e rawcall=e yield=e dispatch_unknown_request=e dispatch_unknown_response=e ";

static const char *
lazy_module(char letter) {
	switch (letter) {
	case 'k':
		return "skynet.ext.kill";
	case 's':
		return "skynet.ext.service";
	case 't':
		return "skynet.ext.trace";
	case 'T':
		return "skynet.ext.task";
	case 'r':
		return "skynet.ext.request";
	case 'm':
		return "skynet.manager";
	case 'c':
		return "skynet.codecache";
	case 'e':
		return "skynet.ext.message";
	default:
		return NULL;
	}
}

/* ---- state access ------------------------------------------------------- */

/* Push the kernel userdata; returns its record. */
static struct kernel *
kpush(lua_State *L) {
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &KERNEL_KEY) != LUA_TUSERDATA)
		luaL_error(L, "skynet.kernel: not built in this state");
	return lua_touserdata(L, -1);
}

/* Push user value uv of the kernel at index K. */
static inline int
uv(lua_State *L, int K, int v) {
	return lua_getiuservalue(L, K, v);
}

/* Push state table v (UV_WAITING..UV_FQ_ARGS), made on first use. */
static void
tab(lua_State *L, int K, int v) {
	if (uv(L, K, v) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	if (v == UV_POOL) { // weak: parked coroutines may be collected
		lua_createtable(L, 0, 1);
		lua_pushliteral(L, "kv");
		lua_setfield(L, -2, "__mode");
		lua_setmetatable(L, -2);
	}
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, K, v);
}

/* Push state table v when it exists (true); nothing otherwise. */
static bool
tab_if(lua_State *L, int K, int v) {
	if (uv(L, K, v) == LUA_TTABLE)
		return true;
	lua_pop(L, 1);
	return false;
}

/* t[key] where t is state table v; key an integer. Pushes the value, returns its type. */
static int
uv_geti(lua_State *L, int K, int v, lua_Integer key) {
	if (!tab_if(L, K, v)) {
		lua_pushnil(L);
		return LUA_TNIL;
	}
	int t = lua_rawgeti(L, -1, key);
	lua_remove(L, -2);
	return t;
}

/* t[key] = value on top (popped); key an integer. */
static void
uv_seti(lua_State *L, int K, int v, lua_Integer key) {
	if (!lua_isnil(L, -1)) {
		tab(L, K, v);
	} else if (!tab_if(L, K, v)) {
		lua_pop(L, 1); // nothing to clear
		return;
	}
	lua_insert(L, -2);
	lua_rawseti(L, -2, key);
	lua_pop(L, 1);
}

/* t[stack idx] -> pushed value. */
static int
uv_get(lua_State *L, int K, int v, int key) {
	key = lua_absindex(L, key);
	if (!tab_if(L, K, v)) {
		lua_pushnil(L);
		return LUA_TNIL;
	}
	lua_pushvalue(L, key);
	int t = lua_rawget(L, -2);
	lua_remove(L, -2);
	return t;
}

/* t[stack idx] = value on top (popped). */
static void
uv_set(lua_State *L, int K, int v, int key) {
	key = lua_absindex(L, key);
	if (!lua_isnil(L, -1)) {
		tab(L, K, v);
	} else if (!tab_if(L, K, v)) {
		lua_pop(L, 1); // nothing to clear
		return;
	}
	lua_pushvalue(L, key);
	lua_rotate(L, -3, -1); // table, key, value
	lua_rawset(L, -3);
	lua_pop(L, 1);
}

static void
set_running(lua_State *L, int K, struct kernel *k, int idx) {
	k->running = lua_tothread(L, idx);
	lua_pushvalue(L, idx);
	lua_setiuservalue(L, K, UV_RUNNING);
}

static void
push_running(lua_State *L, int K) {
	uv(L, K, UV_RUNNING);
}

/* ---- sending ------------------------------------------------------------- */

/*
 * Send the payload at msg to the address at dest (an integer handle or a
 * name), as skynet.core's send does; session < 0 asks the core for one.
 * Returns the core's result (a session, or a negative error).
 */
static int
send_msg(lua_State *L, struct kernel *k, int dest, int type, int session, int msg) {
	int t = lua_type(L, dest);
	int is_int = 0;
	if (t == LUA_TNUMBER)
		(void)lua_tointegerx(L, dest, &is_int);
	if (t != LUA_TSTRING && !is_int) {
		if (lua_type(L, msg) == LUA_TLIGHTUSERDATA)
			skynet_free(lua_touserdata(L, msg));
		if (t == LUA_TNUMBER)
			luaL_error(L, "bad argument #1 to 'send' (handle must be an integer)");
		luaL_error(L, "dest address type (%s) must be a string or number.", lua_typename(L, t));
	}
	if (session < 0) {
		type |= PTYPE_TAG_ALLOCSESSION;
		session = 0;
	}
	struct skynet_payload p;
	skynet_payload_get(L, msg, &p);
	return skynet_payload_send(L, k->ctx, dest, 0, type, session, &p);
}

/* An empty error message to source for session (never raises). */
static void
send_error(struct kernel *k, lua_Integer source, lua_Integer session) {
	skynet_send(k->ctx, 0, (uint32_t)source, PTYPE_ERROR, (int)session, NULL, 0);
}

static void
trash(lua_State *L, int msg) {
	if (lua_type(L, msg) == LUA_TLIGHTUSERDATA)
		skynet_free(lua_touserdata(L, msg));
}

/* ":%08x" of a number, tostring of anything else (skynet.address). */
static const char *
push_address(lua_State *L, int idx) {
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

/* ---- sessions ------------------------------------------------------------ */

static void
track(struct kernel *k, int session) {
	if (session < k->last_session)
		k->wrapped = true;
	k->last_session = session;
}

static int
genid(struct kernel *k) {
	return skynet_send(k->ctx, 0, 0, PTYPE_TAG_ALLOCSESSION, 0, NULL, 0);
}

/* After a wrap: skip the sessions still in use before the next allocation. */
static void
session_guard(lua_State *L, int K, struct kernel *k) {
	for (;;) {
		int nxt = k->last_session >= KERNEL_SESSION_MAX ? 1 : k->last_session + 1;
		int busy = uv_geti(L, K, UV_WAITING, nxt) != LUA_TNIL;
		lua_pop(L, 1);
		if (!busy) {
			busy = uv_geti(L, K, UV_TIMERS, nxt) != LUA_TNIL;
			lua_pop(L, 1);
		}
		if (!busy)
			return;
		k->last_session = genid(k);
	}
}

/* Arm a timer of ti (value at idx) cs; returns the session. */
static int
arm_timer(lua_State *L, int K, struct kernel *k, int idx) {
	lua_Integer ti;
	if (k->wrapped)
		session_guard(L, K, k);
	if (lua_isinteger(L, idx)) {
		ti = lua_tointeger(L, idx);
	} else {
		/* Any number or numeric string, floored: through skynet.core's own rules. */
		lua_getglobal(L, "require");
		lua_pushliteral(L, "skynet.core");
		lua_call(L, 1, 1);
		lua_getfield(L, -1, "timeout");
		lua_pushvalue(L, idx);
		lua_call(L, 1, 1);
		int session = (int)lua_tointeger(L, -1);
		lua_pop(L, 2);
		track(k, session);
		return session;
	}
	if (ti > INT_MAX)
		ti = INT_MAX;
	else if (ti < INT_MIN)
		ti = INT_MIN;
	int session = skynet_timeout_new(k->ctx, (int)ti);
	track(k, session);
	return session;
}

/* ---- errors --------------------------------------------------------------- */

/* Append the string on top (popped) to the errors of this dispatch. */
static void
push_error(lua_State *L, int K) {
	if (uv(L, K, UV_ERRORS) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_createtable(L, 1, 0);
		lua_pushvalue(L, -1);
		lua_setiuservalue(L, K, UV_ERRORS);
	}
	lua_insert(L, -2);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	lua_pop(L, 1);
}

/* ---- coroutines ---------------------------------------------------------- */

static int
close_thread(lua_State *co, lua_State *from) {
#if LUA_VERSION_RELEASE_NUM >= 50406
	return lua_closethread(co, from);
#else
	(void)from;
	return lua_resetthread(co);
#endif
}

/* Bookkeeping when the coroutine at idx stops for good: fired timeout, trace tag. */
static void
co_finished(lua_State *L, int K, struct kernel *k, int idx) {
	idx = lua_absindex(L, idx);
	if (k->fired_n > 0) {
		if (uv_get(L, K, UV_FIRED, idx) != LUA_TNIL) {
			int s = lua_absindex(L, -1);
			lua_pushnil(L);
			uv_set(L, K, UV_FIRED, idx);
			lua_pushnil(L);
			uv_set(L, K, UV_FIRED, s);
			k->fired_n--;
		}
		lua_pop(L, 1);
	}
	if (k->tracing) {
		if (uv_get(L, K, UV_TRACE_TAG, idx) != LUA_TNIL && lua_toboolean(L, -1)) {
			int tag = lua_absindex(L, -1);
			lua_pushnil(L);
			uv_set(L, K, UV_TRACE_TAG, idx);
			lua_getglobal(L, "require");
			lua_pushliteral(L, "skynet.core");
			lua_call(L, 1, 1);
			lua_getfield(L, -1, "trace");
			lua_pushvalue(L, tag);
			lua_pushliteral(L, "end");
			lua_call(L, 2, 0);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
}

static int co_body(lua_State *co);

static int
co_next(lua_State *co, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	return co_body(co);
}

/* The job f (at index 1) returned: the request check, bookkeeping, back to the pool. */
static int
co_done(lua_State *co, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(co, 1);
	struct kernel *k = kpush(co);
	int K = lua_gettop(co);
	lua_pushthread(co);
	int self = lua_gettop(co);
	if (uv_get(co, K, UV_REQ_SOURCE, self) != LUA_TNIL) {
		int source = lua_gettop(co);
		uv_get(co, K, UV_REQ_SESSION, self);
		int session = lua_gettop(co);
		lua_pushnil(co);
		uv_set(co, K, UV_REQ_SESSION, self);
		lua_pushnil(co);
		uv_set(co, K, UV_REQ_SOURCE, self);
		if (!lua_isnil(co, session) &&
		    !(lua_type(co, session) == LUA_TNUMBER && lua_tonumber(co, session) == 0) &&
		    lua_type(co, 1) == LUA_TFUNCTION) {
			lua_Debug ar;
			lua_pushvalue(co, 1);
			lua_getinfo(co, ">S", &ar);
			const char *s = luaL_tolstring(co, session, NULL);
			const char *from = push_address(co, source);
			lua_pushfstring(co, "Maybe forgot response session %s from %s : %s:%d", s, from,
			                ar.short_src, ar.linedefined);
			skynet_error(k->ctx, "%s", lua_tostring(co, -1));
		}
	}
	lua_settop(co, self);
	if (k->fired_n > 0 || k->tracing)
		co_finished(co, K, k, self);
	tab(co, K, UV_POOL);
	lua_pushvalue(co, self);
	lua_rawseti(co, -2, (lua_Integer)lua_rawlen(co, -2) + 1);
	lua_settop(co, 0);
	lua_pushliteral(co, "EXIT");
	return lua_yieldk(co, 1, 0, co_next);
}

/* Body of a pooled coroutine; the stack holds the job: f, args... */
static int
co_body(lua_State *co) {
	int n = lua_gettop(co);
	if (n == 0)
		lua_pushnil(co), n = 1;
	lua_pushvalue(co, 1);
	lua_insert(co, 2); // f stays at 1 for the checks after it returns
	lua_callk(co, n - 1, 0, 0, co_done);
	return co_done(co, LUA_OK, 0);
}

/* Push a framework coroutine: from the pool when one is parked there. */
static lua_State *
co_get(lua_State *L, int K) {
	tab(L, K, UV_POOL);
	lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
	if (n > 0) {
		lua_rawgeti(L, -1, n);
		lua_pushnil(L);
		lua_rawseti(L, -3, n);
		lua_remove(L, -2);
		if (lua_type(L, -1) == LUA_TTHREAD)
			return lua_tothread(L, -1);
		lua_pop(L, 1); // collected meanwhile (the pool is weak): make one
	} else {
		lua_pop(L, 1);
	}
	lua_State *co = lua_newthread(L);
	lua_pushcfunction(co, co_body);
	return co;
}

/*
 * Resume co with narg values from L's top. Leaves one value on L: the first
 * value co yielded (nil when none) and returns true, or its error object and
 * returns false.
 */
static bool
resume(struct kernel *k, lua_State *L, lua_State *co, int narg) {
	if (k->host != NULL) {
		int n = k->host->resume(L, co, narg);
		if (n < 0)
			return false;
		if (n == 0)
			lua_pushnil(L);
		else
			lua_pop(L, n - 1);
		return true;
	}
	if (!lua_checkstack(co, narg)) {
		lua_pop(L, narg);
		lua_pushliteral(L, "too many arguments to resume");
		return false;
	}
	lua_xmove(L, co, narg);
	int nres = 0;
	int status = lua_resume(co, L, narg, &nres);
	if (status != LUA_OK && status != LUA_YIELD) {
		lua_xmove(co, L, 1);
		return false;
	}
	if (nres == 0) {
		lua_pushnil(L);
	} else {
		lua_pop(co, nres - 1);
		lua_xmove(co, L, 1);
	}
	return true;
}

/* The coroutine at idx died with the error at err (or ran an unknown command). */
static void
co_error(lua_State *L, int K, struct kernel *k, int idx, int err) {
	lua_State *co = lua_tothread(L, idx);
	const char *msg = luaL_tolstring(L, err, NULL);
	luaL_traceback(L, co, msg, 0);
	lua_remove(L, -2);
	push_error(L, K);
	if (uv_get(L, K, UV_REQ_SESSION, idx) != LUA_TNIL) {
		lua_Integer session = lua_tointeger(L, -1);
		if (uv_get(L, K, UV_REQ_SOURCE, idx) != LUA_TNIL && session != 0)
			send_error(k, lua_tointeger(L, -1), session);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_pushnil(L);
	uv_set(L, K, UV_REQ_SESSION, idx);
	lua_pushnil(L);
	uv_set(L, K, UV_REQ_SOURCE, idx);
	co_finished(L, K, k, idx);
	close_thread(co, L);
}

static bool
is_string(lua_State *L, int idx, const char *s) {
	return lua_type(L, idx) == LUA_TSTRING && strcmp(lua_tostring(L, idx), s) == 0;
}

/*
 * Stack: ..., co (thread or nil), r (what resuming co gave: a command, or the
 * error when ok is false); both are popped. Handles r, then resumes, one per
 * step, the woken coroutines and those whose calls failed, until both
 * queues are empty (or a coroutine quits).
 */
static void
run(lua_State *L, int K, bool ok) {
	struct kernel *k = lua_touserdata(L, K);
	int base = lua_gettop(L) - 2;
	int co = base + 1, r = base + 2;
	for (;;) {
		if (lua_type(L, co) == LUA_TTHREAD) {
			if (!ok) {
				co_error(L, K, k, co, r);
			} else if (is_string(L, r, "QUIT")) {
				close_thread(lua_tothread(L, co), L);
				lua_settop(L, base);
				return;
			} else if (!lua_isnil(L, r) && !is_string(L, r, "SUSPEND") &&
			           !is_string(L, r, "EXIT")) {
				lua_pushliteral(L, "Unknown command : ");
				luaL_tolstring(L, r, NULL);
				lua_concat(L, 2);
				co_error(L, K, k, co, lua_gettop(L));
			}
		}
		lua_settop(L, base);
		if (k->wq_h <= k->wq_t) {
			int h = k->wq_h++;
			uv_geti(L, K, UV_WQ, h);
			lua_Integer s = lua_tointeger(L, -1);
			uv_geti(L, K, UV_WQ_TOKEN, h);
			int token = lua_gettop(L);
			lua_pushnil(L);
			uv_seti(L, K, UV_WQ, h);
			lua_pushnil(L);
			uv_seti(L, K, UV_WQ_TOKEN, h);
			uv_get(L, K, UV_WOKEN, token);
			if (lua_rawequal(L, -1, token - 1)) {
				lua_pushnil(L);
				uv_set(L, K, UV_WOKEN, token);
			}
			lua_settop(L, base);
			bool timed = s > 0;
			if (!timed)
				s = -s;
			if (uv_geti(L, K, UV_WAITING, s) == LUA_TTHREAD) { // at co
				if (timed && skynet_timeout_cancel(k->ctx, (int)s) != 0)
					lua_pushliteral(L, "BREAK"); // the timer fired already: drop its message
				else
					lua_pushnil(L);
				uv_seti(L, K, UV_WAITING, s);
				set_running(L, K, k, co);
				lua_pushboolean(L, 0);
				lua_pushliteral(L, "BREAK");
				ok = resume(k, L, lua_tothread(L, co), 2);
			} else {
				lua_settop(L, base);
				lua_pushnil(L);
				lua_pushnil(L);
				ok = true;
			}
		} else if (k->eq_h <= k->eq_t) {
			int h = k->eq_h++;
			uv_geti(L, K, UV_EQ, h);
			lua_Integer s = lua_tointeger(L, -1);
			lua_pushnil(L);
			uv_seti(L, K, UV_EQ, h);
			lua_settop(L, base);
			int t = uv_geti(L, K, UV_WAITING, s); // at co
			if (t != LUA_TNIL) {
				lua_pushnil(L);
				uv_seti(L, K, UV_WAITING, s);
				lua_pushnil(L);
				uv_seti(L, K, UV_WATCHING, s);
				if (t == LUA_TTHREAD) {
					set_running(L, K, k, co);
					lua_pushboolean(L, 0);
					ok = resume(k, L, lua_tothread(L, co), 1);
					continue;
				}
				if (t == LUA_TTABLE) {
					lua_rawgeti(L, co, 1);
					lua_pushvalue(L, co);
					lua_pushinteger(L, s);
					lua_pushboolean(L, 0);
					lua_call(L, 3, 0);
				}
			}
			lua_settop(L, base);
			lua_pushnil(L);
			lua_pushnil(L);
			ok = true;
		} else {
			if (k->wq_t != 0 || k->eq_t != 0) {
				k->wq_h = k->eq_h = 1;
				k->wq_t = k->eq_t = 0;
			}
			lua_settop(L, base);
			return;
		}
	}
}

/* run() with no coroutine to handle first. */
static void
run_queues(lua_State *L, int K) {
	lua_pushnil(L);
	lua_pushnil(L);
	run(L, K, true);
}

/* ---- dispatch ------------------------------------------------------------ */

static void
queue_error(lua_State *L, int K, struct kernel *k, lua_Integer session) {
	lua_pushinteger(L, session);
	uv_seti(L, K, UV_EQ, ++k->eq_t);
}

static void
error_dispatch(lua_State *L, int K, struct kernel *k, lua_Integer session, int source) {
	if (session == 0) {
		/* source is dead: fail every call to it, forget what we owe it */
		tab(L, K, UV_WATCHING);
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			if (lua_rawequal(L, -1, source)) {
				lua_pushvalue(L, -2);
				uv_seti(L, K, UV_EQ, ++k->eq_t);
			}
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
		tab(L, K, UV_UNRESPONSE);
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			if (lua_rawequal(L, -1, source)) {
				lua_pushvalue(L, -2);
				lua_pushnil(L);
				lua_rawset(L, -5); // clearing a field during traversal is allowed
			}
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
		lua_pushnil(L);
		uv_set(L, K, UV_TRACE_SOURCE, source);
	} else if (uv_geti(L, K, UV_WATCHING, session) != LUA_TNIL) {
		lua_pop(L, 1);
		queue_error(L, K, k, session);
	} else {
		lua_pop(L, 1);
		if (uv_geti(L, K, UV_WAITING, session) == LUA_TSTRING && is_string(L, -1, "BREAK")) {
			lua_pushnil(L);
			uv_seti(L, K, UV_WAITING, session);
		}
		lua_pop(L, 1);
	}
}

/* S.error_dispatch(session, source), also the "error" protocol's dispatch. */
static int
lerror_dispatch(lua_State *L) {
	lua_settop(L, 2);
	struct kernel *k = kpush(L);
	error_dispatch(L, 3, k, lua_tointeger(L, 1), 2);
	return 0;
}

static void
call_trace(lua_State *L, int tag, const char *text) {
	lua_getglobal(L, "require");
	lua_pushliteral(L, "skynet.core");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, "trace");
	lua_pushvalue(L, tag);
	lua_pushstring(L, text);
	lua_call(L, 2, 0);
	lua_pop(L, 1);
}

/* Stack: f, session, source, args... above base. Starts the request in a pooled coroutine. */
static void
start_request(lua_State *L, int K, struct kernel *k, int base) {
	k->unpacking = false;
	int nargs = lua_gettop(L) - base;
	co_get(L, K);
	lua_insert(L, base + 1);
	int co = base + 1;
	lua_pushvalue(L, base + 3);
	uv_set(L, K, UV_REQ_SESSION, co);
	lua_pushvalue(L, base + 4);
	uv_set(L, K, UV_REQ_SOURCE, co);
	if (k->tracing) {
		if (uv_get(L, K, UV_TRACE_SOURCE, base + 4) != LUA_TNIL) {
			int tag = lua_gettop(L);
			lua_pushnil(L);
			uv_set(L, K, UV_TRACE_SOURCE, base + 4);
			lua_pushvalue(L, tag);
			uv_set(L, K, UV_TRACE_TAG, co);
			call_trace(L, tag, "request");
		}
		lua_pop(L, 1);
	}
	set_running(L, K, k, co);
	bool ok = resume(k, L, lua_tothread(L, co), nargs);
	run(L, K, ok);
}

/* Push c.tostring(msg, sz) of the message at msg (nil stays nil). */
static void
push_msg_string(lua_State *L, int msg) {
	switch (lua_type(L, msg)) {
	case LUA_TLIGHTUSERDATA: {
		const char *p = lua_touserdata(L, msg);
		lua_Integer sz = lua_tointeger(L, msg + 1);
		lua_pushlstring(L, p ? p : "", p && sz > 0 ? (size_t)sz : 0);
		break;
	}
	case LUA_TSTRING:
		lua_pushvalue(L, msg);
		break;
	default:
		lua_pushnil(L);
	}
}

/* Default hook for unknown requests and responses: (session, source, msg, sz[, prototype]). */
static int
lunknown_message(lua_State *L) {
	lua_settop(L, 5);
	struct kernel *k = kpush(L);
	if (lua_isnil(L, 5)) {
		lua_pushliteral(L, "response");
	} else {
		lua_pushliteral(L, "request (");
		luaL_tolstring(L, 5, NULL);
		lua_pushliteral(L, ")");
		lua_concat(L, 3);
	}
	push_msg_string(L, 3);
	const char *m = luaL_tolstring(L, -1, NULL);
	skynet_error(k->ctx, "Unknown %s: %s", lua_tostring(L, 7), m);
	return luaL_error(L, "Unknown session : %d from %x", (int)lua_tointeger(L, 1),
	                  (unsigned)lua_tointeger(L, 2));
}

/* raw_dispatch(prototype, msg, sz, session, source), under pcall. */
static int
raw_dispatch(lua_State *L) {
	lua_settop(L, 5);
	struct kernel *k = kpush(L);
	int K = 6;
	int isnum = 0;
	lua_Integer prototype = lua_tointegerx(L, 1, &isnum);
	if (!isnum)
		prototype = -1;
	lua_Integer session = lua_tointeger(L, 4);
	if (prototype == PTYPE_RESPONSE) {
		int t = uv_geti(L, K, UV_WAITING, session); // 7
		if (t == LUA_TNIL) {
			lua_pop(L, 1);
			if (uv_geti(L, K, UV_TIMERS, session) == LUA_TNIL) {
				uv(L, K, UV_UNKNOWN_RESPONSE);
				lua_pushvalue(L, 4);
				lua_pushvalue(L, 5);
				lua_pushvalue(L, 2);
				lua_pushvalue(L, 3);
				lua_call(L, 4, 0);
				return 0;
			}
			/* a timeout fires: run its function in a pooled coroutine */
			int f = lua_gettop(L);
			lua_pushnil(L);
			uv_seti(L, K, UV_TIMERS, session);
			k->timer_n--;
			if (k->trace_timeouts) {
				lua_pushnil(L);
				uv_seti(L, K, UV_TIMEOUT_TB, session);
			}
			co_get(L, K);
			int co = lua_gettop(L);
			set_running(L, K, k, co);
			lua_pushvalue(L, f);
			bool ok = resume(k, L, lua_tothread(L, co), 1);
			if (ok && is_string(L, -1, "SUSPEND")) {
				lua_pushinteger(L, session);
				uv_set(L, K, UV_FIRED, co);
				lua_pushvalue(L, co);
				uv_seti(L, K, UV_FIRED, session);
				k->fired_n++;
			}
			run(L, K, ok);
			return 0;
		}
		lua_pushnil(L);
		uv_seti(L, K, UV_WAITING, session);
		if (t == LUA_TTHREAD) {
			set_running(L, K, k, 7);
			lua_pushboolean(L, 1);
			lua_pushvalue(L, 2);
			lua_pushvalue(L, 3);
			lua_pushvalue(L, 4);
			bool ok = resume(k, L, lua_tothread(L, 7), 4);
			run(L, K, ok);
		} else if (t == LUA_TTABLE) {
			lua_pushnil(L);
			uv_seti(L, K, UV_WATCHING, session);
			lua_rawgeti(L, 7, 1);
			lua_pushvalue(L, 7);
			lua_pushvalue(L, 4);
			lua_pushboolean(L, 1);
			lua_pushvalue(L, 2);
			lua_pushvalue(L, 3);
			lua_call(L, 5, 0);
			run_queues(L, K);
		}
		return 0; // "BREAK"
	}
	tab(L, K, UV_PROTO);
	lua_pushvalue(L, 1);
	int p = lua_gettop(L) - 1; // 7: proto table, then 8: p
	lua_rawget(L, p);
	p = lua_gettop(L);
	if (lua_isnil(L, p))
		lua_pushnil(L);
	else
		lua_getfield(L, p, "dispatch");
	int f = lua_gettop(L);
	if (lua_isnil(L, f)) {
		if (prototype == PTYPE_TRACE) {
			push_msg_string(L, 2);
			uv_set(L, K, UV_TRACE_SOURCE, 5);
			k->tracing = true;
		} else if (session != 0) {
			send_msg(L, k, 5, PTYPE_ERROR, (int)session, lua_gettop(L) + 1);
		} else {
			uv(L, K, UV_UNKNOWN_REQUEST);
			lua_pushvalue(L, 4);
			lua_pushvalue(L, 5);
			lua_pushvalue(L, 2);
			lua_pushvalue(L, 3);
			lua_pushvalue(L, 1);
			lua_call(L, 5, 0);
		}
		return 0;
	}
	if (lua_tocfunction(L, f) == lerror_dispatch) {
		error_dispatch(L, K, k, session, 5);
		run_queues(L, K);
		return 0;
	}
	if (k->tracing) {
		int t = lua_getfield(L, p, "trace");
		if (t != LUA_TNIL) {
			if (t == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
				lua_pushnil(L);
				uv_set(L, K, UV_TRACE_SOURCE, 5);
			} else {
				if (uv_get(L, K, UV_TRACE_SOURCE, 5) == LUA_TNIL) {
					uv(L, K, UV_S);
					lua_getfield(L, -1, "new_tag");
					lua_call(L, 0, 1);
					uv_set(L, K, UV_TRACE_SOURCE, 5);
					lua_pop(L, 1);
				}
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
	k->unpacking = true;
	int base = lua_gettop(L);
	lua_pushvalue(L, f);
	lua_pushvalue(L, 4);
	lua_pushvalue(L, 5);
	lua_getfield(L, p, "unpack");
	lua_pushvalue(L, 2);
	lua_pushvalue(L, 3);
	lua_call(L, 2, LUA_MULTRET);
	start_request(L, K, k, base);
	return 0;
}

/* Resume the forked coroutines queued during this dispatch. */
static void
run_forks(lua_State *L, int K, struct kernel *k) {
	while (k->fq_h <= k->fq_t) {
		int i = k->fq_h++;
		int base = lua_gettop(L);
		int t = uv_geti(L, K, UV_FQ, i);
		lua_pushnil(L);
		uv_seti(L, K, UV_FQ, i);
		if (t == LUA_TTHREAD) {
			int co = base + 1;
			uv_geti(L, K, UV_FQ_ARGS, i);
			lua_pushnil(L);
			uv_seti(L, K, UV_FQ_ARGS, i);
			set_running(L, K, k, co);
			int nargs = 1;
			if (lua_type(L, -1) == LUA_TTABLE) {
				int args = lua_gettop(L);
				lua_getfield(L, args, "n");
				lua_Integer n = lua_tointeger(L, -1);
				lua_pop(L, 1);
				if (n < 0 || !lua_checkstack(L, (int)n + 8))
					luaL_error(L, "too many results to unpack");
				for (lua_Integer j = 1; j <= n; j++)
					lua_rawgeti(L, args, j);
				lua_remove(L, args);
				nargs = (int)n;
			}
			bool ok = resume(k, L, lua_tothread(L, co), nargs);
			run(L, K, ok);
		}
		lua_settop(L, base);
	}
	if (k->fq_t != 0) {
		k->fq_h = 1;
		k->fq_t = 0;
	}
}

/* skynet.dispatch_message(prototype, msg, sz, session, source) */
static int
ldispatch_message(lua_State *L) {
	lua_settop(L, 5);
	struct kernel *k = kpush(L);
	int K = 6;
	lua_pushcfunction(L, raw_dispatch);
	for (int i = 1; i <= 5; i++)
		lua_pushvalue(L, i);
	if (lua_pcall(L, 5, 0, 0) != LUA_OK) {
		if (k->unpacking) {
			k->unpacking = false;
			lua_Integer session = lua_tointeger(L, 4);
			lua_Integer source = lua_tointeger(L, 5);
			if (session != 0 && source != 0)
				send_msg(L, k, 5, PTYPE_ERROR, (int)session, lua_gettop(L) + 1);
		}
		luaL_tolstring(L, -1, NULL);
		lua_remove(L, -2);
		push_error(L, K);
	}
	if (k->wq_h <= k->wq_t || k->eq_h <= k->eq_t)
		run_queues(L, K); // woken by a hook that ran outside any coroutine
	run_forks(L, K, k);
	if (k->timer_peak >= KERNEL_TIMER_REBUILD && k->timer_n * 4 < k->timer_peak) {
		/* most of a big batch of timeouts is gone: give the table's memory back */
		lua_createtable(L, 0, k->timer_n);
		int t = lua_gettop(L);
		tab(L, K, UV_TIMERS);
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, t);
		}
		lua_pop(L, 1);
		uv(L, K, UV_S);
		if (lua_getfield(L, -1, "timers") != LUA_TNIL) { // S holds it: give S the new one
			lua_pushvalue(L, t);
			lua_setfield(L, -3, "timers");
		}
		lua_pop(L, 2);
		lua_setiuservalue(L, K, UV_TIMERS);
		k->timer_peak = k->timer_n;
	}
	if (uv(L, K, UV_ERRORS) == LUA_TTABLE) {
		int e = lua_gettop(L);
		lua_pushnil(L);
		lua_setiuservalue(L, K, UV_ERRORS);
		luaL_Buffer b;
		luaL_buffinit(L, &b);
		lua_Integer n = (lua_Integer)lua_rawlen(L, e);
		for (lua_Integer i = 1; i <= n; i++) {
			if (i > 1)
				luaL_addchar(&b, '\n');
			lua_rawgeti(L, e, i);
			luaL_addvalue(&b);
		}
		luaL_pushresult(&b);
		return lua_error(L);
	}
	return 0;
}

/* ---- protocols ------------------------------------------------------------ */

static int
lregister_protocol(lua_State *L) {
	lua_settop(L, 1);
	lua_getfield(L, 1, "name"); // 2
	lua_getfield(L, 1, "id");   // 3
	if (lua_type(L, 2) != LUA_TSTRING || !lua_isinteger(L, 3) || lua_tointeger(L, 3) < 0 ||
	    lua_tointeger(L, 3) > 255) {
		lua_pushliteral(L, "skynet.register_protocol: bad name or id");
		return lua_error(L);
	}
	struct kernel *k = kpush(L);
	int K = 4;
	tab(L, K, UV_PROTO); // 5
	lua_pushvalue(L, 2);
	bool taken = lua_rawget(L, 5) != LUA_TNIL;
	lua_pop(L, 1);
	lua_pushvalue(L, 3);
	taken = taken || lua_rawget(L, 5) != LUA_TNIL;
	lua_pop(L, 1);
	if (taken) {
		lua_pushfstring(L, "skynet.register_protocol: already registered (%s)", lua_tostring(L, 2));
		return lua_error(L);
	}
	lua_pushvalue(L, 2);
	lua_pushvalue(L, 1);
	lua_rawset(L, 5);
	lua_pushvalue(L, 3);
	lua_pushvalue(L, 1);
	lua_rawset(L, 5);
	if (lua_getfield(L, 1, "trace") != LUA_TNIL) {
		k->tracing = true;
		lua_getglobal(L, "require"); // forced tracing needs S.new_tag
		lua_pushliteral(L, "skynet.ext.trace");
		lua_call(L, 1, 0);
	}
	return 0;
}

static int
ldispatch(lua_State *L) {
	lua_settop(L, 2);
	kpush(L);
	tab(L, 3, UV_PROTO);
	lua_pushvalue(L, 1);
	lua_rawget(L, 4); // 5: p
	if (lua_toboolean(L, 2)) {
		if (!lua_toboolean(L, 5)) {
			lua_pushliteral(L, "skynet.dispatch: unknown protocol");
			return lua_error(L);
		}
		lua_getfield(L, 5, "dispatch");
		lua_pushvalue(L, 2);
		lua_setfield(L, 5, "dispatch");
		return 1;
	}
	if (!lua_toboolean(L, 5))
		return 1; // p itself (nil or false), as `p and p.dispatch`
	lua_getfield(L, 5, "dispatch");
	return 1;
}

/* Push proto[typename] at idx, or raise "unknown protocol" at the caller's caller. */
static int
get_proto(lua_State *L, int K, int idx) {
	tab(L, K, UV_PROTO);
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

/* ---- send / call ----------------------------------------------------------- */

static bool
is_zero(lua_State *L, int idx) {
	return lua_type(L, idx) == LUA_TNUMBER && lua_tonumber(L, idx) == 0;
}

/* Raise msg located at level (as error(msg, level) from Lua code would). */
static int
error_at(lua_State *L, int level, const char *msg) {
	luaL_where(L, level);
	lua_pushstring(L, msg);
	lua_concat(L, 2);
	return lua_error(L);
}

/* skynet.send(addr, typename, ...) */
static int
lsend(lua_State *L) {
	if (is_zero(L, 1))
		return error_at(L, 1, "Invalid service address 0");
	int n = lua_gettop(L);
	if (n < 2)
		lua_settop(L, 2), n = 2;
	kpush(L);
	int K = n + 1;
	int p = get_proto(L, K, 2);
	int base = lua_gettop(L);
	lua_getfield(L, p, "pack");
	for (int i = 3; i <= n; i++)
		lua_pushvalue(L, i);
	lua_call(L, n - 2, 2);
	lua_getfield(L, p, "id");
	int id = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
	return skynet_push_send_result(L, send_msg(L, lua_touserdata(L, K), 1, id, 0, base + 1));
}

/* new_call(addr at a, id, payload at msg): sends with a fresh session, returns it. */
static int
new_call(lua_State *L, int K, struct kernel *k, int a, int id, int msg, int level) {
	if (is_zero(L, a)) {
		if (!lua_isnoneornil(L, msg + 1))
			trash(L, msg);
		error_at(L, level, "Invalid service address 0");
	}
	if (k->tracing) {
		push_running(L, K);
		if (uv_get(L, K, UV_TRACE_TAG, -1) != LUA_TNIL && lua_toboolean(L, -1)) {
			int tag = lua_gettop(L);
			lua_pushliteral(L, "call ");
			push_address(L, a);
			lua_concat(L, 2);
			call_trace(L, tag, lua_tostring(L, -1));
			lua_pop(L, 1);
			send_msg(L, k, a, PTYPE_TRACE, 0, tag);
		}
		lua_pop(L, 2);
	}
	if (k->wrapped)
		session_guard(L, K, k);
	int session = send_msg(L, k, a, id, -1, msg);
	if (session < 0) {
		lua_pushliteral(L, "call ");
		if (session == SKYNET_ETOOBIG) {
			lua_pushliteral(L, "to ");
			push_address(L, a);
			lua_pushliteral(L, " failed: message too large");
			lua_concat(L, 4);
		} else {
			lua_pushliteral(L, "to invalid address ");
			push_address(L, a);
			lua_concat(L, 3);
		}
		return error_at(L, 1, lua_tostring(L, -1));
	}
	track(k, session);
	return session;
}

/* Register the running thread for a reply on session from addr (at a). */
static void
wait_reply(lua_State *L, int K, int a, lua_Integer session) {
	lua_pushvalue(L, a);
	uv_seti(L, K, UV_WATCHING, session);
	push_running(L, K);
	uv_seti(L, K, UV_WAITING, session);
}

/* After a reply: stack base.. = ok, msg, sz, session. Raises "call failed" on false. */
static void
reply_check(lua_State *L, int K, int base, lua_Integer session) {
	lua_pushnil(L);
	uv_seti(L, K, UV_WATCHING, session);
	if (!lua_toboolean(L, base))
		error_at(L, 1, "call failed");
}

/* Stack: addr, p, session, K, [ok, msg, sz, session] */
static int
call_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(L, 8);
	reply_check(L, 4, 5, lua_tointeger(L, 3));
	lua_getfield(L, 2, "unpack");
	lua_pushvalue(L, 6);
	lua_pushvalue(L, 7);
	lua_call(L, 2, LUA_MULTRET);
	return lua_gettop(L) - 8;
}

/* skynet.call(addr, typename, ...) */
static int
lcall(lua_State *L) {
	int n = lua_gettop(L);
	if (n < 2)
		lua_settop(L, 2), n = 2;
	struct kernel *k = kpush(L);
	int K = n + 1;
	int p = get_proto(L, K, 2);
	int base = lua_gettop(L);
	lua_getfield(L, p, "pack");
	for (int i = 3; i <= n; i++)
		lua_pushvalue(L, i);
	lua_call(L, n - 2, 2);
	lua_getfield(L, p, "id");
	int id = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
	int session = new_call(L, K, k, 1, id, base + 1, 1);
	/* compact to: addr, p, session, K */
	lua_pushvalue(L, 1);
	lua_pushvalue(L, p);
	lua_pushinteger(L, session);
	lua_pushvalue(L, K);
	lua_rotate(L, 1, 4);
	lua_settop(L, 4);
	wait_reply(L, 4, 1, session);
	lua_pushliteral(L, "SUSPEND");
	return lua_yieldk(L, 1, 0, call_k);
}

/* Stack: addr, session, K, [ok, msg, sz, session] */
static int
yield_call_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(L, 7);
	reply_check(L, 3, 4, lua_tointeger(L, 2));
	lua_pushvalue(L, 5);
	lua_pushvalue(L, 6);
	return 2;
}

/* S.yield_call(addr, session) -> msg, sz */
static int
lyield_call(lua_State *L) {
	lua_settop(L, 2);
	kpush(L);
	lua_Integer session = lua_tointeger(L, 2);
	wait_reply(L, 3, 1, session);
	lua_pushliteral(L, "SUSPEND");
	return lua_yieldk(L, 1, 0, yield_call_k);
}

/* S.new_call(addr, id, msg, sz) -> session */
static int
lnew_call(lua_State *L) {
	lua_settop(L, 4);
	struct kernel *k = kpush(L);
	int id = (int)luaL_checkinteger(L, 2);
	lua_pushinteger(L, new_call(L, 5, k, 1, id, 3, 2));
	return 1;
}

/* ret(msg, sz) with the payload at 1, 2 */
static int
ret(lua_State *L) {
	lua_settop(L, 2);
	struct kernel *k = kpush(L);
	int K = 3;
	push_running(L, K); // 4
	if (uv_get(L, K, UV_REQ_SESSION, 4) == LUA_TNIL) {
		if (!lua_isnil(L, 2))
			trash(L, 1); // ret owns the buffer on every path
		return error_at(L, 1, "No session");
	}
	lua_Integer session = lua_tointeger(L, 5);
	lua_pushnil(L);
	uv_set(L, K, UV_REQ_SESSION, 4);
	if (session == 0) {
		if (!lua_isnil(L, 2))
			trash(L, 1);
		lua_pushboolean(L, 0);
		return 1;
	}
	uv_get(L, K, UV_REQ_SOURCE, 4); // 6
	if (lua_isnil(L, 1)) {
		lua_pushliteral(L, "");
		lua_replace(L, 1);
	}
	int r = send_msg(L, k, 6, PTYPE_RESPONSE, (int)session, 1);
	if (r >= 0) {
		lua_pushboolean(L, 1);
		return 1;
	}
	if (r == SKYNET_ETOOBIG)
		send_error(k, lua_tointeger(L, 6), session);
	lua_pushboolean(L, 0);
	return 1;
}

static int
lret(lua_State *L) {
	return ret(L);
}

static int
lretpack(lua_State *L) {
	luaseri_pack(L);
	lua_rotate(L, 1, 2);
	return ret(L);
}

static int
lgenid(lua_State *L) {
	struct kernel *k = kpush(L);
	if (k->wrapped)
		session_guard(L, lua_gettop(L), k);
	int session = genid(k);
	track(k, session);
	lua_pushinteger(L, session);
	return 1;
}

static int
lself(lua_State *L) {
	struct kernel *k = kpush(L);
	if (k->self == 0) {
		const char *r = skynet_command(k->ctx, "REG", NULL);
		if (r == NULL || r[0] != ':') {
			lua_pushnil(L);
			return 1;
		}
		k->self = (uint32_t)strtoul(r + 1, NULL, 16);
	}
	lua_pushinteger(L, k->self);
	return 1;
}

static int
laddress(lua_State *L) {
	lua_settop(L, 1);
	push_address(L, 1);
	return 1;
}

/* ---- timers ---------------------------------------------------------------- */

static int
results_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	return lua_gettop(L) - (int)ctx;
}

/* The timer function of a callable that is not a function: calls it with no arguments. */
static int
call_upvalue(lua_State *L) {
	int base = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_callk(L, 0, LUA_MULTRET, base, results_k);
	return results_k(L, LUA_OK, base);
}

/* skynet.timeout(ti, func) -> timer object */
static int
ltimeout(lua_State *L) {
	lua_settop(L, 2);
	struct kernel *k = kpush(L);
	int K = 3;
	if (lua_type(L, 2) != LUA_TFUNCTION) {
		lua_pushvalue(L, 2);
		lua_pushcclosure(L, call_upvalue, 1);
		lua_replace(L, 2);
	}
	int session = arm_timer(L, K, k, 1);
	lua_pushvalue(L, 2);
	uv_seti(L, K, UV_TIMERS, session);
	if (++k->timer_n > k->timer_peak)
		k->timer_peak = k->timer_n;
	if (k->trace_timeouts) {
		luaL_traceback(L, L, NULL, 0);
		uv_seti(L, K, UV_TIMEOUT_TB, session);
	}
	lua_pushlightuserdata(L, (void *)(intptr_t)session);
	return 1;
}

/* Default token: the running coroutine. Stack: ti|nil, token -> token at 2. */
static void
default_token(lua_State *L) {
	if (!lua_toboolean(L, 2)) {
		lua_pushthread(L);
		lua_replace(L, 2);
	}
}

static void
check_token(lua_State *L, int K) {
	if (uv_get(L, K, UV_SLEEP_SESSION, 2) != LUA_TNIL && lua_toboolean(L, -1))
		error_at(L, 1, "token duplicative");
	lua_pop(L, 1);
}

/* Forget token's session when it is still s (at idx). */
static void
clear_token(lua_State *L, int K, int token, int s) {
	uv_get(L, K, UV_SLEEP_SESSION, token);
	if (lua_rawequal(L, -1, s)) {
		lua_pushnil(L);
		uv_set(L, K, UV_SLEEP_SESSION, token);
	}
	lua_pop(L, 1);
}

/* Stack: ti, token, K, session, [ok, err] */
static int
sleep_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(L, 6);
	clear_token(L, 3, 2, 4);
	if (lua_toboolean(L, 5))
		return 0;
	if (is_string(L, 6, "BREAK"))
		return 1;
	lua_pushvalue(L, 6);
	if (lua_type(L, -1) == LUA_TSTRING) {
		luaL_where(L, 1);
		lua_insert(L, -2);
		lua_concat(L, 2);
	}
	return lua_error(L);
}

/* skynet.sleep(ti, token) */
static int
lsleep(lua_State *L) {
	lua_settop(L, 2);
	default_token(L);
	struct kernel *k = kpush(L);
	int K = 3;
	check_token(L, K);
	int session = arm_timer(L, K, k, 1);
	lua_pushinteger(L, session); // 4
	lua_pushvalue(L, 4);
	uv_set(L, K, UV_SLEEP_SESSION, 2);
	push_running(L, K);
	uv_seti(L, K, UV_WAITING, session);
	lua_pushliteral(L, "SUSPEND");
	return lua_yieldk(L, 1, 0, sleep_k);
}

/* Stack: token, token, K, -session, [...] */
static int
wait_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(L, 4);
	clear_token(L, 3, 2, 4);
	return 0;
}

/* skynet.wait(token) */
static int
lwait(lua_State *L) {
	lua_settop(L, 1);
	lua_pushvalue(L, 1);
	default_token(L);
	struct kernel *k = kpush(L);
	int K = 3;
	check_token(L, K);
	if (k->wrapped)
		session_guard(L, K, k);
	int session = genid(k);
	track(k, session);
	lua_pushinteger(L, -(lua_Integer)session); // 4
	lua_pushvalue(L, 4);
	uv_set(L, K, UV_SLEEP_SESSION, 2);
	push_running(L, K);
	uv_seti(L, K, UV_WAITING, session);
	lua_pushliteral(L, "SUSPEND");
	return lua_yieldk(L, 1, 0, wait_k);
}

/* skynet.wakeup(token) -> true | nothing */
static int
lwakeup(lua_State *L) {
	lua_settop(L, 1);
	struct kernel *k = kpush(L);
	int K = 2;
	if (uv_get(L, K, UV_SLEEP_SESSION, 1) != LUA_TNIL && lua_toboolean(L, -1)) {
		int s = lua_gettop(L);
		lua_pushnil(L);
		uv_set(L, K, UV_SLEEP_SESSION, 1);
		lua_pushvalue(L, s);
		uv_set(L, K, UV_WOKEN, 1);
		int t = ++k->wq_t;
		lua_pushvalue(L, s);
		uv_seti(L, K, UV_WQ, t);
		lua_pushvalue(L, 1);
		uv_seti(L, K, UV_WQ_TOKEN, t);
		lua_pushboolean(L, 1);
		return 1;
	}
	if (uv_get(L, K, UV_WOKEN, 1) != LUA_TNIL && lua_toboolean(L, -1)) {
		lua_pushboolean(L, 1); // woken already, not resumed yet
		return 1;
	}
	return 0;
}

/* skynet.fork(func, ...) -> co */
static int
lfork(lua_State *L) {
	int n = lua_gettop(L);
	if (n == 0)
		lua_settop(L, 1), n = 1;
	struct kernel *k = kpush(L);
	int K = n + 1;
	co_get(L, K);
	int co = lua_gettop(L);
	int t = ++k->fq_t;
	lua_pushvalue(L, co);
	uv_seti(L, K, UV_FQ, t);
	if (n > 1 || lua_type(L, 1) != LUA_TFUNCTION) {
		lua_createtable(L, n, 1);
		for (int i = 1; i <= n; i++) {
			lua_pushvalue(L, i);
			lua_rawseti(L, -2, i);
		}
		lua_pushinteger(L, n);
		lua_setfield(L, -2, "n");
	} else {
		lua_pushvalue(L, 1);
	}
	uv_seti(L, K, UV_FQ_ARGS, t);
	lua_pushvalue(L, co);
	return 1;
}

/* ---- start ------------------------------------------------------------------ */

/* The xpcall handler of init_service: the error with the stack from where it was raised. */
static int
init_traceback(lua_State *L) {
	if (lua_type(L, 1) != LUA_TSTRING && !lua_isnoneornil(L, 1))
		return 1; // debug.traceback leaves other values alone
	luaL_traceback(L, L, lua_tostring(L, 1), 1);
	return 1;
}

static int
init_body_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	if (ctx == 0) {
		lua_pushvalue(L, 1);
		lua_callk(L, 0, 0, 1, init_body_k);
	}
	return 0;
}

/* Protected body: skynet.require's init_all, then the start function (at 1). */
static int
init_body(lua_State *L) {
	kpush(L);
	uv(L, lua_gettop(L), UV_REQUIRE);
	lua_getfield(L, -1, "init_all");
	lua_callk(L, 0, 0, 0, init_body_k);
	return init_body_k(L, LUA_OK, 0);
}

static int
quit_k(lua_State *L, int status, lua_KContext ctx) {
	(void)L;
	(void)status;
	(void)ctx;
	return 0;
}

/* Stack: start, K, S, handler, [error] */
static int
init_done(lua_State *L, int status, lua_KContext ctx) {
	(void)ctx;
	struct kernel *k = lua_touserdata(L, 2);
	lua_pushnil(L);
	lua_setiuservalue(L, 2, UV_INIT_THREAD);
	if (status == LUA_OK || status == LUA_YIELD) {
		lua_settop(L, 3);
		lua_pushcfunction(L, lsend);
		lua_pushliteral(L, ".launcher");
		lua_pushliteral(L, "lua");
		lua_pushliteral(L, "LAUNCHOK");
		lua_call(L, 3, 0);
		return 0;
	}
	const char *err = luaL_tolstring(L, -1, NULL);
	skynet_error(k->ctx, "init service failed: %s", err);
	if (skynet_command(k->ctx, "QUERY", ".launcher") == NULL) {
		/* Started before the launcher: the bootstrap, or the launcher itself. */
		skynet_error(
		    k->ctx,
		    "error: the node cannot start without this service; stopping with exit status 1");
		skynet_command(k->ctx, "ABORT", "1");
		return 0;
	}
	lua_settop(L, 3);
	lua_pushcfunction(L, lsend);
	lua_pushliteral(L, ".launcher");
	lua_pushliteral(L, "lua");
	lua_pushliteral(L, "ERROR");
	lua_call(L, 3, 0);
	uv(L, 2, UV_SKYNET);
	lua_getfield(L, -1, "exit");
	lua_callk(L, 0, 0, 0, quit_k);
	return 0;
}

/* skynet.init_service(start) */
static int
linit_service(lua_State *L) {
	lua_settop(L, 1);
	struct kernel *k = kpush(L); // 2
	(void)k;
	uv(L, 2, UV_S); // 3
	push_running(L, 2);
	lua_setiuservalue(L, 2, UV_INIT_THREAD);
	lua_pushcfunction(L, init_traceback); // 4
	lua_pushcfunction(L, init_body);
	lua_pushvalue(L, 1);
	int status = lua_pcallk(L, 1, 0, 4, 0, init_done);
	return init_done(L, status, 0);
}

/* The job of the start timer: init_service(upvalue 1). */
static int
start_job(lua_State *L) {
	lua_pushcfunction(L, linit_service);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_callk(L, 1, 0, 0, quit_k);
	return 0;
}

/* skynet.start(start_func) */
static int
lstart(lua_State *L) {
	lua_settop(L, 1);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "skynet.core");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, "callback");
	lua_pushcfunction(L, ldispatch_message);
	lua_call(L, 1, 0);
	lua_settop(L, 1);
	lua_pushcfunction(L, ltimeout);
	lua_pushinteger(L, 0);
	lua_pushvalue(L, 1);
	lua_pushcclosure(L, start_job, 1);
	lua_call(L, 2, 0);
	return 0;
}

/* The debug protocol: loads skynet.debug on the first request, then hands over. */
static int
ldebug_dispatch(lua_State *L) {
	int n = lua_gettop(L);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "skynet.debug");
	lua_call(L, 1, 0);
	kpush(L);
	tab(L, lua_gettop(L), UV_PROTO);
	lua_getfield(L, -1, "debug");
	lua_getfield(L, -1, "dispatch");
	lua_replace(L, n + 1);
	lua_settop(L, n + 1);
	lua_insert(L, 1);
	lua_callk(L, n, LUA_MULTRET, 0, results_k);
	return lua_gettop(L);
}

static int
lidentity(lua_State *L) {
	return lua_gettop(L);
}

/* ---- internals for the lazy parts ---------------------------------------------- */

static int
ltimer_object(lua_State *L) {
	lua_pushlightuserdata(L, (void *)(intptr_t)luaL_checkinteger(L, 1));
	return 1;
}

static int
lrunning(lua_State *L) {
	kpush(L);
	push_running(L, lua_gettop(L));
	return 1;
}

static int
lco_finished(lua_State *L) {
	lua_settop(L, 1);
	struct kernel *k = kpush(L);
	co_finished(L, 2, k, 1);
	return 0;
}

/*
 * S.set(what, value): "tracing", "trace_timeouts", "timer_gone" (a pending
 * timeout was removed by hand), "unknown_request" and "unknown_response"
 * (returns the hook it replaced).
 */
static int
lset(lua_State *L) {
	lua_settop(L, 2);
	struct kernel *k = kpush(L);
	const char *what = lua_tostring(L, 1);
	if (what == NULL)
		return 0;
	if (strcmp(what, "tracing") == 0) {
		k->tracing = lua_toboolean(L, 2);
	} else if (strcmp(what, "trace_timeouts") == 0) {
		k->trace_timeouts = lua_toboolean(L, 2);
	} else if (strcmp(what, "timer_gone") == 0) {
		k->timer_n--;
	} else if (strcmp(what, "unknown_request") == 0 || strcmp(what, "unknown_response") == 0) {
		int slot = strcmp(what, "unknown_request") == 0 ? UV_UNKNOWN_REQUEST : UV_UNKNOWN_RESPONSE;
		uv(L, 3, slot);
		lua_pushvalue(L, 2);
		lua_setiuservalue(L, 3, slot);
		return 1;
	}
	return 0;
}

/* ---- the skynet table and S, filled on first use ---------------------------------- */

/* The kernel's functions of the skynet table (LAZY letter K). */
static const luaL_Reg KERNEL_FUNCS[] = {
    {"register_protocol", lregister_protocol},
    {"dispatch", ldispatch},
    {"dispatch_message", ldispatch_message},
    {"send", lsend},
    {"call", lcall},
    {"ret", lret},
    {"retpack", lretpack},
    {"genid", lgenid},
    {"self", lself},
    {"address", laddress},
    {"timeout", ltimeout},
    {"sleep", lsleep},
    {"wait", lwait},
    {"wakeup", lwakeup},
    {"fork", lfork},
    {"init_service", linit_service},
    {"start", lstart},
    {NULL, NULL},
};

/* The functions of S (skynet.private). */
static const luaL_Reg PRIVATE_FUNCS[] = {
    {"timer_object", ltimer_object},
    {"yield_call", lyield_call},
    {"new_call", lnew_call},
    {"error_dispatch", lerror_dispatch},
    {"co_finished", lco_finished},
    {"running", lrunning},
    {"set", lset},
    {NULL, NULL},
};

static const struct {
	const char *name;
	int id;
} PTYPES[] = {
    {"PTYPE_TEXT", 0},   {"PTYPE_RESPONSE", 1}, {"PTYPE_MULTICAST", 2}, {"PTYPE_CLIENT", 3},
    {"PTYPE_SYSTEM", 4}, {"PTYPE_HARBOR", 5},   {"PTYPE_SOCKET", 6},    {"PTYPE_ERROR", 7},
    {"PTYPE_QUEUE", 8},  {"PTYPE_DEBUG", 9},    {"PTYPE_LUA", 10},      {"PTYPE_SNAX", 11},
    {"PTYPE_TRACE", 12},
};

/* S field name of each state table, in UV order (NULL: not shared). */
static const char *const TABLE_NAMES[] = {
    "waiting",       "timers",      "watching",   "req_session",  "req_source",
    "sleep_session", "unresponse",  "fired",      "trace_tag",    "trace_source",
    "timeout_tb",    "pool",        "proto",      "wakeup_queue", NULL /* wq_token */,
    "woken",         NULL /* eq */, "fork_queue", "fork_args",
};

static lua_CFunction
find_func(const luaL_Reg *reg, const char *name) {
	for (; reg->name != NULL; reg++) {
		if (strcmp(reg->name, name) == 0)
			return reg->func;
	}
	return NULL;
}

/* The LAZY letter of name, or 0. */
static char
lazy_letter(const char *name, size_t len) {
	if (len == 0 || memchr(name, ' ', len) != NULL || memchr(name, '=', len) != NULL ||
	    memchr(name, '\0', len) != NULL)
		return 0;
	for (const char *p = strstr(LAZY, name); p != NULL; p = strstr(p + 1, name)) {
		if (p[-1] == ' ' && p[len] == '=')
			return p[len + 1];
	}
	return 0;
}

/*
 * __index(t, k) of the skynet table: the kernel's functions, the PTYPE_*
 * constants, _proto and private are stored on first use; a name of a lazy
 * module loads the module, then returns rawget(t, k).
 */
static int
llazy_index(lua_State *L) {
	lua_settop(L, 2);
	if (lua_type(L, 2) != LUA_TSTRING)
		return 0;
	size_t len;
	const char *name = lua_tolstring(L, 2, &len);
	kpush(L); // 3
	char letter = lazy_letter(name, len);
	switch (letter) {
	case 0:
		if (strncmp(name, "PTYPE_", 6) == 0) {
			for (size_t i = 0; i < sizeof(PTYPES) / sizeof(PTYPES[0]); i++) {
				if (strcmp(PTYPES[i].name, name) == 0) {
					lua_pushinteger(L, PTYPES[i].id);
					break;
				}
			}
		} else if (strcmp(name, "_proto") == 0) {
			tab(L, 3, UV_PROTO);
		} else if (strcmp(name, "private") == 0) {
			uv(L, 3, UV_S);
		}
		if (lua_gettop(L) == 3)
			return 0;
		break;
	case 'K':
		lua_pushcfunction(L, find_func(KERNEL_FUNCS, name));
		break;
	case 'C':
	case 'G':
	case 'R':
		return 0; // stored when the table was made (a removed one stays removed)
	default: {
		const char *m = lazy_module(letter);
		if (m == NULL)
			return 0;
		/* Under snlua's memory grant: a service at its limit can still use a
		 * function it has not loaded yet (skynet.exit above all). */
		if (uv(L, 3, UV_GRANTED) != LUA_TNIL) {
			lua_getglobal(L, "require");
			lua_pushstring(L, m);
			lua_call(L, 2, 1);
		} else {
			lua_pop(L, 1);
			lua_getglobal(L, "require");
			lua_pushstring(L, m);
			lua_call(L, 1, 1);
		}
		if (strcmp(name, "cache") == 0) {
			lua_pushvalue(L, 2);
			lua_pushvalue(L, -2);
			lua_rawset(L, 1);
		}
		lua_pushvalue(L, 2);
		lua_rawget(L, 1); // 5
		if (lua_type(L, 5) == LUA_TFUNCTION && uv(L, 3, UV_FRAMEWORK) != LUA_TNIL) {
			lua_pushvalue(L, 5);
			lua_pcall(L, 1, 0, 0); // with every slot taken it stays unmarked
		}
		lua_settop(L, 5);
		return 1;
	}
	}
	lua_pushvalue(L, 2);
	lua_pushvalue(L, -2);
	lua_rawset(L, 1);
	return 1;
}

/* __index(S, k): state tables and functions on first use; S.init_thread. */
static int
lprivate_index(lua_State *L) {
	lua_settop(L, 2);
	if (lua_type(L, 2) != LUA_TSTRING)
		return 0;
	const char *name = lua_tostring(L, 2);
	kpush(L); // 3
	if (strcmp(name, "init_thread") == 0) {
		uv(L, 3, UV_INIT_THREAD); // changes: not stored in S
		return 1;
	}
	if (strcmp(name, "last_will") == 0) {
		lua_pushvalue(L, 3);
	} else {
		for (int v = UV_WAITING; v <= UV_FQ_ARGS; v++) {
			const char *n = TABLE_NAMES[v - UV_WAITING];
			if (n != NULL && strcmp(n, name) == 0) {
				tab(L, 3, v);
				break;
			}
		}
		if (lua_gettop(L) == 3) {
			lua_CFunction f = find_func(PRIVATE_FUNCS, name);
			if (f == NULL)
				return 0;
			lua_pushcfunction(L, f);
		}
	}
	lua_pushvalue(L, 2);
	lua_pushvalue(L, -2);
	lua_rawset(L, 1);
	return 1;
}

/* ---- last will ---------------------------------------------------------------- */

/* __gc of the kernel: fail the requests a killed service never answered. */
static int
last_will(lua_State *L) {
	struct kernel *k = lua_touserdata(L, 1);
	if (uv(L, 1, UV_S) != LUA_TTABLE)
		return 0;
	lua_pushliteral(L, "exited");
	lua_rawget(L, -2);
	bool exited = lua_toboolean(L, -1);
	lua_settop(L, 1);
	if (exited)
		return 0;
	/* no table is made here: one never used is empty */
	if (tab_if(L, 1, UV_REQ_SESSION) && tab_if(L, 1, UV_REQ_SOURCE)) { // 2, 3
		lua_pushnil(L);
		while (lua_next(L, 2)) {
			lua_Integer session = lua_tointeger(L, -1);
			lua_pushvalue(L, -2);
			if (lua_rawget(L, 3) == LUA_TNUMBER && session != 0)
				send_error(k, lua_tointeger(L, -1), session);
			lua_pop(L, 2);
		}
	}
	lua_settop(L, 1);
	if (!tab_if(L, 1, UV_UNRESPONSE)) // 2
		return 0;
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_pushboolean(L, 0);
		lua_pcall(L, 1, 0, 0);
		lua_settop(L, 3); // the key stays for lua_next (an error object is dropped)
	}
	return 0;
}

/* ---- building ------------------------------------------------------------------ */

static void
register_builtin(lua_State *L, int core, const char *name, int id, lua_CFunction dispatch,
                 lua_CFunction unpack) {
	lua_pushcfunction(L, lregister_protocol);
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

/* Push module name (require). */
static void
push_required(lua_State *L, const char *name) {
	lua_getglobal(L, "require");
	lua_pushstring(L, name);
	lua_call(L, 1, 1);
}

/*
 * Push the kernel userdata of a new state and S (at the index returned + 1).
 * skynet.core is at index 1, skynet.require at 2, snlua's framework and
 * granted hooks (or nil) at 3 and 4.
 */
static int
create_kernel(lua_State *L) {
	struct kernel *k = lua_newuserdatauv(L, sizeof(*k), UV_COUNT);
	memset(k, 0, sizeof(*k));
	int K = lua_gettop(L);
	lua_getfield(L, LUA_REGISTRYINDEX, "skynet_context");
	k->ctx = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (k->ctx == NULL)
		return luaL_error(L, "skynet.kernel: no skynet_context in the registry (not in a service)");
	if (lua_getfield(L, LUA_REGISTRYINDEX, "snlua.resume") == LUA_TLIGHTUSERDATA)
		k->host = lua_touserdata(L, -1);
	lua_pop(L, 1);
	k->wq_h = k->eq_h = k->fq_h = 1;
	lua_createtable(L, 0, 1); // metatable: __gc is the last will
	lua_pushcfunction(L, last_will);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, K);
	lua_newtable(L); // S, filled on first use
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, lprivate_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, K, UV_S);
	lua_pushvalue(L, 2);
	lua_setiuservalue(L, K, UV_REQUIRE);
	lua_pushvalue(L, 3);
	lua_setiuservalue(L, K, UV_FRAMEWORK);
	lua_pushvalue(L, 4);
	lua_setiuservalue(L, K, UV_GRANTED);
	lua_pushcfunction(L, lunknown_message);
	lua_setiuservalue(L, K, UV_UNKNOWN_REQUEST);
	lua_pushcfunction(L, lunknown_message);
	lua_setiuservalue(L, K, UV_UNKNOWN_RESPONSE);
	lua_pushvalue(L, K);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &KERNEL_KEY);
	lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_pushvalue(L, -2);
	lua_setfield(L, -2, "skynet.private");
	lua_pop(L, 1);
	return K;
}

/* The built-in protocols: lua, response, error, debug. */
static void
register_builtins(lua_State *L) {
	register_builtin(L, 1, "lua", PTYPE_LUA, NULL, NULL);
	register_builtin(L, 1, "response", PTYPE_RESPONSE, NULL, NULL);
	register_builtin(L, 1, "error", PTYPE_ERROR, lerror_dispatch, lidentity);
	register_builtin(L, 1, "debug", PTYPE_DEBUG, ldebug_dispatch, NULL);
}

/*
 * require "skynet.kernel" -> the skynet table, once per state (lualib/skynet.lua
 * returns it). It takes skynet.core, skynet.require and, under snlua, the
 * hooks of skynet.snlua (framework marking for the lazy parts, the memory
 * grant they load under). Apart from ten functions copied at once, its
 * __index stores each name on first use (LAZY), so a service holds only the
 * names it uses.
 */
LUAMOD_API int
luaopen_skynet_kernel(lua_State *L) {
	luaL_checkversion(L);
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &KERNEL_KEY) != LUA_TNIL)
		return luaL_error(L, "skynet.kernel: built already in this state");
	lua_settop(L, 0);
	push_required(L, "skynet.core");    // 1
	push_required(L, "skynet.require"); // 2
	lua_pushnil(L);                     // 3: framework
	lua_pushnil(L);                     // 4: granted
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "preload");
	if (lua_getfield(L, -1, "skynet.snlua") != LUA_TNIL) {
		push_required(L, "skynet.snlua");
		lua_getfield(L, -1, "framework");
		lua_replace(L, 3);
		lua_getfield(L, -1, "granted");
		lua_replace(L, 4);
	}
	lua_settop(L, 4);
	int K = create_kernel(L);
	lua_settop(L, K);
	register_builtins(L);
	/* The skynet table. Copied now, as they are when skynet loads (a later
	 * change of skynet.core does not show): skynet.core's functions, pcall,
	 * skynet.require's init; their names exist in the state already. */
	lua_createtable(L, 0, 10);
	static const char *const copied[] = {
	    "pack", "packstring", "unpack", "tostring", "trash", "error", "now", "hpc",
	};
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		lua_getfield(L, 1, copied[i]);
		lua_setfield(L, -2, copied[i]);
	}
	lua_getglobal(L, "pcall");
	lua_setfield(L, -2, "pcall");
	lua_getfield(L, 2, "init");
	lua_setfield(L, -2, "init");
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, llazy_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, K, UV_SKYNET);
	return 1;
}
