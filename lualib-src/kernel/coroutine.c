/*
 * skynet.kernel, the coroutine pool: how a job runs and ends.
 *
 * Owns: UV_POOL (parked coroutines, weak: the collector may take them), the
 * tail of the fork queue (UV_FQ, UV_FQ_ARGS, k->fq_t; run.c runs it), the end
 * of a coroutine's request: its UV_REQ_SESSION and UV_REQ_SOURCE entries are
 * cleared when its job returns or dies, its UV_FIRED pair and trace record
 * (trace.c) when it stops for good (k->fired_n counts the pairs).
 * S.tag and S.set_tag read and set the running coroutine's trace tag
 * (skynet.tracetag); S.new_tag makes a tag (a new trace id). S.parked lists
 * the pool (tests, diagnostics).
 * Reads: k->host (the resume to use), k->tracing, k->self.
 *
 * A pooled coroutine's body is co_body, a C function: the first resume
 * passes the job (f, args...), it calls f(args...) with lua_callk; when f
 * returns (co_done) it warns when a request went unanswered, forgets the
 * fired timeout and trace tag, parks itself in the pool and yields "EXIT",
 * waiting for the next job. An error in f kills the coroutine (co_error logs
 * it, fails its request and closes it).
 * Yield protocol (first yielded value): "SUSPEND" blocked, registered first;
 * "QUIT" skynet.exit, the dispatcher closes the coroutine; "EXIT" the job is
 * done; nothing or nil: suspended for good. Anything else is an error.
 *
 * Resumes go through the host's accounting resume when snlua publishes one
 * (registry "snlua.resume", a struct kernel_resume), so that skynet.profile
 * and the signal trap see framework coroutines; plain lua_resume otherwise.
 * While a traced coroutine runs, skynet.pack leaves room for the trace
 * trailer its sends append (luaseri_room, 0 again after the resume).
 */

#include "kernel.h"
#include "../lua-seri.h"
#include "../lua-skynet.h"
#include "../lua-span.h"

#include <lauxlib.h>

#include <stdio.h>
#include <string.h>

int
kernel_close_thread(lua_State *co, lua_State *from) {
#if LUA_VERSION_RELEASE_NUM >= 50406
	return lua_closethread(co, from);
#else
	(void)from;
	return lua_resetthread(co);
#endif
}

/* Forget the fired timeout of the coroutine at idx (both directions of the pair). */
static void
forget_fired(lua_State *L, int K, struct kernel *k, int idx) {
	if (kernel_get(L, K, UV_FIRED, idx) != LUA_TNIL) {
		int s = lua_absindex(L, -1);
		lua_pushnil(L);
		kernel_set(L, K, UV_FIRED, idx);
		lua_pushnil(L);
		kernel_set(L, K, UV_FIRED, s);
		k->fired_n--;
	}
	lua_pop(L, 1);
}

void
kernel_co_finished(lua_State *L, int K, struct kernel *k, int idx, bool failed) {
	idx = lua_absindex(L, idx);
	if (k->fired_n > 0)
		forget_fired(L, K, k, idx);
	if (k->traced_n > 0)
		kernel_trace_end(L, k, lua_tothread(L, idx), failed);
}

static int co_body(lua_State *co);

static int
co_next(lua_State *co, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	return co_body(co);
}

/* Stack of a coroutine whose job returned: the job, the kernel, the thread itself. */
enum { CO_JOB = 1, CO_KERNEL, CO_SELF, CO_SOURCE, CO_SESSION };

/* The job returned with its request still owed: clear it, warn when a reply was due. */
static void
check_unanswered(lua_State *co, struct kernel *k) {
	if (kernel_get(co, CO_KERNEL, UV_REQ_SOURCE, CO_SELF) == LUA_TNIL)
		return;
	kernel_get(co, CO_KERNEL, UV_REQ_SESSION, CO_SELF);
	lua_pushnil(co);
	kernel_set(co, CO_KERNEL, UV_REQ_SESSION, CO_SELF);
	lua_pushnil(co);
	kernel_set(co, CO_KERNEL, UV_REQ_SOURCE, CO_SELF);
	if (lua_isnil(co, CO_SESSION) || kernel_is_zero(co, CO_SESSION) ||
	    lua_type(co, CO_JOB) != LUA_TFUNCTION)
		return;
	lua_Debug ar;
	lua_pushvalue(co, CO_JOB);
	lua_getinfo(co, ">S", &ar);
	const char *s = luaL_tolstring(co, CO_SESSION, NULL);
	const char *from = kernel_push_address(co, CO_SOURCE);
	lua_pushfstring(co, "Maybe forgot response session %s from %s : %s:%d", s, from, ar.short_src,
	                ar.linedefined);
	skynet_error(k->ctx, "%s", lua_tostring(co, -1));
}

