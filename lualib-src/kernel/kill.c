/*
 * skynet.kernel, kill: the end of a coroutine, or of the service, by hand.
 *
 * S.killthread(co) is skynet.killthread: co is a coroutine, the object of a
 * skynet.timeout, or a string naming one of them (the exact tostring of a
 * pending timeout, else part of the tostring of a blocked coroutine, then of
 * a forked one not started yet). A pending timeout is cancelled; a timeout
 * that fired and blocked names its coroutine. A forked coroutine leaves the
 * fork queue. A blocked coroutine loses its session (drop_session), its
 * request fails (its caller gets an error), its bookkeeping ends and it is
 * closed, so its to-be-closed variables run. Returns the coroutine (or the
 * timeout), nil when nothing was killed.
 *
 * drop_session forgets the session a killed coroutine or timeout waits on.
 * A timer is cancelled; when its message may still come (the timer fired,
 * or the session is a call in flight) the session stays in UV_WAITING as
 * "BREAK", so that the late message is dropped; a wait (no timer, no call)
 * is simply forgotten, with its token and any wakeup queued for it.
 *
 * S.exit_state() is the kernel's part of skynet.exit (lualib/skynet/ext/kill.lua
 * does the rest: the launcher, the callback that refuses new requests, EXIT):
 * it marks the service exited (the last will then does nothing), drops the
 * pending forks, answers every request being served with an error, forgets
 * the waits and timers, closes the suspended coroutines, fails the detached
 * responses and tells each service it has calls pending with that it is gone.
 * The last will (init.c) shares kernel_fail_requests and kernel_fail_responses.
 *
 * Owns: k->exited. Changes, for the parts that own them and by their rules:
 * the entries of a dropped session (UV_WAITING, UV_WATCHING, UV_TIMERS with
 * k->timer_n, UV_TIMEOUT_TB, UV_SLEEP_SESSION, UV_WOKEN), a killed fork's
 * UV_FQ and UV_FQ_ARGS entries, a killed coroutine's request (UV_REQ_SESSION,
 * UV_REQ_SOURCE); on exit it empties UV_FQ, UV_FQ_ARGS, UV_WAITING, UV_TIMERS
 * and UV_REQ_SESSION.
 * Reads: UV_WQ (a wakeup queued), UV_FIRED, UV_RUNNING, UV_UNRESPONSE.
 */

#include "kernel.h"

#include <lauxlib.h>

#include <string.h>

/* ---- dropping a session ---- */

/* How scan_sessions treats the entries it finds. */
enum { SCAN_CLEAR = 1, SCAN_FIRST = 2 };
/* What scan_sessions found: session (a sleep), -session (a wait). */
enum { FOUND_SLEEP = 1, FOUND_WAIT = 2 };

/*
 * Look in state table v for the values session and -session; clear those
 * found with SCAN_CLEAR, stop at the first with SCAN_FIRST. Returns what was
 * found (FOUND_*). The stack is left as it was.
 */
static int
scan_sessions(lua_State *L, int K, int v, lua_Integer session, int how) {
	if (!kernel_tab_if(L, K, v))
		return 0;
	int t = lua_gettop(L);
	int found = 0;
	lua_pushnil(L);
	while (lua_next(L, t)) {
		lua_Integer s = lua_tointeger(L, -1); // 0 for anything else: never a session
		lua_pop(L, 1);
		if (s != session && s != -session)
			continue;
		found |= s > 0 ? FOUND_SLEEP : FOUND_WAIT;
		if (how & SCAN_CLEAR) {
			lua_pushvalue(L, -1);
			lua_pushnil(L);
			lua_rawset(L, t); // clearing a field during traversal is allowed
		}
		if (how & SCAN_FIRST)
			break;
	}
	lua_settop(L, t - 1);
	return found;
}

/*
 * Forget the sleep or wait token of session and the wakeups queued for it.
 * Returns true for a wait: no timer and no message will ever come for it.
 */
