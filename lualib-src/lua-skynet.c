/*
 * skynet.core: the C binding skynet.lua is built on.
 *
 * Every function reaches its service through the light userdata the host
 * stores in the registry under "skynet_context"; opening the module in a
 * state without one raises.
 *
 * Payloads. Where a function takes "msg[, sz]": a string is copied by the
 * core (the empty string is sent as NULL, 0); a light userdata plus an
 * integer size is donated (PTYPE_TAG_DONTCOPY: the core owns it on every
 * path, also when the send fails); nil or nothing sends NULL, 0.
 *
 * Addresses. An integer handle, or a string ":hex", ".name" or global name
 * (sent through skynet_sendname). Any other type raises
 * "dest address type (<type>) must be a string or number.".
 *
 * API (all names live in the table require "skynet.core" returns):
 *   send(addr, type, session|nil, msg[, sz]) -> session | nil | false
 *       nil session: the core allocates one (PTYPE_TAG_ALLOCSESSION) and it
 *       is returned. nil: the address is dead or unknown. false: the payload
 *       is too large. Otherwise the session (0 for a plain send).
 *   redirect(addr, source, type, session, msg[, sz]) -> as send
 *       Sends with a forged source (0: self) and an explicit session.
 *   genid() -> session              A fresh session; nothing is sent.
 *   command(cmd[, param]) -> string | nil
 *   intcommand(cmd[, int|string]) -> integer | number | nil
 *       A number param is sent as a decimal integer (floats truncate). The
 *       result is an integer when it reads as one, else a float; any other
 *       text raises "Invalid result <text>".
 *   addresscommand(cmd[, param]) -> handle | nil    (":hex" results)
 *   error(...)                     Logs the arguments, each through
 *       luaL_tolstring (so __tostring/__name apply), joined by one space.
 *   harbor(handle) -> harbor_id, is_remote
 *   callback(f[, forward])
 *       Makes f the service's message callback, called on the state's main
 *       thread as f(type, msg, sz, session, source) with msg a light
 *       userdata (possibly NULL) valid only during the call. Without forward
 *       the core frees msg after f returns; with forward it does not (f must
 *       trash or pass it on). An error escaping f is logged as
 *       "lua call [:%08x to :%08x : %d msgsz = %zu] error : <traceback>".
 *       No table is allocated per message. When the host stores C functions
 *       in the registry under "snlua.enter" and "snlua.leave" (snlua does),
 *       each message runs between enter(L) and leave(L), called directly
 *       (not through lua_call) with the main thread; they use no stack slot.
 *   trace(tag, text[, co][, level])
 *       Logs "<TRACE tag> <hpc ns> text". With co (a thread) or level (an
 *       integer, default 1 when only co is given) it appends
 *       " : src:line src:line ..." for the Lua frames of co (default: the
 *       running coroutine) from that level outwards.
 *   tostring(msg, sz) -> string | nil   Copies a buffer (strings pass through).
 *   trash(msg, sz)                  Frees a light userdata buffer; strings ignored.
 *   pack(...) -> msg, sz; packstring(...) -> string; unpack(msg, sz | str)
 *       The value serialization of lua-seri.h.
 *   now() -> integer                skynet_now(): centiseconds since node start.
 *   hpc() -> integer                CLOCK_MONOTONIC in nanoseconds.
 *   walltime() -> number            The wall clock, float seconds since the
 *       epoch: CLOCK_REALTIME (it steps when the clock is set); with config
 *       timer = "virtual", starttime + now/100, so it moves with virtual time.
 *       The mode is read once, when the module is opened.
 *   timeout(ti) -> session, object  Arms a timer: a response with the new
 *       session arrives after ti cs (at once when ti <= 0). ti is floored
 *       when it is not an integer (a float or a numeric string); anything
 *       else raises "skynet.timeout: time must be a number". object is a
 *       light userdata whose address is the session (skynet.timeout returns
 *       it). Same as the TIMEOUT command without the text round trip.
 *   timeout_cancel(session) -> boolean
 *       Cancels this service's pending timer for session (true), or finds
 *       none because it fired or never existed (false).
 */

