/*
 * skynet.kernel, dispatch: from a message to a resumed coroutine.
 *
 * dispatch_message(prototype, msg, sz, session, source) is the service's
 * callback. Under pcall, raw_dispatch routes the message:
 *   a response  -> the coroutine waiting on its session is resumed with
 *                  (true, msg, sz, session), or a skynet.request handler
 *                  table t is called inline as t[1](t, session, true, msg,
 *                  sz); a session nobody waits for is a fired timeout (its
 *                  function runs in a pooled coroutine) or goes to the
 *                  unknown-response hook;
 *   an error    -> the calls it concerns are queued as failed (a session of
 *                  0: every call to the dead source, and what we owe it is
 *                  forgotten); text in its payload is kept as the reason
 *                  of the failed call (the reasons table, below);
 *   a request   -> unpacked with its protocol's unpack and started in a
 *                  pooled coroutine as dispatch(session, source, ...); no
 *                  dispatch: an error to the caller, or the unknown-request
 *                  hook for a send.
 * After each resume, kernel_run (run.c) handles what the coroutine yielded
 * and drains the wakeup and error queues. Then the forks queued during the
 * dispatch run, the timers table may shrink, and the errors collected while
 * dispatching (UV_ERRORS) are logged together, joined by newlines, as one
 * "lua call [...] error : ..." line (the shape lua-skynet.c gives an error
 * escaping the callback). Only then go the error replies to the calls the
 * failed coroutines served (UV_REPLIES): a caller hears of a failure after
 * its cause is in the log, so a node that stops on that failure (a start
 * service that cannot listen) still logs the cause, and before its reason.
 *
 * Owns: UV_WAITING entries as replies take them, UV_WATCHING entries of
 * answered and failed calls, the tail of the error queue (UV_EQ, k->eq_t),
 * UV_ERRORS, UV_REPLIES, k->trace_in (the trailer of the message dispatched
 * now, skynet_message_trace), UV_TRACE_SOURCE (trace payloads announced, taken by
 * the next request from their source), UV_UNRESPONSE entries of a dead source,
 * k->unpacking; a fired timeout's UV_TIMERS entry, UV_TIMEOUT_TB entry and
 * UV_FIRED pair. The reasons table (registry, REASONS_KEY; kernel.h says what
 * it holds): this file makes it and sets the session entries; run.c moves
 * them to the coroutine, coroutine.c and start.c take them from there.
 * Reads: UV_PROTO, UV_UNKNOWN_REQUEST, UV_UNKNOWN_RESPONSE.
 */

#include "kernel.h"

#include <lauxlib.h>

/* ---- errors ---- */

/* Queue the failure of the call on session. */
static void
queue_error(lua_State *L, int K, struct kernel *k, lua_Integer session) {
	lua_pushinteger(L, session);
	kernel_seti(L, K, UV_EQ, ++k->eq_t);
}

/* The service at source is dead: fail every call to it, forget what we owe it. */
static void
forget_source(lua_State *L, int K, struct kernel *k, int source) {
	kernel_tab(L, K, UV_WATCHING);
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		if (lua_rawequal(L, -1, source)) {
			lua_pushvalue(L, -2);
			kernel_seti(L, K, UV_EQ, ++k->eq_t);
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	kernel_tab(L, K, UV_UNRESPONSE);
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
	kernel_set_trace_source(L, K, k, source);
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

/* ---- failure reasons ---- */

/* The registry key of the reasons table (its address). */
static const char REASONS_KEY = 0;

/* Push the reasons table (weak keys), made on first use. */
static void
push_reasons(lua_State *L) {
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &REASONS_KEY) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &REASONS_KEY);
}

void
kernel_reason_set(lua_State *L, int key) {
	key = lua_absindex(L, key);
	push_reasons(L);
	lua_pushvalue(L, key);
	lua_rotate(L, -3, -1); // reasons, key, value
	lua_rawset(L, -3);
	lua_pop(L, 1);
}