/* The job f (at CO_JOB) returned: the request check, bookkeeping, back to the pool. */
static int
co_done(lua_State *co, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(co, CO_JOB);
	struct kernel *k = kernel_push(co);
	lua_pushthread(co);
	check_unanswered(co, k);
	lua_settop(co, CO_SELF);
	if (k->fired_n > 0 || k->traced_n > 0)
		kernel_co_finished(co, CO_KERNEL, k, CO_SELF, false);
	kernel_tab(co, CO_KERNEL, UV_POOL);
	lua_pushvalue(co, CO_SELF);
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
	lua_pushvalue(co, CO_JOB);
	lua_insert(co, CO_JOB + 1); // f stays at CO_JOB for the checks after it returns
	lua_callk(co, n - 1, 0, 0, co_done);
	return co_done(co, LUA_OK, 0);
}

lua_State *
kernel_co_get(lua_State *L, int K) {
	kernel_tab(L, K, UV_POOL);
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
	struct kernel *k = lua_touserdata(L, K);
	if (k->traced_n > 0)
		kernel_trace_forget(k, co); // a traced coroutine collected unfinished had this address
	lua_pushcfunction(co, co_body);
	return co;
}

/* kernel_resume through snlua's accounting resume. */
static bool
host_resume(struct kernel *k, lua_State *L, lua_State *co, int narg) {
	int n = k->host->resume(L, co, narg);
	if (n < 0)
		return false;
	if (n == 0)
		lua_pushnil(L);
	else
		lua_pop(L, n - 1);
	return true;
}