#include "skynet.h"
#include "lua-seri.h"
#include "lua-skynet.h"

#include <lauxlib.h>
#include <lua.h>

#include <inttypes.h>
#include <stdbool.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CORE_TRACE_FRAMES 32 // deepest stack trace() writes

/* Registry keys: their addresses are unique per process. */
static const char CALLBACK_KEY = 0; // the Lua message callback
static const char RUNNER_KEY = 0;   // the struct lua_runner of the state

/* The callback's ud: one per state, a full userdata anchored in the registry. */
struct lua_runner {
	lua_State *L;        // borrowed: the main thread, lives as long as this record
	lua_CFunction enter; // the host's hooks around each message, or NULL
	lua_CFunction leave;
};

static struct skynet_context *
ctx_of(lua_State *L) {
	return lua_touserdata(L, lua_upvalueindex(1));
}

/* ---- sending ----------------------------------------------------------- */

void
skynet_payload_get(lua_State *L, int idx, struct skynet_payload *p) {
	p->data = NULL;
	p->sz = 0;
	p->tag = 0;
	switch (lua_type(L, idx)) {
	case LUA_TSTRING: {
		size_t len = 0;
		const char *s = lua_tolstring(L, idx, &len);
		if (len > 0) {
			p->data = (void *)s; // without DONTCOPY the core only reads it
			p->sz = len;
		}
		break;
	}
	case LUA_TLIGHTUSERDATA: {
		lua_Integer sz = luaL_checkinteger(L, idx + 1);
		luaL_argcheck(L, sz >= 0, idx + 1, "negative size");
		p->data = lua_touserdata(L, idx);
		p->sz = (size_t)sz;
		p->tag = PTYPE_TAG_DONTCOPY;
		break;
	}
	case LUA_TNONE:
	case LUA_TNIL:
		break;
	default:
		luaL_error(L, "skynet.core: invalid message type (%s)", luaL_typename(L, idx));
	}
}

/*
 * Raise unless the value at idx is an integer handle or a string. The payload
 * at msg_idx is donated even then: a light userdata there is freed first.
 */
static void
check_address(lua_State *L, int idx, int msg_idx) {
	int t = lua_type(L, idx);
	int is_int = 0;
	if (t == LUA_TNUMBER)
		(void)lua_tointegerx(L, idx, &is_int);
	if (t == LUA_TSTRING || is_int)
		return;
	if (lua_type(L, msg_idx) == LUA_TLIGHTUSERDATA)
		skynet_free(lua_touserdata(L, msg_idx));
	if (t == LUA_TNUMBER)
		luaL_argerror(L, idx, "handle must be an integer");
	luaL_error(L, "dest address type (%s) must be a string or number.", lua_typename(L, t));
}

int
skynet_payload_send(lua_State *L, struct skynet_context *ctx, int addr_idx, uint32_t source,
                    int type, int session, const struct skynet_payload *p) {
	type |= p->tag;
	if (lua_type(L, addr_idx) == LUA_TNUMBER) {
		uint32_t dest = (uint32_t)lua_tointeger(L, addr_idx);
		return skynet_send(ctx, source, dest, type, session, p->data, p->sz);
	}
	const char *dest = lua_tostring(L, addr_idx);
	return skynet_sendname(ctx, source, dest, type, session, p->data, p->sz);
}

int
skynet_push_send_result(lua_State *L, int r) {
	if (r >= 0)
		lua_pushinteger(L, r);
	else if (r == SKYNET_ETOOBIG)
		lua_pushboolean(L, 0);
	else
		lua_pushnil(L);
	return 1;
}