int
kernel_reason_get(lua_State *L, int key) {
	key = lua_absindex(L, key);
	push_reasons(L);
	lua_pushvalue(L, key);
	int t = lua_rawget(L, -2);
	lua_remove(L, -2);
	return t;
}

/* S.reason() -> the reason of the running coroutine's last failed call, or nil. */
int
kernel_lreason(lua_State *L) {
	lua_settop(L, 0);
	kernel_push(L);
	kernel_push_running(L, 1);
	kernel_reason_get(L, 2);
	return 1;
}

/* The payload at msg, when it is text: the reason of the failed call on session. */
static void
keep_reason(lua_State *L, lua_Integer session, int msg) {
	if (msg == 0 || lua_type(L, msg) != LUA_TLIGHTUSERDATA || lua_tointeger(L, msg + 1) <= 0)
		return;
	lua_pushinteger(L, session);
	push_msg_string(L, msg);
	kernel_reason_set(L, -2);
	lua_pop(L, 1);
}

/* A PTYPE_ERROR for session from source; msg: the index of its payload (0: none). */
static void
error_dispatch(lua_State *L, int K, struct kernel *k, lua_Integer session, int source, int msg) {
	if (session == 0) {
		forget_source(L, K, k, source);
	} else if (kernel_geti(L, K, UV_WATCHING, session) != LUA_TNIL) {
		lua_pop(L, 1);
		keep_reason(L, session, msg);
		queue_error(L, K, k, session);
	} else {
		lua_pop(L, 1);
		if (kernel_geti(L, K, UV_WAITING, session) == LUA_TSTRING &&
		    kernel_is_string(L, -1, "BREAK")) {
			lua_pushnil(L);
			kernel_seti(L, K, UV_WAITING, session);
		}
		lua_pop(L, 1);
	}
}

/* S.error_dispatch(session, source), also the "error" protocol's dispatch. */
int
kernel_lerror_dispatch(lua_State *L) {
	enum { ARG_SESSION = 1, ARG_SOURCE, SLOT_KERNEL };
	lua_settop(L, ARG_SOURCE);
	struct kernel *k = kernel_push(L);
	error_dispatch(L, SLOT_KERNEL, k, lua_tointeger(L, ARG_SESSION), ARG_SOURCE, 0);
	return 0;
}

/* Default hook for unknown requests and responses: (session, source, msg, sz[, prototype]). */
int
kernel_lunknown_message(lua_State *L) {
	enum { ARG_SESSION = 1, ARG_SOURCE, ARG_MSG, ARG_SZ, ARG_PROTOTYPE, SLOT_KERNEL, SLOT_WHAT };
	lua_settop(L, ARG_PROTOTYPE);
	struct kernel *k = kernel_push(L);
	if (lua_isnil(L, ARG_PROTOTYPE)) {
		lua_pushliteral(L, "response");
	} else {
		lua_pushliteral(L, "request (");
		luaL_tolstring(L, ARG_PROTOTYPE, NULL);
		lua_pushliteral(L, ")");
		lua_concat(L, 3);
	}
	push_msg_string(L, ARG_MSG);
	const char *m = luaL_tolstring(L, -1, NULL);
	skynet_error(k->ctx, "Unknown %s: %s", lua_tostring(L, SLOT_WHAT), m);
	char source[16]; // lua_pushfstring has no %x
	snprintf(source, sizeof(source), ":%08x", (unsigned)lua_tointeger(L, ARG_SOURCE));
	return luaL_error(L, "Unknown session : %d from %s", (int)lua_tointeger(L, ARG_SESSION),
	                  source);
}

/* ---- raw_dispatch: one message ---- */

/* The stack of raw_dispatch: its arguments, the kernel, then per message kind. */
enum {
	ARG_PROTOTYPE = 1,
	ARG_MSG,
	ARG_SZ,
	ARG_SESSION,
	ARG_SOURCE,
	SLOT_KERNEL,
	SLOT_WAITER = SLOT_KERNEL + 1, // a response: UV_WAITING[session]
	SLOT_PROTO = SLOT_KERNEL + 1,  // a request: the protocol table,
	SLOT_P,                        // the message's protocol,
	SLOT_DISPATCH,                 // its dispatch
};

