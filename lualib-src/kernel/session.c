/*
 * skynet.kernel, sessions: send, call, ret and the session counter.
 *
 * Owns: k->last_session and k->wrapped (the counter: sessions count up to
 * KERNEL_SESSION_MAX, then start again at 1; once wrapped, every allocation
 * first skips sessions still in use), k->self; the entries of a call in
 * flight, UV_WATCHING[session] = address and UV_WAITING[session] = the
 * running coroutine (set here, cleared by dispatch.c when the reply or the
 * error comes), and the request's UV_REQ_SESSION entry, cleared by ret.
 * Reads: UV_PROTO (pack, unpack, id), UV_RUNNING, UV_REQ_SOURCE, UV_TIMERS
 * (a session in use), the running coroutine's trace (trace.c: a traced
 * coroutine's call, send, rawsend and redirect carry it in a trailer).
 *
 * A call yields "SUSPEND" with lua_yieldk; the dispatcher resumes it with
 * (true, msg, sz, session) on the reply or (false) when the call failed, and
 * the continuation (call_k, yield_call_k) finishes it.
 */

#include "kernel.h"
#include "../lua-seri.h"
#include "../lua-skynet.h"

#include <lauxlib.h>

#include <stdlib.h>
#include <string.h>

int
kernel_send_msg(lua_State *L, struct kernel *k, int dest, int type, int session, int msg) {
	return kernel_send_from(L, k, dest, 0, type, session, msg);
}

/* The address at dest must be an integer or a string (the payload is
 * freed before the error). */
static void
check_dest(lua_State *L, int dest, int msg) {
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
}

/* Send the payload at msg to dest from source, with trailer (n bytes,
 * NULL: none) after it; cap as kernel_send_traced. */
static int
send_payload(lua_State *L, struct kernel *k, int dest, uint32_t source, int type, int session,
             int msg, const void *trailer, size_t n, size_t cap) {
	check_dest(L, dest, msg);
	if (session < 0) {
		type |= PTYPE_TAG_ALLOCSESSION;
		session = 0;
	}
	struct skynet_payload p;
	skynet_payload_get(L, msg, &p);
	if (trailer != NULL) {
		p.data = skynet_trace_append(p.data, &p.sz, p.tag & PTYPE_TAG_DONTCOPY, cap, trailer, n);
		p.tag = PTYPE_TAG_DONTCOPY | PTYPE_TAG_TRACED;
	}
	return skynet_payload_send(L, k->ctx, dest, source, type, session, &p);
}

int
kernel_send_from(lua_State *L, struct kernel *k, int dest, uint32_t source, int type, int session,
                 int msg) {
	return send_payload(L, k, dest, source, type, session, msg, NULL, 0, 0);
}

int
kernel_send_traced(lua_State *L, struct kernel *k, int dest, uint32_t source, int type, int session,
                   int msg, size_t cap) {
	size_t n = 0;
	const void *trailer = k->traced_n > 0 ? kernel_trace_trailer(k, &n) : NULL;
	return send_payload(L, k, dest, source, type, session, msg, trailer, n, cap);
}

void
kernel_send_error(struct kernel *k, lua_Integer source, lua_Integer session) {
	skynet_send(k->ctx, 0, (uint32_t)source, PTYPE_ERROR, (int)session, NULL, 0);
}

void
kernel_send_reason(struct kernel *k, lua_Integer source, lua_Integer session, const char *reason) {
	size_t len = strcspn(reason, "\n");
	if (len > KERNEL_REASON_MAX)
		len = KERNEL_REASON_MAX;
	/* skynet_send copies a payload sent without PTYPE_TAG_DONTCOPY. */
	skynet_send(k->ctx, 0, (uint32_t)source, PTYPE_ERROR, (int)session, (void *)reason, len);
}

static void
trash(lua_State *L, int msg) {
	if (lua_type(L, msg) == LUA_TLIGHTUSERDATA)
		skynet_free(lua_touserdata(L, msg));
}

/* ---- the session counter ---- */

void
kernel_track(struct kernel *k, int session) {
	if (session < k->last_session)
		k->wrapped = true;
	k->last_session = session;
}

static int
genid(struct kernel *k) {
	return skynet_send(k->ctx, 0, 0, PTYPE_TAG_ALLOCSESSION, 0, NULL, 0);
}