static int
lsend(lua_State *L) {
	check_address(L, 1, 4);
	int type = (int)luaL_checkinteger(L, 2);
	int session = 0;
	if (lua_isnil(L, 3))
		type |= PTYPE_TAG_ALLOCSESSION;
	else
		session = (int)luaL_checkinteger(L, 3);
	struct skynet_payload p;
	skynet_payload_get(L, 4, &p);
	return skynet_push_send_result(L, skynet_payload_send(L, ctx_of(L), 1, 0, type, session, &p));
}

static int
lredirect(lua_State *L) {
	check_address(L, 1, 5);
	uint32_t source = (uint32_t)luaL_checkinteger(L, 2);
	int type = (int)luaL_checkinteger(L, 3);
	int session = (int)luaL_checkinteger(L, 4);
	struct skynet_payload p;
	skynet_payload_get(L, 5, &p);
	return skynet_push_send_result(L,
	                               skynet_payload_send(L, ctx_of(L), 1, source, type, session, &p));
}

static int
lgenid(lua_State *L) {
	int session = skynet_send(ctx_of(L), 0, 0, PTYPE_TAG_ALLOCSESSION, 0, NULL, 0);
	lua_pushinteger(L, session);
	return 1;
}

static int
ltimeout(lua_State *L) {
	if (!lua_isinteger(L, 1)) {
		/* Any number or numeric string, floored as math.floor would. */
		int isnum;
		lua_Number n = lua_tonumberx(L, 1, &isnum);
		if (!isnum) {
			lua_pushliteral(L, "skynet.timeout: time must be a number");
			return lua_error(L);
		}
		lua_Number f = floor(n);
		lua_Integer i;
		if (lua_numbertointeger(f, &i))
			lua_pushinteger(L, i);
		else
			lua_pushnumber(L, f);
		lua_replace(L, 1);
	}
	lua_Integer ti = luaL_checkinteger(L, 1); // a float past the integers raises here
	if (ti > INT_MAX)
		ti = INT_MAX;
	else if (ti < INT_MIN)
		ti = INT_MIN;
	int session = skynet_timeout_new(ctx_of(L), (int)ti);
	lua_pushinteger(L, session);
	lua_pushlightuserdata(L, (void *)(intptr_t)session);
	return 2;
}

/* ---- commands ---------------------------------------------------------- */

static int
lcommand(lua_State *L) {
	const char *cmd = luaL_checkstring(L, 1);
	const char *parm = luaL_optstring(L, 2, NULL);
	const char *result = skynet_command(ctx_of(L), cmd, parm);
	if (result == NULL)
		lua_pushnil(L);
	else
		lua_pushstring(L, result);
	return 1;
}

/* Push the number result reads as; false when it is not a number. */
static bool
push_number_text(lua_State *L, const char *result) {
	char *end = NULL;
	long long i = strtoll(result, &end, 10);
	if (end != result && *end == '\0') {
		lua_pushinteger(L, (lua_Integer)i);
		return true;
	}
	double d = strtod(result, &end);
	if (end != result && *end == '\0') {
		lua_pushnumber(L, d);
		return true;
	}
	return false;
}

static int
lintcommand(lua_State *L) {
	const char *cmd = luaL_checkstring(L, 1);
	const char *parm = NULL;
	char num[32];
	if (lua_type(L, 2) == LUA_TNUMBER) {
		lua_Integer n = 0;
		if (lua_isinteger(L, 2)) {
			n = lua_tointeger(L, 2);
		} else {
			lua_Number f = lua_tonumber(L, 2);
			luaL_argcheck(L, f > -9.2e18 && f < 9.2e18, 2, "number out of range");
			n = (lua_Integer)f;
		}
		snprintf(num, sizeof(num), "%" PRId64, (int64_t)n);
		parm = num;
	} else {
		parm = luaL_optstring(L, 2, NULL);
	}
	const char *result = skynet_command(ctx_of(L), cmd, parm);
	if (result == NULL) {
		lua_pushnil(L);
		return 1;
	}
	if (!push_number_text(L, result))
		return luaL_error(L, "Invalid result %s", result);
	return 1;
}