/* Call the hook at uv (unknown request or response) with the message. */
static void
call_unknown(lua_State *L, int uv, bool with_prototype) {
	kernel_uv(L, SLOT_KERNEL, uv);
	lua_pushvalue(L, ARG_SESSION);
	lua_pushvalue(L, ARG_SOURCE);
	lua_pushvalue(L, ARG_MSG);
	lua_pushvalue(L, ARG_SZ);
	if (with_prototype)
		lua_pushvalue(L, ARG_PROTOTYPE);
	lua_call(L, with_prototype ? 5 : 4, 0);
}

/* A timeout fires: its function (on top) runs in a pooled coroutine. */
static void
fire_timeout(lua_State *L, struct kernel *k, lua_Integer session) {
	int f = lua_gettop(L);
	lua_pushnil(L);
	kernel_seti(L, SLOT_KERNEL, UV_TIMERS, session);
	k->timer_n--;
	if (k->trace_timeouts) {
		lua_pushnil(L);
		kernel_seti(L, SLOT_KERNEL, UV_TIMEOUT_TB, session);
	}
	kernel_co_get(L, SLOT_KERNEL);
	int co = lua_gettop(L);
	kernel_set_running(L, SLOT_KERNEL, k, co);
	lua_pushvalue(L, f);
	bool ok = kernel_resume(k, L, lua_tothread(L, co), 1);
	if (ok && kernel_is_string(L, -1, "SUSPEND")) {
		lua_pushinteger(L, session);
		kernel_set(L, SLOT_KERNEL, UV_FIRED, co);
		lua_pushvalue(L, co);
		kernel_seti(L, SLOT_KERNEL, UV_FIRED, session);
		k->fired_n++;
	}
	kernel_run(L, SLOT_KERNEL, ok);
}

/* Resume the coroutine at SLOT_WAITER with the reply (true, msg, sz, session). */
static void
resume_reply(lua_State *L, struct kernel *k) {
	kernel_set_running(L, SLOT_KERNEL, k, SLOT_WAITER);
	lua_pushboolean(L, 1);
	lua_pushvalue(L, ARG_MSG);
	lua_pushvalue(L, ARG_SZ);
	lua_pushvalue(L, ARG_SESSION);
	bool ok = kernel_resume(k, L, lua_tothread(L, SLOT_WAITER), 4);
	kernel_run(L, SLOT_KERNEL, ok);
}

/* Call the handler table at SLOT_WAITER with the reply: t[1](t, session, true, msg, sz). */
static void
call_reply_handler(lua_State *L, lua_Integer session) {
	lua_pushnil(L);
	kernel_seti(L, SLOT_KERNEL, UV_WATCHING, session);
	lua_rawgeti(L, SLOT_WAITER, 1);
	lua_pushvalue(L, SLOT_WAITER);
	lua_pushvalue(L, ARG_SESSION);
	lua_pushboolean(L, 1);
	lua_pushvalue(L, ARG_MSG);
	lua_pushvalue(L, ARG_SZ);
	lua_call(L, 5, 0);
	kernel_run_queues(L, SLOT_KERNEL);
}

static void
dispatch_response(lua_State *L, struct kernel *k, lua_Integer session) {
	int t = kernel_geti(L, SLOT_KERNEL, UV_WAITING, session); // at SLOT_WAITER
	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		if (kernel_geti(L, SLOT_KERNEL, UV_TIMERS, session) == LUA_TNIL)
			call_unknown(L, UV_UNKNOWN_RESPONSE, false);
		else
			fire_timeout(L, k, session);
		return;
	}
	lua_pushnil(L);
	kernel_seti(L, SLOT_KERNEL, UV_WAITING, session);
	if (t == LUA_TTHREAD)
		resume_reply(L, k);
	else if (t == LUA_TTABLE)
		call_reply_handler(L, session);
	// else "BREAK": the late reply is dropped
}