static bool
forget_tokens(lua_State *L, int K, lua_Integer session) {
	bool wait_only =
	    scan_sessions(L, K, UV_SLEEP_SESSION, session, SCAN_CLEAR | SCAN_FIRST) == FOUND_WAIT;
	if (scan_sessions(L, K, UV_WQ, session, 0) & FOUND_WAIT)
		wait_only = true;                               // woken already, not resumed yet
	scan_sessions(L, K, UV_WOKEN, session, SCAN_CLEAR); // a second wakeup must not report it
	return wait_only;
}

/* session is a pending timeout: cancel it, or drop its message when it fired already. */
static void
drop_timer(lua_State *L, int K, struct kernel *k, lua_Integer session) {
	lua_pushnil(L);
	kernel_seti(L, K, UV_TIMERS, session);
	k->timer_n--;
	if (skynet_timeout_cancel(k->ctx, (int)session) != 0) {
		lua_pushliteral(L, "BREAK");
		kernel_seti(L, K, UV_WAITING, session);
	}
	lua_pushnil(L);
	kernel_seti(L, K, UV_TIMEOUT_TB, session);
}

static bool
has_entry(lua_State *L, int K, int v, lua_Integer key) {
	bool has = kernel_geti(L, K, v, key) != LUA_TNIL;
	lua_pop(L, 1);
	return has;
}

/* Forget the session a killed coroutine or timeout waits on. */
static void
drop_session(lua_State *L, int K, struct kernel *k, lua_Integer session) {
	if (has_entry(L, K, UV_TIMERS, session)) {
		drop_timer(L, K, k, session);
		return;
	}
	int t = kernel_geti(L, K, UV_WAITING, session);
	bool gone = t == LUA_TNIL || kernel_is_string(L, -1, "BREAK");
	lua_pop(L, 1);
	if (gone)
		return;
	bool late = true; // a call: its reply or error is still to come
	if (!has_entry(L, K, UV_WATCHING, session)) {
		bool wait_only = forget_tokens(L, K, session);
		late = !wait_only && skynet_timeout_cancel(k->ctx, (int)session) != 0;
	}
	if (late)
		lua_pushliteral(L, "BREAK");
	else
		lua_pushnil(L);
	kernel_seti(L, K, UV_WAITING, session);
	lua_pushnil(L);
	kernel_seti(L, K, UV_WATCHING, session);
}

/* ---- finding what to kill ---- */

/* Does s (len bytes) hold pattern (plen bytes), as string.find(s, pattern, 1, true)? */
static bool
contains(const char *s, size_t len, const char *pattern, size_t plen) {
	if (plen == 0)
		return true;
	for (size_t i = 0; i + plen <= len; i++) {
		if (s[i] == pattern[0] && memcmp(s + i, pattern, plen) == 0)
			return true;
	}
	return false;
}

/* The session in "userdata: 0x<hex>" (the tostring of a timeout object) at
 * name; false: not shaped so. */
static bool
parse_timer_name(lua_State *L, int name, lua_Integer *session) {
	static const char prefix[] = "userdata: 0x";
	static const char digits[] = "0123456789abcdef";
	size_t len;
	const char *s = lua_tolstring(L, name, &len);
	size_t i = sizeof(prefix) - 1;
	if (len <= i || memcmp(s, prefix, i) != 0)
		return false;
	lua_Unsigned n = 0; // wraps around on overflow, as tonumber(hex, 16)
	for (; i < len; i++) {
		char c = s[i] >= 'A' && s[i] <= 'F' ? (char)(s[i] - 'A' + 'a') : s[i];
		const char *d = c == '\0' ? NULL : strchr(digits, c);
		if (d == NULL)
			return false;
		n = n * 16 + (lua_Unsigned)(d - digits);
	}
	*session = (lua_Integer)n;
	return true;
}

/* Push the first coroutine of state table v whose tostring holds the pattern
 * at pattern; false (nothing pushed): none. */