static int
laddresscommand(lua_State *L) {
	const char *cmd = luaL_checkstring(L, 1);
	const char *parm = luaL_optstring(L, 2, NULL);
	const char *result = skynet_command(ctx_of(L), cmd, parm);
	if (result == NULL || result[0] != ':') {
		lua_pushnil(L);
		return 1;
	}
	lua_pushinteger(L, (lua_Integer)strtoul(result + 1, NULL, 16));
	return 1;
}

/* ---- logging ----------------------------------------------------------- */

static int
lerror(lua_State *L) {
	int n = lua_gettop(L);
	if (n <= 1) {
		lua_settop(L, 1);
		skynet_error(ctx_of(L), "%s", luaL_tolstring(L, 1, NULL));
		return 0;
	}
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	for (int i = 1; i <= n; i++) {
		luaL_tolstring(L, i, NULL);
		luaL_addvalue(&b);
		if (i < n)
			luaL_addchar(&b, ' ');
	}
	luaL_pushresult(&b);
	skynet_error(ctx_of(L), "%s", lua_tostring(L, -1));
	return 0;
}

/* Append " src:line" for each Lua frame of co from level outwards. */
static void
add_frames(luaL_Buffer *b, lua_State *co, int level) {
	lua_Debug ar;
	luaL_addstring(b, " :");
	for (int i = 0; i < CORE_TRACE_FRAMES && lua_getstack(co, level + i, &ar); i++) {
		lua_getinfo(co, "Sl", &ar);
		if (ar.currentline < 0)
			continue;
		char line[32];
		snprintf(line, sizeof(line), ":%d", ar.currentline);
		luaL_addchar(b, ' ');
		luaL_addstring(b, ar.short_src);
		luaL_addstring(b, line);
	}
}

static int
ltrace(lua_State *L) {
	const char *tag = luaL_checkstring(L, 1);
	const char *text = luaL_checkstring(L, 2);
	lua_State *co = lua_tothread(L, 3);
	bool frames = co != NULL || lua_type(L, 3) == LUA_TNUMBER || lua_type(L, 4) == LUA_TNUMBER;
	int level = 1;
	if (co == NULL && lua_type(L, 3) == LUA_TNUMBER)
		level = (int)lua_tointeger(L, 3);
	else
		level = (int)luaL_optinteger(L, 4, 1);
	if (co == NULL)
		co = L;
	char head[64];
	snprintf(head, sizeof(head), "> %" PRIu64 " ", skynet_monotonic_ns());
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "<TRACE ");
	luaL_addstring(&b, tag);
	luaL_addstring(&b, head);
	luaL_addstring(&b, text);
	if (frames)
		add_frames(&b, co, level);
	luaL_pushresult(&b);
	skynet_error(ctx_of(L), "%s", lua_tostring(L, -1));
	return 0;
}

static int
lharbor(lua_State *L) {
	uint32_t handle = (uint32_t)luaL_checkinteger(L, 1);
	int harbor = 0;
	bool remote = skynet_isremote(ctx_of(L), handle, &harbor);
	lua_pushinteger(L, harbor);
	lua_pushboolean(L, remote);
	return 2;
}

/* ---- buffers and time -------------------------------------------------- */

static int
ltostring(lua_State *L) {
	switch (lua_type(L, 1)) {
	case LUA_TSTRING:
		lua_settop(L, 1);
		return 1;
	case LUA_TLIGHTUSERDATA: {
		lua_Integer sz = luaL_checkinteger(L, 2);
		luaL_argcheck(L, sz >= 0, 2, "negative size");
		const char *msg = lua_touserdata(L, 1);
		lua_pushlstring(L, msg ? msg : "", msg ? (size_t)sz : 0);
		return 1;
	}
	case LUA_TNONE:
	case LUA_TNIL:
		lua_pushnil(L);
		return 1;
	default:
		return luaL_argerror(L, 1, "expected a light userdata or string");
	}
}

