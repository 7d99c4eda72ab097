/*
 * skynet.kernel, timers and sleep: timeout, sleep, wait, wakeup.
 *
 * Owns: UV_TIMERS (session -> function of a pending skynet.timeout: no
 * coroutine exists until it fires; dispatch.c takes the entry when it
 * fires), k->timer_n and k->timer_peak (the table is rebuilt once most of a
 * batch of at least KERNEL_TIMER_REBUILD is gone, so its memory comes back),
 * UV_TIMEOUT_TB entries (creation tracebacks, when trace_timeouts is on),
 * UV_SLEEP_SESSION (token -> session: > 0 a sleep with a timer, < 0 a wait),
 * and the tail of the wakeup queue (UV_WQ, UV_WQ_TOKEN, UV_WOKEN, k->wq_t;
 * dispatch.c runs it). A sleep or wait registers the running coroutine in
 * UV_WAITING under its session and yields "SUSPEND".
 * S.pending, S.pending_count and S.creation tell skynet.task what waits.
 * Reads: UV_RUNNING, UV_WAITING (S.pending).
 *
 * Units: centiseconds; microseconds for timeout_us (a precise timer of the
 * node's timer thread: skynet_timeout_us_new).
 */

#include "kernel.h"

#include <lauxlib.h>

#include <limits.h>
#include <math.h>

/* ti at idx is not an integer: any number or numeric string, floored, through
 * skynet.core's own rules. Returns the session. */
static int
core_timeout(lua_State *L, int idx) {
	kernel_require(L, "skynet.core");
	lua_getfield(L, -1, "timeout");
	lua_pushvalue(L, idx);
	lua_call(L, 1, 1);
	int session = (int)lua_tointeger(L, -1);
	lua_pop(L, 2);
	return session;
}

int
kernel_arm_timer(lua_State *L, int K, struct kernel *k, int idx) {
	if (k->wrapped)
		kernel_session_guard(L, K, k);
	int session;
	if (lua_isinteger(L, idx)) {
		lua_Integer ti = lua_tointeger(L, idx);
		if (ti > INT_MAX)
			ti = INT_MAX;
		else if (ti < INT_MIN)
			ti = INT_MIN;
		session = skynet_timeout_new(k->ctx, (int)ti);
	} else {
		session = core_timeout(L, idx);
	}
	kernel_track(k, session);
	return session;
}

int
kernel_results_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	return lua_gettop(L) - (int)ctx;
}

/* The timer function of a callable that is not a function: calls it with no arguments. */
static int
call_upvalue(lua_State *L) {
	int base = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_callk(L, 0, LUA_MULTRET, base, kernel_results_k);
	return kernel_results_k(L, LUA_OK, base);
}

/* A precise timer of the number of microseconds at idx, rounded up (never early). */
static int
arm_precise(lua_State *L, int K, struct kernel *k, int idx) {
	lua_Number us = luaL_checknumber(L, idx);
	if (k->wrapped)
		kernel_session_guard(L, K, k);
	us = ceil(us);
	int64_t delay = us > (lua_Number)KERNEL_PRECISE_MAX_US ? KERNEL_PRECISE_MAX_US
	                : us > 0                               ? (int64_t)us
	                                                       : 0;
	int session = skynet_timeout_us_new(k->ctx, delay);
	kernel_track(k, session);
	return session;
}

/* skynet.timeout(ti, func) and skynet.timeout_us(us, func) -> timer object */
static int
timeout_with(lua_State *L, bool precise) {
	enum { ARG_TI = 1, ARG_FUNC, SLOT_KERNEL };
	lua_settop(L, ARG_FUNC);
	struct kernel *k = kernel_push(L);
	if (lua_type(L, ARG_FUNC) != LUA_TFUNCTION) {
		lua_pushvalue(L, ARG_FUNC);
		lua_pushcclosure(L, call_upvalue, 1);
		lua_replace(L, ARG_FUNC);
	}
	int session = precise ? arm_precise(L, SLOT_KERNEL, k, ARG_TI)
	                      : kernel_arm_timer(L, SLOT_KERNEL, k, ARG_TI);
	lua_pushvalue(L, ARG_FUNC);
	kernel_seti(L, SLOT_KERNEL, UV_TIMERS, session);
	if (++k->timer_n > k->timer_peak)
		k->timer_peak = k->timer_n;
	if (k->trace_timeouts) {
		luaL_traceback(L, L, NULL, 0);
		kernel_seti(L, SLOT_KERNEL, UV_TIMEOUT_TB, session);
	}
	lua_pushlightuserdata(L, (void *)(intptr_t)session);
	return 1;
}