static bool
push_thread_named(lua_State *L, int K, int v, int pattern) {
	if (!kernel_tab_if(L, K, v))
		return false;
	int t = lua_gettop(L);
	size_t plen;
	const char *p = lua_tolstring(L, pattern, &plen);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (lua_type(L, -1) == LUA_TTHREAD) {
			size_t len;
			const char *s = luaL_tolstring(L, -1, &len);
			bool found = contains(s, len, p, plen);
			lua_pop(L, 1);
			if (found) {
				lua_replace(L, t);
				lua_settop(L, t);
				return true;
			}
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return false;
}

/* Push what the killthread pattern at pattern names, or nil. */
static void
push_named(lua_State *L, int K, int pattern) {
	lua_Integer session;
	if (parse_timer_name(L, pattern, &session) && has_entry(L, K, UV_TIMERS, session)) {
		lua_pushlightuserdata(L, (void *)(intptr_t)session);
		return;
	}
	if (push_thread_named(L, K, UV_WAITING, pattern))
		return;
	if (push_thread_named(L, K, UV_FQ, pattern))
		return;
	lua_pushnil(L);
}

/* ---- killing a coroutine ---- */

/* The coroutine co waits in the fork queue: it leaves it (false, as run.c
 * expects). Returns whether it was there. */
static bool
drop_fork(lua_State *L, int K, int co) {
	if (!kernel_tab_if(L, K, UV_FQ))
		return false;
	int t = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (lua_rawequal(L, -1, co)) {
			lua_Integer i = lua_tointeger(L, -2);
			lua_settop(L, t - 1);
			lua_pushboolean(L, 0);
			kernel_seti(L, K, UV_FQ, i);
			lua_pushnil(L);
			kernel_seti(L, K, UV_FQ_ARGS, i);
			return true;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return false;
}

/* coroutine.status(co) == "suspended", seen from L. */
static bool
is_suspended(lua_State *L, lua_State *co) {
	if (co == L)
		return false; // running
	int status = lua_status(co);
	if (status == LUA_YIELD)
		return true;
	if (status != LUA_OK)
		return false; // died in an error
	lua_Debug ar;
	if (lua_getstack(co, 0, &ar))
		return false;          // normal: it resumed another one
	return lua_gettop(co) > 0; // not started yet; an empty stack: dead
}

/* The session the coroutine at co waits on; false: none. */
static bool
find_session(lua_State *L, int K, int co, lua_Integer *session) {
	if (!kernel_tab_if(L, K, UV_WAITING))
		return false;
	int t = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (lua_rawequal(L, -1, co)) {
			*session = lua_tointeger(L, -2);
			lua_settop(L, t - 1);
			return true;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return false;
}

/* Kill the coroutine at co; false: it is neither forked nor blocked. */
static bool
kill_coroutine(lua_State *L, int K, struct kernel *k, int co) {
	if (drop_fork(L, K, co))
		return true;
	lua_State *thread = lua_tothread(L, co);
	lua_Integer session;
	if (!is_suspended(L, thread) || !find_session(L, K, co, &session))
		return false;
	drop_session(L, K, k, session);
	kernel_co_fail_request(L, K, k, co, NULL);
	kernel_co_finished(L, K, k, co, true);
	kernel_close_thread(thread, L);
	return true;
}

/* S.killthread(co | timeout | pattern) -> what it killed, or nil. */
int
kernel_lkillthread(lua_State *L) {
	enum { ARG_CO = 1, SLOT_KERNEL, SLOT_TARGET };
	lua_settop(L, ARG_CO);
	struct kernel *k = kernel_push(L);
	if (lua_type(L, ARG_CO) == LUA_TSTRING)
		push_named(L, SLOT_KERNEL, ARG_CO);
	else
		lua_pushvalue(L, ARG_CO);
	if (lua_type(L, SLOT_TARGET) == LUA_TLIGHTUSERDATA) {
		lua_Integer session = (lua_Integer)(intptr_t)lua_touserdata(L, SLOT_TARGET);
		if (has_entry(L, SLOT_KERNEL, UV_TIMERS, session)) {
			drop_session(L, SLOT_KERNEL, k, session);
			return 1;
		}
		if (kernel_geti(L, SLOT_KERNEL, UV_FIRED, session) != LUA_TTHREAD) {
			lua_pushnil(L);
			return 1; // not a timeout, or it fired and ran to its end
		}
		lua_replace(L, SLOT_TARGET); // fired, and blocked since: kill its coroutine
	} else if (lua_type(L, SLOT_TARGET) != LUA_TTHREAD) {
		lua_pushnil(L);
		return 1;
	}
	if (!kill_coroutine(L, SLOT_KERNEL, k, SLOT_TARGET))
		lua_pushnil(L);
	return 1;
}

/* ---- exit ---- */

/* Empty state table v (in place: a part may hold it on its stack). */
static void
clear_state(lua_State *L, int K, int v) {
	if (!kernel_tab_if(L, K, v))
		return;
	int t = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_pushnil(L);
		lua_rawset(L, t);
	}
	lua_pop(L, 1);
}

void
kernel_fail_requests(lua_State *L, int K, struct kernel *k) {
	/* no table is made here: one never used is empty */
	if (!kernel_tab_if(L, K, UV_REQ_SESSION))
		return;
	int sessions = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, sessions)) {
		lua_Integer session = lua_tointeger(L, -1);
		if (kernel_get(L, K, UV_REQ_SOURCE, -2) == LUA_TNUMBER && session != 0)
			kernel_send_error(k, lua_tointeger(L, -1), session);
		lua_pop(L, 2);
	}
	lua_pop(L, 1);
}