static int
ltrash(lua_State *L) {
	if (lua_type(L, 1) == LUA_TLIGHTUSERDATA)
		skynet_free(lua_touserdata(L, 1));
	return 0;
}

static int
lnow(lua_State *L) {
	lua_pushinteger(L, (lua_Integer)skynet_now());
	return 1;
}

static int
lhpc(lua_State *L) {
	lua_pushinteger(L, (lua_Integer)skynet_monotonic_ns());
	return 1;
}

/* Upvalue 1: the node's start time (an integer) in virtual time, nil in real time. */
static int
lwalltime(lua_State *L) {
	if (lua_isinteger(L, lua_upvalueindex(1))) {
		lua_Integer start = lua_tointeger(L, lua_upvalueindex(1));
		lua_pushnumber(L, (lua_Number)start + (lua_Number)skynet_now() / 100.0);
		return 1;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
	return 1;
}

/* Push the walltime closure for ctx: decides virtual or real time once. */
static void
push_walltime(lua_State *L, struct skynet_context *ctx) {
	const char *mode = skynet_command(ctx, "GETENV", "timer");
	if (mode != NULL && strcmp(mode, "virtual") == 0) {
		const char *start = skynet_command(ctx, "STARTTIME", NULL);
		lua_pushinteger(L, start ? (lua_Integer)strtoull(start, NULL, 10) : 0);
	} else {
		lua_pushnil(L);
	}
	lua_pushcclosure(L, lwalltime, 1);
}

static int
ltimeout_cancel(lua_State *L) {
	int session = (int)luaL_checkinteger(L, 1);
	lua_pushboolean(L, skynet_timeout_cancel(ctx_of(L), session) == 0);
	return 1;
}

/* ---- tracebacks --------------------------------------------------------- */

#define TRACEBACK_HEAD "\nstack traceback:"
#define EMPTY_FRAME    "\t[C]: in ?"

void
skynet_push_traceback(lua_State *L, lua_State *co, const char *msg, int level) {
	if (msg == NULL)
		msg = "(no message)";
	if (strstr(msg, TRACEBACK_HEAD) != NULL) {
		lua_pushstring(L, msg);
		return;
	}
	luaL_traceback(L, co, msg, level);
	const char *tb = lua_tostring(L, -1) + strlen(msg);
	if (strncmp(tb, TRACEBACK_HEAD, strlen(TRACEBACK_HEAD)) != 0)
		return;
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, msg);
	luaL_addstring(&b, TRACEBACK_HEAD);
	size_t frames = 0;
	const char *line = tb + strlen(TRACEBACK_HEAD);
	while (*line == '\n') {
		const char *next = strchr(line + 1, '\n');
		size_t len = next ? (size_t)(next - line) : strlen(line);
		if (len - 1 != strlen(EMPTY_FRAME) || strncmp(line + 1, EMPTY_FRAME, len - 1) != 0) {
			luaL_addlstring(&b, line, len);
			frames++;
		}
		line += len;
	}
	luaL_pushresult(&b); // above the traceback: the buffer may sit on the stack
	lua_remove(L, -2);
	if (frames == 0) {
		lua_pop(L, 1);
		lua_pushstring(L, msg);
	}
}

/* ---- the message callback ---------------------------------------------- */

static int
traceback(lua_State *L) {
	const char *msg = lua_tostring(L, 1);
	if (msg == NULL)
		msg = luaL_tolstring(L, 1, NULL);
	skynet_push_traceback(L, L, msg, 1);
	return 1;
}