int
kernel_ltimeout(lua_State *L) {
	return timeout_with(L, false);
}

int
kernel_ltimeout_us(lua_State *L) {
	return timeout_with(L, true);
}

void
kernel_timers_shrink(lua_State *L, int K, struct kernel *k) {
	if (k->timer_peak < KERNEL_TIMER_REBUILD || k->timer_n * 4 >= k->timer_peak)
		return;
	kernel_tab(L, K, UV_TIMERS);
	kernel_session_remake(L, K, k, UV_TIMERS, k->timer_n); // a session table: see state.c
	lua_pop(L, 1);
	k->timer_peak = k->timer_n;
}

/* ---- sleep, wait, wakeup ---- */

/* The stack of a sleep or a wait: ti (or the token), the token, the kernel,
 * the session (negated for a wait), then what the resume adds. */
enum { TOKEN_TI = 1, TOKEN_TOKEN, TOKEN_KERNEL, TOKEN_SESSION, TOKEN_OK, TOKEN_ERR };

/* Default token: the running coroutine. */
static void
default_token(lua_State *L) {
	if (!lua_toboolean(L, TOKEN_TOKEN)) {
		lua_pushthread(L);
		lua_replace(L, TOKEN_TOKEN);
	}
}

static void
check_token(lua_State *L) {
	if (kernel_get(L, TOKEN_KERNEL, UV_SLEEP_SESSION, TOKEN_TOKEN) != LUA_TNIL &&
	    lua_toboolean(L, -1))
		kernel_error_at(L, 1, "token duplicative");
	lua_pop(L, 1);
}

/* Forget the token's session when it is still ours. */
static void
clear_token(lua_State *L) {
	kernel_get(L, TOKEN_KERNEL, UV_SLEEP_SESSION, TOKEN_TOKEN);
	if (lua_rawequal(L, -1, TOKEN_SESSION)) {
		lua_pushnil(L);
		kernel_set(L, TOKEN_KERNEL, UV_SLEEP_SESSION, TOKEN_TOKEN);
	}
	lua_pop(L, 1);
}

/* Register the token's session (at TOKEN_SESSION) and the running coroutine, then yield. */
static int
suspend(lua_State *L, int session, lua_KFunction k) {
	lua_pushvalue(L, TOKEN_SESSION);
	kernel_set(L, TOKEN_KERNEL, UV_SLEEP_SESSION, TOKEN_TOKEN);
	kernel_push_running(L, TOKEN_KERNEL);
	kernel_seti(L, TOKEN_KERNEL, UV_WAITING, session);
	lua_pushliteral(L, "SUSPEND");
	return lua_yieldk(L, 1, 0, k);
}

static int
sleep_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(L, TOKEN_ERR);
	clear_token(L);
	if (lua_toboolean(L, TOKEN_OK))
		return 0;
	if (kernel_is_string(L, TOKEN_ERR, "BREAK"))
		return 1;
	lua_pushvalue(L, TOKEN_ERR);
	if (lua_type(L, -1) == LUA_TSTRING) {
		luaL_where(L, 1);
		lua_insert(L, -2);
		lua_concat(L, 2);
	}
	return lua_error(L);
}

/* skynet.sleep(ti, token) */
int
kernel_lsleep(lua_State *L) {
	lua_settop(L, TOKEN_TOKEN);
	default_token(L);
	struct kernel *k = kernel_push(L);
	check_token(L);
	int session = kernel_arm_timer(L, TOKEN_KERNEL, k, TOKEN_TI);
	lua_pushinteger(L, session);
	return suspend(L, session, sleep_k);
}

static int
wait_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(L, TOKEN_SESSION);
	clear_token(L);
	return 0;
}

