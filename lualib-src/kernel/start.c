/*
 * skynet.kernel, start: skynet.start and skynet.init_service.
 *
 * skynet.start(f) installs dispatch_message as the service's callback and
 * arms a timer of 0: its job runs init_service(f) in a pooled coroutine.
 * init_service runs skynet.require's init_all, then f, under xpcall; it
 * tells the launcher LAUNCHOK, or ERROR and exits the service. A service
 * started before the launcher (the bootstrap, the launcher itself) that
 * fails stops the node with exit status 1.
 *
 * Owns: UV_INIT_THREAD (the start coroutine while it runs: S.init_thread()).
 * Reads: UV_REQUIRE, UV_SKYNET (exit), UV_RUNNING.
 */

#include "kernel.h"
#include "../lua-skynet.h"

#include <lauxlib.h>

#include <string.h>

/* The xpcall handler of init_service: the error with the stack from where it
 * was raised, less frames that say nothing; a failed call whose error carried
 * a reason: "<error> (<reason>)" alone (the reason was logged where it rose). */
static int
init_traceback(lua_State *L) {
	if (lua_type(L, 1) != LUA_TSTRING && !lua_isnoneornil(L, 1))
		return 1; // debug.traceback leaves other values alone
	const char *msg = lua_tostring(L, 1);
	if (msg == NULL)
		msg = "nil";
	lua_pushthread(L);
	const char *cause = kernel_co_cause(L, -1, msg);
	if (cause != NULL) {
		lua_pushfstring(L, "%s (%s)", msg, cause);
		return 1;
	}
	skynet_push_traceback(L, L, msg, 1);
	return 1;
}

/* Push the reason of the start error at err: the text before the traceback,
 * or for a failed call the reason its error carried (in the parentheses). */
static void
push_start_reason(lua_State *L, int err) {
	const char *text = lua_tostring(L, err);
	const char *tb = strstr(text, "\nstack traceback:");
	size_t len = tb ? (size_t)(tb - text) : strlen(text);
	lua_pushlstring(L, text, len);
	const char *first = lua_tostring(L, -1);
	const char *open = strstr(first, "call failed (");
	if (tb == NULL && open != NULL && first[len - 1] == ')') {
		open += strlen("call failed (");
		lua_pushlstring(L, open, (size_t)(first + len - 1 - open));
		lua_remove(L, -2);
	}
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
	kernel_push(L);
	kernel_uv(L, lua_gettop(L), UV_REQUIRE);
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

/* The stack of init_service. */
enum { INIT_START = 1, INIT_KERNEL, INIT_S, INIT_HANDLER };

/* skynet.send(".launcher", "lua", cmd[, the text at reason]) (reason 0: none);
 * leaves the stack at INIT_S. */
static void
tell_launcher(lua_State *L, const char *cmd, int reason) {
	lua_pushcfunction(L, kernel_lsend);
	lua_pushliteral(L, ".launcher");
	lua_pushliteral(L, "lua");
	lua_pushstring(L, cmd);
	if (reason != 0)
		lua_pushvalue(L, reason);
	lua_call(L, reason != 0 ? 4 : 3, 0);
	lua_settop(L, INIT_S);
}

/* Stack: start, K, S, handler, [error] */
static int
init_done(lua_State *L, int status, lua_KContext ctx) {
	(void)ctx;
	struct kernel *k = lua_touserdata(L, INIT_KERNEL);
	lua_pushnil(L);
	lua_setiuservalue(L, INIT_KERNEL, UV_INIT_THREAD);
	if (status == LUA_OK || status == LUA_YIELD) {
		lua_settop(L, INIT_S);
		tell_launcher(L, "LAUNCHOK", 0);
		return 0;
	}
	int e = lua_gettop(L) + 1;
	const char *err = luaL_tolstring(L, -1, NULL);
	skynet_error(k->ctx, "init service failed: %s", err);
	push_start_reason(L, e);
	if (skynet_command(k->ctx, "QUERY", ".launcher") == NULL) {
		/* Started before the launcher: the bootstrap, or the launcher itself. */
		skynet_error(
		    k->ctx,
		    "error: the node cannot start without this service; stopping with exit status 1");
		skynet_command(k->ctx, "ABORT", "1");
		return 0;
	}
	tell_launcher(L, "ERROR", e + 1);
	kernel_uv(L, INIT_KERNEL, UV_SKYNET);
	lua_getfield(L, -1, "exit");
	lua_callk(L, 0, 0, 0, quit_k);
	return 0;
}

/* skynet.init_service(start) */
int
kernel_linit_service(lua_State *L) {
	lua_settop(L, INIT_START);
	kernel_push(L);
	kernel_uv(L, INIT_KERNEL, UV_S);
	kernel_push_running(L, INIT_KERNEL);
	lua_setiuservalue(L, INIT_KERNEL, UV_INIT_THREAD);
	lua_pushcfunction(L, init_traceback);
	lua_pushcfunction(L, init_body);
	lua_pushvalue(L, INIT_START);
	int status = lua_pcallk(L, 1, 0, INIT_HANDLER, 0, init_done);
	return init_done(L, status, 0);
}

/* S.init_thread() -> the start coroutine while skynet.start's function runs, or nil. */
int
kernel_linit_thread(lua_State *L) {
	kernel_push(L);
	kernel_uv(L, lua_gettop(L), UV_INIT_THREAD);
	return 1;
}

/* The job of the start timer: init_service(upvalue 1). */
static int
start_job(lua_State *L) {
	lua_pushcfunction(L, kernel_linit_service);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_callk(L, 1, 0, 0, quit_k);
	return 0;
}

/* skynet.start(start_func) */
int
kernel_lstart(lua_State *L) {
	lua_settop(L, 1);
	kernel_require(L, "skynet.core");
	lua_getfield(L, -1, "callback");
	lua_pushcfunction(L, kernel_ldispatch_message);
	lua_call(L, 1, 0);
	lua_settop(L, 1);
	lua_pushcfunction(L, kernel_ltimeout);
	lua_pushinteger(L, 0);
	lua_pushvalue(L, 1);
	lua_pushcclosure(L, start_job, 1);
	lua_call(L, 2, 0);
	return 0;
}