static bool
is_session_busy(lua_State *L, int K, int session) {
	bool busy = kernel_geti(L, K, UV_WAITING, session) != LUA_TNIL;
	lua_pop(L, 1);
	if (!busy) {
		busy = kernel_geti(L, K, UV_TIMERS, session) != LUA_TNIL;
		lua_pop(L, 1);
	}
	return busy;
}

void
kernel_session_guard(lua_State *L, int K, struct kernel *k) {
	for (;;) {
		int nxt = k->last_session >= KERNEL_SESSION_MAX ? 1 : k->last_session + 1;
		if (!is_session_busy(L, K, nxt))
			return;
		k->last_session = genid(k);
	}
}

int
kernel_new_session(lua_State *L, int K, struct kernel *k) {
	if (k->wrapped)
		kernel_session_guard(L, K, k);
	int session = genid(k);
	kernel_track(k, session);
	return session;
}

/* ---- send ---- */

/* Stack: addr, typename, args... (n values), K. Packs the args with the
 * protocol's pack (msg, sz pushed) and returns the protocol's id; *cap: the
 * bytes msg's allocation holds when that pack is skynet.pack and the
 * service traces (only a traced send reads it), else 0. */
static int
pack_message(lua_State *L, int K, const struct kernel *k, int n, size_t *cap) {
	int p = kernel_get_proto(L, K, 2);
	lua_getfield(L, p, "pack");
	bool seri = k->traced_n > 0 && lua_tocfunction(L, -1) == luaseri_pack;
	for (int i = 3; i <= n; i++)
		lua_pushvalue(L, i);
	lua_call(L, n - 2, 2);
	*cap = seri ? luaseri_packed : 0; // that very call set it as it returned
	lua_getfield(L, p, "id");
	int id = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
	return id;
}

/* skynet.send(addr, typename, ...) */
int
kernel_lsend(lua_State *L) {
	if (kernel_is_zero(L, 1))
		return kernel_error_at(L, 1, "Invalid service address 0");
	int n = lua_gettop(L);
	if (n < 2)
		lua_settop(L, 2), n = 2;
	struct kernel *k = kernel_push(L);
	int K = n + 1;
	int msg = K + 2; // after the protocol
	size_t cap;
	int id = pack_message(L, K, k, n, &cap);
	return skynet_push_send_result(L, kernel_send_traced(L, k, 1, 0, id, 0, msg, cap));
}

/* The id of the protocol named at idx; raises "unknown protocol" at the caller. */
static int
proto_id(lua_State *L, int K, int idx) {
	kernel_get_proto(L, K, idx);
	lua_getfield(L, -1, "id");
	int id = (int)lua_tointeger(L, -1);
	lua_pop(L, 2);
	return id;
}

/* skynet.rawsend(addr, typename, msg, sz) */
int
kernel_lrawsend(lua_State *L) {
	enum { ARG_ADDR = 1, ARG_NAME, ARG_MSG, ARG_SZ, SLOT_KERNEL };
	lua_settop(L, ARG_SZ);
	if (kernel_is_zero(L, ARG_ADDR)) {
		if (!lua_isnil(L, ARG_SZ))
			trash(L, ARG_MSG);
		return kernel_error_at(L, 2, "Invalid service address 0");
	}
	struct kernel *k = kernel_push(L);
	int id = proto_id(L, SLOT_KERNEL, ARG_NAME);
	return skynet_push_send_result(L, kernel_send_traced(L, k, ARG_ADDR, 0, id, 0, ARG_MSG, 0));
}

/* skynet.redirect(dest, source, typename, session, msg, sz) */
int
kernel_lredirect(lua_State *L) {
	enum { ARG_DEST = 1, ARG_SOURCE, ARG_NAME, ARG_SESSION, ARG_MSG, ARG_SZ, SLOT_KERNEL };
	lua_settop(L, ARG_SZ);
	struct kernel *k = kernel_push(L);
	int id = proto_id(L, SLOT_KERNEL, ARG_NAME);
	uint32_t source = (uint32_t)luaL_checkinteger(L, ARG_SOURCE);
	int session = (int)luaL_checkinteger(L, ARG_SESSION);
	return skynet_push_send_result(
	    L, kernel_send_traced(L, k, ARG_DEST, source, id, session, ARG_MSG, 0));
}

/* ---- call ---- */

/* The "<TRACE> call <addr>" line of a traced call to the address at a
 * (config trace_lines not false, which the caller checks). */