/* A request for a protocol without dispatch. */
static void
no_dispatch(lua_State *L, struct kernel *k, lua_Integer prototype, lua_Integer session) {
	if (prototype == PTYPE_TRACE) {
		push_msg_string(L, ARG_MSG);
		kernel_set_trace_source(L, SLOT_KERNEL, k, ARG_SOURCE);
		kernel_trace_on(k);
	} else if (session != 0) {
		kernel_send_msg(L, k, ARG_SOURCE, PTYPE_ERROR, (int)session, lua_gettop(L) + 1);
	} else {
		call_unknown(L, UV_UNKNOWN_REQUEST, true);
	}
}

/* Tracing on: the protocol's trace field gives or drops the source's tag. */
static void
trace_request(lua_State *L, struct kernel *k) {
	int t = lua_getfield(L, SLOT_P, "trace");
	if (t != LUA_TNIL) {
		if (t == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
			k->trace_in = NULL;
			lua_pushnil(L);
			kernel_set_trace_source(L, SLOT_KERNEL, k, ARG_SOURCE);
		} else if (k->trace_in == NULL) {
			if (kernel_get(L, SLOT_KERNEL, UV_TRACE_SOURCE, ARG_SOURCE) == LUA_TNIL) {
				kernel_push_new_tag(L, k);
				kernel_set_trace_source(L, SLOT_KERNEL, k, ARG_SOURCE);
			}
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
}

/* The "<TRACE> request" line of the coroutine co (config trace_lines not false). */
static void
request_line(lua_State *L, struct kernel *k, lua_State *co) {
	if (k->trace_quiet)
		return;
	if (kernel_push_tag(L, k, co))
		kernel_trace(L, -1, "request");
	lua_pop(L, 1);
}

/* The request's coroutine th takes over the trace its message carries
 * (k->trace_in) or, without one, the payload its source announced (at the
 * top of UV_TRACE_SOURCE[source]), and begins a span, child of the
 * sender's; name: the absolute index of the request's first argument (0:
 * none). */
static void
take_trace_tag(lua_State *L, int K, struct kernel *k, lua_State *th, int source, int name) {
	const struct skynet_trace *in = k->trace_in;
	struct kernel_span_from from = {
	    .name = name, .source = (uint32_t)lua_tointeger(L, source), .at_dispatch = true};
	if (in != NULL) {
		k->trace_in = NULL;
		if (k->trace_pending > 0) { // a payload announced before: the trailer is newer
			lua_pushnil(L);
			kernel_set_trace_source(L, K, k, source);
		}
		from.tag = in->tag;
		from.tag_len = in->tag_len;
		from.trace = in->trace;
		from.parent = in->span;
		kernel_span_begin(L, k, th, &from);
		request_line(L, k, th);
		return;
	}
	if (kernel_get(L, K, UV_TRACE_SOURCE, source) != LUA_TNIL) {
		int payload = lua_gettop(L);
		lua_pushnil(L);
		kernel_set_trace_source(L, K, k, source);
		from.parent = kernel_trace_split(L, payload);
		from.tag = lua_tolstring(L, -1, &from.tag_len);
		kernel_span_begin(L, k, th, &from);
		request_line(L, k, th);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* Stack: f, session, source, args... above base. Starts the request in a pooled coroutine. */
static void
start_request(lua_State *L, int K, struct kernel *k, int base) {
	enum { JOB_CO = 1, JOB_F, JOB_SESSION, JOB_SOURCE }; // above base
	k->unpacking = false;
	int nargs = lua_gettop(L) - base;
	kernel_co_get(L, K);
	lua_insert(L, base + JOB_CO);
	int co = base + JOB_CO;
	lua_pushvalue(L, base + JOB_SESSION);
	kernel_set(L, K, UV_REQ_SESSION, co);
	lua_pushvalue(L, base + JOB_SOURCE);
	kernel_set(L, K, UV_REQ_SOURCE, co);
	lua_State *th = lua_tothread(L, co);
	if (k->trace_pending > 0 || k->trace_in != NULL)
		take_trace_tag(L, K, k, th, base + JOB_SOURCE, nargs > 3 ? base + JOB_SOURCE + 1 : 0);
	kernel_set_running(L, K, k, co);
	bool ok = kernel_resume(k, L, th, nargs);
	kernel_trace_settle(k); // before any other coroutine runs
	kernel_run(L, K, ok);
}

static void
dispatch_request(lua_State *L, struct kernel *k, lua_Integer prototype, lua_Integer session) {
	kernel_tab(L, SLOT_KERNEL, UV_PROTO);
	lua_pushvalue(L, ARG_PROTOTYPE);
	lua_rawget(L, SLOT_PROTO);
	if (lua_isnil(L, SLOT_P))
		lua_pushnil(L);
	else
		lua_getfield(L, SLOT_P, "dispatch");
	if (lua_isnil(L, SLOT_DISPATCH)) {
		no_dispatch(L, k, prototype, session);
		return;
	}
	if (lua_tocfunction(L, SLOT_DISPATCH) == kernel_lerror_dispatch) {
		error_dispatch(L, SLOT_KERNEL, k, session, ARG_SOURCE, ARG_MSG);
		kernel_run_queues(L, SLOT_KERNEL);
		return;
	}
	if (k->tracing)
		trace_request(L, k);
	k->unpacking = true;
	int base = lua_gettop(L);
	lua_pushvalue(L, SLOT_DISPATCH);
	lua_pushvalue(L, ARG_SESSION);
	lua_pushvalue(L, ARG_SOURCE);
	lua_getfield(L, SLOT_P, "unpack");
	lua_pushvalue(L, ARG_MSG);
	lua_pushvalue(L, ARG_SZ);
	lua_call(L, 2, LUA_MULTRET);
	start_request(L, SLOT_KERNEL, k, base);
}

/* raw_dispatch(prototype, msg, sz, session, source), under pcall. */
static int
raw_dispatch(lua_State *L) {
	lua_settop(L, ARG_SOURCE);
	struct kernel *k = kernel_push(L);
	int isnum = 0;
	lua_Integer prototype = lua_tointegerx(L, ARG_PROTOTYPE, &isnum);
	if (!isnum)
		prototype = -1;
	lua_Integer session = lua_tointeger(L, ARG_SESSION);
	if (prototype == PTYPE_RESPONSE)
		dispatch_response(L, k, session);
	else
		dispatch_request(L, k, prototype, session);
	return 0;
}

/* ---- dispatch_message ---- */

/* raw_dispatch raised the error on top: fail the request it was unpacking, keep the error. */
static void
dispatch_failed(lua_State *L, struct kernel *k) {
	if (k->unpacking) {
		k->unpacking = false;
		lua_Integer session = lua_tointeger(L, ARG_SESSION);
		lua_Integer source = lua_tointeger(L, ARG_SOURCE);
		if (session != 0 && source != 0)
			kernel_send_msg(L, k, ARG_SOURCE, PTYPE_ERROR, (int)session, lua_gettop(L) + 1);
	}
	luaL_tolstring(L, -1, NULL);
	lua_remove(L, -2);
	kernel_push_error(L, SLOT_KERNEL);
}

void
kernel_defer_error_reply(lua_State *L, int K, lua_Integer source, lua_Integer session,
                         const char *reason) {
	K = lua_absindex(L, K);
	if (kernel_uv(L, K, UV_REPLIES) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_createtable(L, 3, 0);
		lua_pushvalue(L, -1);
		lua_setiuservalue(L, K, UV_REPLIES);
	}
	lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
	lua_pushinteger(L, source);
	lua_rawseti(L, -2, n + 1);
	lua_pushinteger(L, session);
	lua_rawseti(L, -2, n + 2);
	lua_pushstring(L, reason);
	lua_rawseti(L, -2, n + 3);
	lua_pop(L, 1);
}

/* Log the errors of this dispatch, joined by newlines, when there are any. */
static void
log_errors(lua_State *L, struct kernel *k) {
	if (kernel_uv(L, SLOT_KERNEL, UV_ERRORS) != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	int e = lua_gettop(L);
	lua_pushnil(L);
	lua_setiuservalue(L, SLOT_KERNEL, UV_ERRORS);
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
	skynet_error(k->ctx, "lua call [:%08x to :%08x : %d msgsz = %zu] error : %s",
	             (uint32_t)lua_tointeger(L, ARG_SOURCE), skynet_current_handle(),
	             (int)lua_tointeger(L, ARG_SESSION), (size_t)lua_tointeger(L, ARG_SZ),
	             lua_tostring(L, -1));
	lua_pop(L, 2);
}

/* Send the error replies queued during this dispatch (after log_errors). */
static void
send_replies(lua_State *L, struct kernel *k) {
	if (kernel_uv(L, SLOT_KERNEL, UV_REPLIES) != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	int r = lua_gettop(L);
	lua_pushnil(L);
	lua_setiuservalue(L, SLOT_KERNEL, UV_REPLIES);
	lua_Integer n = (lua_Integer)lua_rawlen(L, r);
	for (lua_Integer i = 1; i + 2 <= n; i += 3) {
		lua_rawgeti(L, r, i);
		lua_rawgeti(L, r, i + 1);
		lua_rawgeti(L, r, i + 2);
		kernel_send_reason(k, lua_tointeger(L, -3), lua_tointeger(L, -2), lua_tostring(L, -1));
		lua_pop(L, 3);
	}
	lua_pop(L, 1);
}

/* A PTYPE_TRACE message for a service that has no trace protocol of its own
 * (all but a few): its payload is kept for the next request from its source
 * at once, without the pcall and the protocol lookups of raw_dispatch (it
 * comes before every traced call). True when it was. */
static bool
take_trace_message(lua_State *L, struct kernel *k) {
	if (lua_tointeger(L, ARG_PROTOTYPE) != PTYPE_TRACE)
		return false;
	kernel_tab(L, SLOT_KERNEL, UV_PROTO);
	bool own = lua_rawgeti(L, -1, PTYPE_TRACE) != LUA_TNIL;
	lua_pop(L, 2);
	if (own)
		return false;
	push_msg_string(L, ARG_MSG);
	kernel_set_trace_source(L, SLOT_KERNEL, k, ARG_SOURCE);
	kernel_trace_on(k);
	return true;
}

/* skynet.dispatch_message(prototype, msg, sz, session, source) */
int
kernel_ldispatch_message(lua_State *L) {
	lua_settop(L, ARG_SOURCE);
	struct kernel *k = kernel_push(L);
	k->trace_in = skynet_message_trace();
	// trace_read: it traced before; a message with a trailer takes the long way
	if (k->trace_in == NULL && k->trace_read && take_trace_message(L, k))
		return 0;
	lua_pushcfunction(L, raw_dispatch);
	for (int i = ARG_PROTOTYPE; i <= ARG_SOURCE; i++)
		lua_pushvalue(L, i);
	if (lua_pcall(L, ARG_SOURCE, 0, 0) != LUA_OK)
		dispatch_failed(L, k);
	k->trace_in = NULL; // points into the message: not past this dispatch
	if (k->wq_h <= k->wq_t || k->eq_h <= k->eq_t)
		kernel_run_queues(L, SLOT_KERNEL); // woken by a hook that ran outside any coroutine
	kernel_run_forks(L, SLOT_KERNEL, k);
	kernel_timers_shrink(L, SLOT_KERNEL, k);
	kernel_sessions_tidy(L, SLOT_KERNEL, k);
	log_errors(L, k);
	send_replies(L, k);
	return 0;
}

/* The C function a message runs in, for the profiler's frame names (init.c). */
lua_CFunction
kernel_dispatch_frame(void) {
	return raw_dispatch;
}