static bool
resume(struct kernel *k, lua_State *L, lua_State *co, int narg) {
	if (k->host != NULL)
		return host_resume(k, L, co, narg);
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

bool
kernel_resume(struct kernel *k, lua_State *L, lua_State *co, int narg) {
	if (k->traced_n == 0)
		return resume(k, L, co, narg);
	/* Resumes never nest (only the dispatch level resumes): set, then clear. */
	luaseri_room = kernel_trace_room(k, co);
	bool ok = resume(k, L, co, narg);
	luaseri_room = 0;
	return ok;
}

/* Forget the request the coroutine at idx serves; true, with its source and
 * session, when a caller waits for its answer. */
static bool
take_request(lua_State *L, int K, int idx, lua_Integer *source, lua_Integer *session) {
	idx = lua_absindex(L, idx);
	bool waits = false;
	if (kernel_get(L, K, UV_REQ_SESSION, idx) != LUA_TNIL) {
		*session = lua_tointeger(L, -1);
		if (kernel_get(L, K, UV_REQ_SOURCE, idx) != LUA_TNIL && *session != 0) {
			*source = lua_tointeger(L, -1);
			waits = true;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_pushnil(L);
	kernel_set(L, K, UV_REQ_SESSION, idx);
	lua_pushnil(L);
	kernel_set(L, K, UV_REQ_SOURCE, idx);
	return waits;
}

void
kernel_co_fail_request(lua_State *L, int K, struct kernel *k, int idx, const char *reason) {
	lua_Integer source, session;
	if (!take_request(L, K, idx, &source, &session))
		return;
	if (reason != NULL)
		kernel_send_reason(k, source, session, reason);
	else
		kernel_send_error(k, source, session);
}

bool
kernel_is_call_failed(const char *msg) {
	static const char suffix[] = "call failed";
	size_t len = strlen(msg);
	return len >= sizeof(suffix) - 1 && strcmp(msg + len - (sizeof(suffix) - 1), suffix) == 0;
}

const char *
kernel_co_cause(lua_State *L, int idx, const char *msg) {
	idx = lua_absindex(L, idx);
	if (!kernel_is_call_failed(msg))
		return NULL;
	if (kernel_reason_get(L, idx) != LUA_TSTRING) {
		lua_pop(L, 1);
		return NULL;
	}
	lua_pushnil(L);
	kernel_reason_set(L, idx);
	return lua_tostring(L, -1);
}

void
kernel_co_error(lua_State *L, int K, struct kernel *k, int idx, int err) {
	idx = lua_absindex(L, idx);
	int top = lua_gettop(L);
	lua_State *co = lua_tothread(L, idx);
	const char *msg = luaL_tolstring(L, err, NULL);
	const char *cause = kernel_co_cause(L, idx, msg);
	if (cause != NULL)
		lua_pushfstring(L, "%s (%s)", msg, cause); // the cause was logged where it was raised
	else
		skynet_push_traceback(L, co, msg, 0);
	kernel_push_error(L, K);
	lua_Integer source, session;
	if (take_request(L, K, idx, &source, &session)) // answered once the error is logged
		kernel_defer_error_reply(L, K, source, session, cause != NULL ? cause : msg);
	lua_settop(L, top);
	kernel_co_finished(L, K, k, idx, true);
	kernel_close_thread(co, L);
}

/* S.tag() -> the trace tag of the running coroutine (nil: none). */
int
kernel_ltag(lua_State *L) {
	lua_settop(L, 0);
	struct kernel *k = kernel_push(L);
	kernel_push_tag(L, k, k->running);
	return 1;
}

/* S.set_tag(tag): the running coroutine's calls carry tag; its end is traced. */
int
kernel_lset_tag(lua_State *L) {
	enum { ARG_TAG = 1 };
	lua_settop(L, ARG_TAG);
	struct kernel *k = kernel_push(L);
	lua_pushvalue(L, ARG_TAG);
	kernel_set_tag(L, k, k->running);
	return 0;
}

void
kernel_push_new_tag(lua_State *L, struct kernel *k) {
	(void)k;
	uint8_t id[16];
	char hex[SPAN_TRACE_HEX];
	skynet_span_new_trace(id);
	skynet_span_hex(id, 16, hex);
	lua_pushlstring(L, hex, sizeof(hex));
}

/* S.new_tag() -> a new trace tag (skynet.trace; dispatch.c makes one for forced tracing). */
int
kernel_lnew_tag(lua_State *L) {
	kernel_push_new_tag(L, kernel_push(L));
	return 1;
}

/* S.parked() -> a new array of the coroutines parked in the pool (for tests and diagnostics). */
int
kernel_lparked(lua_State *L) {
	enum { SLOT_KERNEL = 1, SLOT_POOL, SLOT_PARKED };
	lua_settop(L, 0);
	kernel_push(L);
	kernel_tab(L, SLOT_KERNEL, UV_POOL);
	lua_createtable(L, (int)lua_rawlen(L, SLOT_POOL), 0);
	lua_Integer n = 0;
	lua_pushnil(L);
	while (lua_next(L, SLOT_POOL)) // the pool is weak: a collected one left a hole
		lua_rawseti(L, SLOT_PARKED, ++n);
	return 1;
}

/* Push the arguments of a fork: f itself, or {f, args..., n = count}. */
static void
push_fork_args(lua_State *L, int n) {
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
}

/* skynet.fork(func, ...) -> co */
int
kernel_lfork(lua_State *L) {
	int n = lua_gettop(L);
	if (n == 0)
		lua_settop(L, 1), n = 1;
	struct kernel *k = kernel_push(L);
	int K = n + 1;
	kernel_co_get(L, K);
	int co = lua_gettop(L);
	int t = ++k->fq_t;
	lua_pushvalue(L, co);
	kernel_seti(L, K, UV_FQ, t);
	push_fork_args(L, n);
	kernel_seti(L, K, UV_FQ_ARGS, t);
	lua_pushvalue(L, co);
	return 1;
}

/* The body of a pooled coroutine, for the profiler's frame names (init.c). */
lua_CFunction
kernel_coroutine_frame(void) {
	return co_body;
}