static void
trace_call_line(lua_State *L, struct kernel *k, int a) {
	if (!kernel_push_tag(L, k, k->running)) {
		lua_pop(L, 1);
		return;
	}
	lua_pushliteral(L, "call ");
	kernel_push_address(L, a);
	lua_concat(L, 2);
	kernel_trace(L, -2, lua_tostring(L, -1));
	lua_pop(L, 2);
}

/* Raise the error of a failed send of a call to the address at a. */
static int
call_send_failed(lua_State *L, int a, int session) {
	lua_pushliteral(L, "call ");
	if (session == SKYNET_ETOOBIG) {
		lua_pushliteral(L, "to ");
		kernel_push_address(L, a);
		lua_pushliteral(L, " failed: message too large");
		lua_concat(L, 4);
	} else {
		lua_pushliteral(L, "to invalid address ");
		kernel_push_address(L, a);
		lua_concat(L, 3);
	}
	return kernel_error_at(L, 1, lua_tostring(L, -1));
}

/* new_call(addr at a, id, payload at msg, cap as kernel_send_traced): sends
 * with a fresh session, returns it. */
static int
new_call(lua_State *L, int K, struct kernel *k, int a, int id, int msg, size_t cap, int level) {
	if (kernel_is_zero(L, a)) {
		if (!lua_isnoneornil(L, msg + 1))
			trash(L, msg);
		kernel_error_at(L, level, "Invalid service address 0");
	}
	if (k->traced_n > 0 && !k->trace_quiet)
		trace_call_line(L, k, a);
	if (k->wrapped)
		kernel_session_guard(L, K, k);
	int session = kernel_send_traced(L, k, a, 0, id, -1, msg, cap);
	if (session < 0)
		return call_send_failed(L, a, session);
	kernel_track(k, session);
	return session;
}

/* Register the running thread for a reply on session from addr (at a). */
static void
wait_reply(lua_State *L, int K, int a, lua_Integer session) {
	lua_pushvalue(L, a);
	kernel_seti(L, K, UV_WATCHING, session);
	kernel_push_running(L, K);
	kernel_seti(L, K, UV_WAITING, session);
}

/* After a reply: the value at ok is its first. Raises "call failed" on false. */
static void
reply_check(lua_State *L, int K, int ok, lua_Integer session) {
	lua_pushnil(L);
	kernel_seti(L, K, UV_WATCHING, session);
	if (!lua_toboolean(L, ok))
		kernel_error_at(L, 1, "call failed");
}

/* The stack of a suspended skynet.call, and what the resume adds. */
enum {
	CALL_ADDR = 1,
	CALL_PROTO,
	CALL_SESSION,
	CALL_KERNEL,
	CALL_OK, // from the resume: ok, msg, sz, session
	CALL_MSG,
	CALL_SZ,
	CALL_REPLY_SESSION,
};

static int
call_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(L, CALL_REPLY_SESSION);
	reply_check(L, CALL_KERNEL, CALL_OK, lua_tointeger(L, CALL_SESSION));
	lua_getfield(L, CALL_PROTO, "unpack");
	lua_pushvalue(L, CALL_MSG);
	lua_pushvalue(L, CALL_SZ);
	lua_call(L, 2, LUA_MULTRET);
	return lua_gettop(L) - CALL_REPLY_SESSION;
}

/* skynet.call(addr, typename, ...) */
int
kernel_lcall(lua_State *L) {
	int n = lua_gettop(L);
	if (n < 2)
		lua_settop(L, 2), n = 2;
	struct kernel *k = kernel_push(L);
	int K = n + 1;
	int p = K + 1;
	int msg = K + 2;
	size_t cap;
	int id = pack_message(L, K, k, n, &cap);
	int session = new_call(L, K, k, 1, id, msg, cap, 1);
	lua_pushvalue(L, 1);
	lua_pushvalue(L, p);
	lua_pushinteger(L, session);
	lua_pushvalue(L, K);
	lua_rotate(L, 1, 4);
	lua_settop(L, CALL_KERNEL);
	wait_reply(L, CALL_KERNEL, CALL_ADDR, session);
	lua_pushliteral(L, "SUSPEND");
	return lua_yieldk(L, 1, 0, call_k);
}

/* The stack of a suspended S.yield_call, and what the resume adds. */
enum {
	YCALL_ADDR = 1,
	YCALL_SESSION,
	YCALL_KERNEL,
	YCALL_OK,
	YCALL_MSG,
	YCALL_SZ,
	YCALL_REPLY_SESSION,
};