/* skynet.wait(token) */
int
kernel_lwait(lua_State *L) {
	lua_settop(L, 1);
	lua_pushvalue(L, 1);
	default_token(L);
	struct kernel *k = kernel_push(L);
	check_token(L);
	int session = kernel_new_session(L, TOKEN_KERNEL, k);
	lua_pushinteger(L, -(lua_Integer)session);
	return suspend(L, session, wait_k);
}

/* skynet.wakeup(token) -> true | nothing */
int
kernel_lwakeup(lua_State *L) {
	enum { ARG_TOKEN = 1, SLOT_KERNEL, SLOT_SESSION };
	lua_settop(L, ARG_TOKEN);
	struct kernel *k = kernel_push(L);
	if (kernel_get(L, SLOT_KERNEL, UV_SLEEP_SESSION, ARG_TOKEN) != LUA_TNIL &&
	    lua_toboolean(L, SLOT_SESSION)) {
		lua_pushnil(L);
		kernel_set(L, SLOT_KERNEL, UV_SLEEP_SESSION, ARG_TOKEN);
		lua_pushvalue(L, SLOT_SESSION);
		kernel_set(L, SLOT_KERNEL, UV_WOKEN, ARG_TOKEN);
		int t = ++k->wq_t;
		lua_pushvalue(L, SLOT_SESSION);
		kernel_seti(L, SLOT_KERNEL, UV_WQ, t);
		lua_pushvalue(L, ARG_TOKEN);
		kernel_seti(L, SLOT_KERNEL, UV_WQ_TOKEN, t);
		lua_pushboolean(L, 1);
		return 1;
	}
	if (kernel_get(L, SLOT_KERNEL, UV_WOKEN, ARG_TOKEN) != LUA_TNIL && lua_toboolean(L, -1)) {
		lua_pushboolean(L, 1); // woken already, not resumed yet
		return 1;
	}
	return 0;
}

/* ---- what is pending (skynet.task) ---- */

/* Copy the entries of state table v into the table at to (all, or all but
 * "BREAK"); returns how many (into no table when to is 0: only counted). */
static lua_Integer
copy_pending(lua_State *L, int K, int v, int to) {
	if (!kernel_tab_if(L, K, v))
		return 0;
	int t = lua_gettop(L);
	lua_Integer n = 0;
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (v == UV_WAITING && kernel_is_string(L, -1, "BREAK")) {
			lua_pop(L, 1); // a late message to drop: nothing waits
			continue;
		}
		n++;
		if (to == 0) {
			lua_pop(L, 1);
			continue;
		}
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_rawset(L, to); // the key stays for lua_next
	}
	lua_pop(L, 1);
	return n;
}

/* S.pending() -> a new table: session -> the coroutine blocked on it, a reply
 * handler table, or the function of a pending timeout. */
int
kernel_lpending(lua_State *L) {
	enum { SLOT_KERNEL = 1, SLOT_PENDING };
	lua_settop(L, 0);
	struct kernel *k = kernel_push(L);
	lua_createtable(L, 0, k->timer_n > 0 ? k->timer_n : 0);
	copy_pending(L, SLOT_KERNEL, UV_WAITING, SLOT_PENDING);
	copy_pending(L, SLOT_KERNEL, UV_TIMERS, SLOT_PENDING);
	return 1;
}

/* S.pending_count() -> how many sessions S.pending would list. */
int
kernel_lpending_count(lua_State *L) {
	enum { SLOT_KERNEL = 1 };
	lua_settop(L, 0);
	kernel_push(L);
	lua_Integer n = copy_pending(L, SLOT_KERNEL, UV_WAITING, 0);
	n += copy_pending(L, SLOT_KERNEL, UV_TIMERS, 0);
	lua_pushinteger(L, n);
	return 1;
}

/* S.creation(session) -> the traceback of where the timeout of session was
 * made (skynet.trace_timeout on), or nil. */
int
kernel_lcreation(lua_State *L) {
	enum { ARG_SESSION = 1, SLOT_KERNEL };
	lua_settop(L, ARG_SESSION);
	kernel_push(L);
	kernel_get(L, SLOT_KERNEL, UV_TIMEOUT_TB, ARG_SESSION);
	return 1;
}