/* Run the Lua callback on the main thread; errors are logged here. */
static void
dispatch(struct skynet_context *ctx, struct lua_runner *r, int type, int session, uint32_t source,
         const void *msg, size_t sz) {
	lua_State *L = r->L;
	int top = lua_gettop(L);
	lua_pushcfunction(L, traceback);
	lua_rawgetp(L, LUA_REGISTRYINDEX, &CALLBACK_KEY);
	lua_pushinteger(L, type);
	lua_pushlightuserdata(L, (void *)msg);
	lua_pushinteger(L, (lua_Integer)sz);
	lua_pushinteger(L, session);
	lua_pushinteger(L, source);
	if (r->enter != NULL)
		r->enter(L);
	int status = lua_pcall(L, 5, 0, top + 1);
	if (r->leave != NULL)
		r->leave(L);
	if (status != LUA_OK) {
		const char *err = lua_tostring(L, -1);
		skynet_error(ctx, "lua call [:%08x to :%08x : %d msgsz = %zu] error : %s", source,
		             skynet_current_handle(), session, sz, err ? err : "(error object)");
	}
	lua_settop(L, top);
}

static int
callback_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
            const void *msg, size_t sz) {
	dispatch(ctx, ud, type, session, source, msg, sz);
	return 0;
}

static int
forward_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
           const void *msg, size_t sz) {
	dispatch(ctx, ud, type, session, source, msg, sz);
	return 1; // the Lua side keeps msg (it trashes or redirects it)
}

static lua_CFunction
registry_cfunction(lua_State *L, const char *name) {
	lua_getfield(L, LUA_REGISTRYINDEX, name);
	lua_CFunction f = lua_tocfunction(L, -1);
	lua_pop(L, 1);
	return f;
}

/* The state's runner record, made on first use; it is never replaced. */
static struct lua_runner *
runner_of(lua_State *L) {
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &RUNNER_KEY) == LUA_TUSERDATA) {
		struct lua_runner *r = lua_touserdata(L, -1);
		lua_pop(L, 1);
		return r;
	}
	lua_pop(L, 1);
	struct lua_runner *r = lua_newuserdatauv(L, sizeof(*r), 0);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &RUNNER_KEY);
	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
	r->L = lua_tothread(L, -1);
	lua_pop(L, 1);
	r->enter = registry_cfunction(L, "snlua.enter");
	r->leave = registry_cfunction(L, "snlua.leave");
	return r;
}

static int
lcallback(lua_State *L) {
	luaL_checktype(L, 1, LUA_TFUNCTION);
	bool forward = lua_toboolean(L, 2);
	lua_settop(L, 1);
	struct lua_runner *r = runner_of(L);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &CALLBACK_KEY);
	skynet_callback(ctx_of(L), r, forward ? forward_cb : callback_cb);
	return 0;
}

LUAMOD_API int
luaopen_skynet_core(lua_State *L) {
	luaL_checkversion(L);
	static const luaL_Reg funcs[] = {
	    {"send", lsend},
	    {"redirect", lredirect},
	    {"genid", lgenid},
	    {"command", lcommand},
	    {"intcommand", lintcommand},
	    {"addresscommand", laddresscommand},
	    {"error", lerror},
	    {"harbor", lharbor},
	    {"callback", lcallback},
	    {"trace", ltrace},
	    {"tostring", ltostring},
	    {"trash", ltrash},
	    {"now", lnow},
	    {"hpc", lhpc},
	    {"timeout", ltimeout},
	    {"timeout_cancel", ltimeout_cancel},
	    {NULL, NULL},
	};
	static const luaL_Reg seri[] = {
	    {"pack", luaseri_pack},
	    {"packstring", luaseri_packstring},
	    {"unpack", luaseri_unpack},
	    {NULL, NULL},
	};
	luaL_newlibtable(L, funcs);
	lua_getfield(L, LUA_REGISTRYINDEX, "skynet_context");
	struct skynet_context *ctx = lua_touserdata(L, -1);
	if (ctx == NULL)
		return luaL_error(L, "skynet.core: no skynet_context in the registry (not in a service)");
	luaL_setfuncs(L, funcs, 1);
	luaL_setfuncs(L, seri, 0);
	push_walltime(L, ctx);
	lua_setfield(L, -2, "walltime");
	return 1;
}