static int
yield_call_k(lua_State *L, int status, lua_KContext ctx) {
	(void)status;
	(void)ctx;
	lua_settop(L, YCALL_REPLY_SESSION);
	reply_check(L, YCALL_KERNEL, YCALL_OK, lua_tointeger(L, YCALL_SESSION));
	lua_pushvalue(L, YCALL_MSG);
	lua_pushvalue(L, YCALL_SZ);
	return 2;
}

/* S.yield_call(addr, session) -> msg, sz */
int
kernel_lyield_call(lua_State *L) {
	lua_settop(L, YCALL_SESSION);
	kernel_push(L);
	lua_Integer session = lua_tointeger(L, YCALL_SESSION);
	wait_reply(L, YCALL_KERNEL, YCALL_ADDR, session);
	lua_pushliteral(L, "SUSPEND");
	return lua_yieldk(L, 1, 0, yield_call_k);
}

/* S.new_call(addr, id, msg, sz) -> session */
int
kernel_lnew_call(lua_State *L) {
	enum { ARG_ADDR = 1, ARG_ID, ARG_MSG, ARG_SZ, SLOT_KERNEL };
	lua_settop(L, ARG_SZ);
	struct kernel *k = kernel_push(L);
	int id = (int)luaL_checkinteger(L, ARG_ID);
	lua_pushinteger(L, new_call(L, SLOT_KERNEL, k, ARG_ADDR, id, ARG_MSG, 0, 2));
	return 1;
}

/*
 * S.call_handler(addr, id, handler, msg, sz) -> session: a call whose reply
 * is handed at once, without a coroutine, to handler[1](handler, session, ok,
 * msg, sz) (ok false when the call failed). Raises as skynet.call does when
 * the message cannot be sent; then nothing is registered.
 */
int
kernel_lcall_handler(lua_State *L) {
	enum { ARG_ADDR = 1, ARG_ID, ARG_HANDLER, ARG_MSG, ARG_SZ, SLOT_KERNEL };
	lua_settop(L, ARG_SZ);
	struct kernel *k = kernel_push(L);
	int id = (int)luaL_checkinteger(L, ARG_ID);
	int session = new_call(L, SLOT_KERNEL, k, ARG_ADDR, id, ARG_MSG, 0, 2);
	lua_pushvalue(L, ARG_HANDLER);
	kernel_seti(L, SLOT_KERNEL, UV_WAITING, session);
	lua_pushvalue(L, ARG_ADDR);
	kernel_seti(L, SLOT_KERNEL, UV_WATCHING, session);
	lua_pushinteger(L, session);
	return 1;
}

/*
 * S.drop_handler(session, handler): forget a call of S.call_handler; when
 * handler still waits on session, its late reply is dropped when it comes.
 */
int
kernel_ldrop_handler(lua_State *L) {
	enum { ARG_SESSION = 1, ARG_HANDLER, SLOT_KERNEL };
	lua_settop(L, ARG_HANDLER);
	kernel_push(L);
	lua_Integer session = luaL_checkinteger(L, ARG_SESSION);
	if (kernel_geti(L, SLOT_KERNEL, UV_WAITING, session) == LUA_TTABLE &&
	    lua_rawequal(L, -1, ARG_HANDLER)) {
		lua_pushliteral(L, "BREAK");
		kernel_seti(L, SLOT_KERNEL, UV_WAITING, session);
	}
	lua_pop(L, 1);
	lua_pushnil(L);
	kernel_seti(L, SLOT_KERNEL, UV_WATCHING, session);
	return 0;
}

/* ---- ret ---- */

enum { RET_MSG = 1, RET_SZ, RET_KERNEL, RET_RUNNING, RET_SESSION, RET_SOURCE };