void
kernel_fail_responses(lua_State *L, int K) {
	if (!kernel_tab_if(L, K, UV_UNRESPONSE))
		return;
	int t = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_pushboolean(L, 0);
		lua_pcall(L, 1, 0, 0);
		lua_settop(L, t + 1); // the key stays for lua_next (an error object is dropped)
	}
	lua_pop(L, 1);
}

/* Push a new array of the coroutines blocked in UV_WAITING, but the running one. */
static void
push_suspended(lua_State *L, int K) {
	lua_newtable(L);
	int list = lua_gettop(L);
	kernel_push_running(L, K);
	int running = list + 1;
	if (kernel_tab_if(L, K, UV_WAITING)) {
		int t = lua_gettop(L);
		lua_Integer n = 0;
		lua_pushnil(L);
		while (lua_next(L, t)) {
			if (lua_type(L, -1) == LUA_TTHREAD && !lua_rawequal(L, -1, running))
				lua_rawseti(L, list, ++n);
			else
				lua_pop(L, 1);
		}
	}
	lua_settop(L, list);
}

/* Close each suspended coroutine of the array at list: its to-be-closed variables run. */
static void
close_suspended(lua_State *L, int list) {
	lua_Integer n = (lua_Integer)lua_rawlen(L, list);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, list, i);
		lua_State *co = lua_tothread(L, -1);
		if (is_suspended(L, co))
			kernel_close_thread(co, L);
		lua_pop(L, 1);
	}
}

/* An error with session 0 ("this service is gone") to each service called and not answered. */
static void
fail_callees(lua_State *L, int K, struct kernel *k) {
	if (!kernel_tab_if(L, K, UV_WATCHING))
		return;
	int t = lua_gettop(L);
	lua_newtable(L); // the addresses, each once
	int dead = t + 1;
	lua_pushnil(L);
	while (lua_next(L, t)) {
		lua_pushboolean(L, 1);
		lua_rawset(L, dead);
	}
	lua_pushnil(L);
	while (lua_next(L, dead)) {
		lua_pushnil(L); // the payload: empty
		kernel_send_msg(L, k, dead + 1, PTYPE_ERROR, 0, lua_gettop(L));
		lua_pop(L, 2);
	}
	lua_settop(L, t - 1);
}

/* S.exit_state(): the kernel's part of skynet.exit. */
int
kernel_lexit_state(lua_State *L) {
	enum { SLOT_KERNEL = 1, SLOT_SUSPENDED };
	lua_settop(L, 0);
	struct kernel *k = kernel_push(L);
	k->exited = true;
	clear_state(L, SLOT_KERNEL, UV_FQ);
	clear_state(L, SLOT_KERNEL, UV_FQ_ARGS);
	kernel_fail_requests(L, SLOT_KERNEL, k);
	push_suspended(L, SLOT_KERNEL);
	clear_state(L, SLOT_KERNEL, UV_WAITING);
	clear_state(L, SLOT_KERNEL, UV_TIMERS);
	k->timer_n = 0;
	clear_state(L, SLOT_KERNEL, UV_REQ_SESSION);
	close_suspended(L, SLOT_SUSPENDED);
	kernel_fail_responses(L, SLOT_KERNEL);
	fail_callees(L, SLOT_KERNEL, k);
	return 0;
}
