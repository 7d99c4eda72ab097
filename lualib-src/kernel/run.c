/*
 * skynet.kernel, run: after a resume, the queues.
 *
 * kernel_run handles what a resumed coroutine yielded (its error, QUIT, or
 * an unknown command), then drains, one resume per step, the wakeup queue
 * (skynet.wakeup: the woken sleep or wait returns (false, "BREAK"); a sleep
 * whose timer fired already leaves "BREAK" in UV_WAITING so that the timer's
 * message is dropped) and the error queue (failed calls: the coroutine is
 * resumed with false, a handler table called with (t, session, false)).
 * kernel_run_forks resumes the coroutines skynet.fork queued.
 *
 * Owns: the heads of the wakeup, error and fork queues (k->wq_h, k->eq_h,
 * k->fq_h; the queues are reset when drained), their entries as it takes
 * them (UV_WQ, UV_WQ_TOKEN, UV_WOKEN, UV_EQ, UV_FQ, UV_FQ_ARGS), and the
 * UV_WAITING and UV_WATCHING entries of the coroutines it resumes; moves a
 * failed call's reason from its session to its coroutine (dispatch.c).
 * Reads: the tails of the queues (timer.c, dispatch.c and coroutine.c add).
 */

#include "kernel.h"

#include <lauxlib.h>

/*
 * What resuming the coroutine at co gave, r (a command, or the error when
 * ok is false). Returns true when the coroutine quit (skynet.exit).
 */
static bool
handle_result(lua_State *L, int K, struct kernel *k, int co, int r, bool ok) {
	if (!ok) {
		kernel_co_error(L, K, k, co, r);
	} else if (kernel_is_string(L, r, "QUIT")) {
		kernel_close_thread(lua_tothread(L, co), L);
		return true;
	} else if (!lua_isnil(L, r) && !kernel_is_string(L, r, "SUSPEND") &&
	           !kernel_is_string(L, r, "EXIT")) {
		lua_pushliteral(L, "Unknown command : ");
		luaL_tolstring(L, r, NULL);
		lua_concat(L, 2);
		kernel_co_error(L, K, k, co, lua_gettop(L));
	}
	return false;
}

/* Take the head of the wakeup queue: returns its session (> 0: a sleep). */
static lua_Integer
take_wakeup(lua_State *L, int K, struct kernel *k) {
	int h = k->wq_h++;
	kernel_geti(L, K, UV_WQ, h);
	lua_Integer s = lua_tointeger(L, -1);
	kernel_geti(L, K, UV_WQ_TOKEN, h);
	int token = lua_gettop(L);
	lua_pushnil(L);
	kernel_seti(L, K, UV_WQ, h);
	lua_pushnil(L);
	kernel_seti(L, K, UV_WQ_TOKEN, h);
	kernel_get(L, K, UV_WOKEN, token);
	if (lua_rawequal(L, -1, token - 1)) {
		lua_pushnil(L);
		kernel_set(L, K, UV_WOKEN, token);
	}
	lua_pop(L, 3);
	return s;
}

/*
 * Resume the sleep or wait at the head of the wakeup queue with (false,
 * "BREAK"). Leaves co, r at base + 1, base + 2 (nil, nil when it is gone).
 */
static bool
resume_woken(lua_State *L, int K, struct kernel *k, int base) {
	lua_Integer s = take_wakeup(L, K, k);
	bool timed = s > 0;
	if (!timed)
		s = -s;
	if (kernel_geti(L, K, UV_WAITING, s) != LUA_TTHREAD) {
		lua_settop(L, base);
		lua_pushnil(L);
		lua_pushnil(L);
		return true;
	}
	int co = base + 1;
	if (timed && skynet_timeout_cancel(k->ctx, (int)s) != 0)
		lua_pushliteral(L, "BREAK"); // the timer fired already: drop its message
	else
		lua_pushnil(L);
	kernel_seti(L, K, UV_WAITING, s);
	kernel_set_running(L, K, k, co);
	lua_pushboolean(L, 0);
	lua_pushliteral(L, "BREAK");
	return kernel_resume(k, L, lua_tothread(L, co), 2);
}

/* Push the reason kept for the failed call on session (or nil) and forget it there. */
static void
take_reason(lua_State *L, lua_Integer session) {
	lua_pushinteger(L, session);
	kernel_reason_get(L, -1);
	lua_pushinteger(L, session);
	lua_pushnil(L);
	kernel_reason_set(L, -2);
	lua_pop(L, 1);
	lua_remove(L, -2);
}

/*
 * Fail the call at the head of the error queue: its coroutine is resumed
 * with false, its handler table called with (t, session, false). Leaves co, r
 * at base + 1, base + 2.
 */
static bool
resume_failed(lua_State *L, int K, struct kernel *k, int base) {
	int h = k->eq_h++;
	kernel_geti(L, K, UV_EQ, h);
	lua_Integer s = lua_tointeger(L, -1);
	lua_pushnil(L);
	kernel_seti(L, K, UV_EQ, h);
	lua_settop(L, base);
	int co = base + 1;
	int t = kernel_geti(L, K, UV_WAITING, s);
	take_reason(L, s);
	if (t != LUA_TNIL) {
		lua_pushnil(L);
		kernel_seti(L, K, UV_WAITING, s);
		lua_pushnil(L);
		kernel_seti(L, K, UV_WATCHING, s);
		if (t == LUA_TTHREAD) {
			kernel_reason_set(L, co); // its last failed call's (nil: none)
			kernel_set_running(L, K, k, co);
			lua_pushboolean(L, 0);
			return kernel_resume(k, L, lua_tothread(L, co), 1);
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
	return true;
}

void
kernel_run(lua_State *L, int K, bool ok) {
	struct kernel *k = lua_touserdata(L, K);
	int base = lua_gettop(L) - 2;
	int co = base + 1, r = base + 2;
	for (;;) {
		if (lua_type(L, co) == LUA_TTHREAD && handle_result(L, K, k, co, r, ok))
			break;
		lua_settop(L, base);
		if (k->wq_h <= k->wq_t) {
			ok = resume_woken(L, K, k, base);
		} else if (k->eq_h <= k->eq_t) {
			ok = resume_failed(L, K, k, base);
		} else {
			if (k->wq_t != 0 || k->eq_t != 0) {
				k->wq_h = k->eq_h = 1;
				k->wq_t = k->eq_t = 0;
			}
			break;
		}
	}
	lua_settop(L, base);
}

void
kernel_run_queues(lua_State *L, int K) {
	lua_pushnil(L);
	lua_pushnil(L);
	kernel_run(L, K, true);
}

void
kernel_run_forks(lua_State *L, int K, struct kernel *k) {
	while (k->fq_h <= k->fq_t) {
		int i = k->fq_h++;
		int base = lua_gettop(L);
		int t = kernel_geti(L, K, UV_FQ, i);
		lua_pushnil(L);
		kernel_seti(L, K, UV_FQ, i);
		if (t == LUA_TTHREAD) {
			int co = base + 1;
			kernel_geti(L, K, UV_FQ_ARGS, i);
			lua_pushnil(L);
			kernel_seti(L, K, UV_FQ_ARGS, i);
			kernel_set_running(L, K, k, co);
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
			bool ok = kernel_resume(k, L, lua_tothread(L, co), nargs);
			kernel_run(L, K, ok);
		}
		lua_settop(L, base);
	}
	if (k->fq_t != 0) {
		k->fq_h = 1;
		k->fq_t = 0;
	}
}