/* ret(msg, sz) with the payload at RET_MSG, RET_SZ */
static int
ret(lua_State *L) {
	lua_settop(L, RET_SZ);
	struct kernel *k = kernel_push(L);
	kernel_push_running(L, RET_KERNEL);
	if (kernel_get(L, RET_KERNEL, UV_REQ_SESSION, RET_RUNNING) == LUA_TNIL) {
		if (!lua_isnil(L, RET_SZ))
			trash(L, RET_MSG); // ret owns the buffer on every path
		return kernel_error_at(L, 1, "No session");
	}
	lua_Integer session = lua_tointeger(L, RET_SESSION);
	lua_pushnil(L);
	kernel_set(L, RET_KERNEL, UV_REQ_SESSION, RET_RUNNING);
	if (session == 0) {
		if (!lua_isnil(L, RET_SZ))
			trash(L, RET_MSG);
		lua_pushboolean(L, 0);
		return 1;
	}
	kernel_get(L, RET_KERNEL, UV_REQ_SOURCE, RET_RUNNING);
	if (lua_isnil(L, RET_MSG)) {
		lua_pushliteral(L, "");
		lua_replace(L, RET_MSG);
	}
	int r = kernel_send_msg(L, k, RET_SOURCE, PTYPE_RESPONSE, (int)session, RET_MSG);
	if (r == SKYNET_ETOOBIG)
		kernel_send_error(k, lua_tointeger(L, RET_SOURCE), session);
	lua_pushboolean(L, r >= 0);
	return 1;
}

int
kernel_lret(lua_State *L) {
	return ret(L);
}

int
kernel_lretpack(lua_State *L) {
	luaseri_pack(L);
	lua_rotate(L, 1, 2);
	return ret(L);
}

/* ---- the request a coroutine serves, and detached responses ---- */

/*
 * S.request(take) -> session, source of the request the running coroutine
 * serves (nil, nil: none). With take true its session is forgotten: the reply
 * will not come through skynet.ret (skynet.response, skynet.ignoreret).
 */
int
kernel_lrequest(lua_State *L) {
	enum { ARG_TAKE = 1, SLOT_KERNEL, SLOT_RUNNING, SLOT_SESSION, SLOT_SOURCE };
	lua_settop(L, ARG_TAKE);
	kernel_push(L);
	kernel_push_running(L, SLOT_KERNEL);
	kernel_get(L, SLOT_KERNEL, UV_REQ_SESSION, SLOT_RUNNING);
	kernel_get(L, SLOT_KERNEL, UV_REQ_SOURCE, SLOT_RUNNING);
	if (lua_toboolean(L, ARG_TAKE) && !lua_isnil(L, SLOT_SESSION)) {
		lua_pushnil(L);
		kernel_set(L, SLOT_KERNEL, UV_REQ_SESSION, SLOT_RUNNING);
	}
	return 2;
}

/* S.owe(resp, source): the response closure resp owes source a reply; the
 * last will fails it, the death of source forgets it. */
int
kernel_lowe(lua_State *L) {
	enum { ARG_RESP = 1, ARG_SOURCE, SLOT_KERNEL };
	lua_settop(L, ARG_SOURCE);
	kernel_push(L);
	lua_pushvalue(L, ARG_SOURCE);
	kernel_set(L, SLOT_KERNEL, UV_UNRESPONSE, ARG_RESP);
	return 0;
}

/* S.owes(resp, settle) -> whether resp still owes its reply; with settle
 * true it no longer does. */
int
kernel_lowes(lua_State *L) {
	enum { ARG_RESP = 1, ARG_SETTLE, SLOT_KERNEL };
	lua_settop(L, ARG_SETTLE);
	kernel_push(L);
	bool owes = kernel_get(L, SLOT_KERNEL, UV_UNRESPONSE, ARG_RESP) != LUA_TNIL;
	if (owes && lua_toboolean(L, ARG_SETTLE)) {
		lua_pushnil(L);
		kernel_set(L, SLOT_KERNEL, UV_UNRESPONSE, ARG_RESP);
	}
	lua_pushboolean(L, owes);
	return 1;
}

/* ---- ids ---- */

int
kernel_lgenid(lua_State *L) {
	struct kernel *k = kernel_push(L);
	lua_pushinteger(L, kernel_new_session(L, lua_gettop(L), k));
	return 1;
}

uint32_t
kernel_self(struct kernel *k) {
	if (k->self == 0) {
		const char *r = skynet_command(k->ctx, "REG", NULL);
		if (r != NULL && r[0] == ':')
			k->self = (uint32_t)strtoul(r + 1, NULL, 16);
	}
	return k->self;
}

int
kernel_lself(lua_State *L) {
	uint32_t self = kernel_self(kernel_push(L));
	if (self == 0)
		lua_pushnil(L);
	else
		lua_pushinteger(L, self);
	return 1;
}

int
kernel_laddress(lua_State *L) {
	lua_settop(L, 1);
	kernel_push_address(L, 1);
	return 1;
}
