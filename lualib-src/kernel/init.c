/*
 * skynet.kernel: the message path of the Lua service API, in C. This part
 * opens the module and holds the last will; kernel.h lists the other parts
 * and docs/internals.md tells the message path and a coroutine's states.
 *
 * require "skynet.kernel" returns the skynet table (lualib/skynet.lua returns
 * it in turn): the code is shared by all states; a state holds only its
 * data, one full userdata, struct kernel, anchored in the registry under
 * KERNEL_KEY (every function, a light C function, finds it there). Its user
 * values (enum kernel_uv) are the state tables, made on first use, and a
 * few single values. Only the kernel's parts change them; the lazy Lua parts
 * (skynet/ext, skynet/debug.lua, skynet/manager.lua) and
 * service/clusteragent.lua ask through the functions of skynet.private (S,
 * below), which hands out no table of the kernel. The state tables:
 *   waiting       session -> thread | handler table | "BREAK"
 *                   thread: a coroutine blocked in call/sleep/wait, resumed
 *                   with (true, msg, sz, session) on a reply, (false) when
 *                   the call failed, (false, "BREAK") when wakeup cut it
 *                   short; table t: a skynet.request handler, called inline
 *                   as t[1](t, session, ok, msg, sz); "BREAK": the late
 *                   message is dropped.
 *   timers        session -> function of a pending skynet.timeout.
 *   watching      session -> address, for calls in flight.
 *   req_session, req_source   co -> session (0: a send) and source of the
 *                 request the coroutine serves.
 *   sleep_session token -> session (> 0: sleep with a timer, < 0: wait).
 *   unresponse    response closure -> address owed.
 *   fired         co <-> session of a fired timeout that is blocked.
 *   trace_source, timeout_tb   tracing (source -> announced trace payload,
 *                 trace.c; session -> creation traceback).
 *   pool          the parked coroutines (weak), proto the protocols (by name
 *                 and id), wakeup/error/fork queues (FIFOs: wq + wq_token,
 *                 eq, fq + fq_args; heads and tails in struct kernel), woken
 *                 (token -> its queued wakeup session, so a second wakeup
 *                 still returns true).
 * Each state table is made on first use, and so are S's fields and most of
 * the skynet table's: a state pays only for what its service uses.
 *
 * S, the interface of the Lua parts (docs/internals.md lists it too), holds
 * only these functions; a table it returns is a new one:
 *   new_call(addr, id, msg, sz) -> session      send a call, register nothing
 *   yield_call(addr, session) -> msg, sz        wait for its reply (raises
 *                                               "call failed")
 *   call_handler(addr, id, handler, msg, sz) -> session   a call whose reply
 *                 goes to handler[1](handler, session, ok, msg, sz), inline
 *   drop_handler(session, handler)              forget such a call
 *   request(take) -> session, source            the running coroutine's
 *                 request; take: its reply will not come through ret
 *   owe(resp, source), owes(resp, settle) -> bool   a detached response
 *                 (skynet.response) owes source a reply; settle: paid
 *   error_dispatch(session, source)             as a PTYPE_ERROR message
 *   protocol(name_or_id) -> p | nil             a registered protocol
 *   protocols() -> {id = p}                     all of them, by id
 *   tag(), set_tag(tag)                         the running coroutine's
 *                 trace tag
 *   new_tag() -> tag                            a new trace tag: a new trace
 *                 id, 32 hex digits
 *   trace_begin(tag[, parent[, name]]) -> span  the running coroutine begins
 *                 a span of trace tag (trace.c)
 *   trace_end([failed])                         its span ends, untraced
 *   trace_context() -> tag, span | nil          its tag and span id
 *   set(what, value)                            tracing, trace_timeouts,
 *                 unknown_request, unknown_response
 *   timer_object(session)                       skynet.timeout's result
 *   pending() -> {session = co | handler | f}   what waits (skynet.task)
 *   pending_count() -> n                        how many of them
 *   creation(session) -> traceback | nil        where that timeout was made
 *                                               (trace_timeouts on)
 *   init_thread() -> co | nil                   the start coroutine
 *   killthread(co | timeout | pattern) -> it | nil   skynet.killthread
 *   exit_state()                                skynet.exit's state work
 *   parked() -> {co...}                         the pooled coroutines (tests,
 *                                               diagnostics)
 *   reason() -> text | nil                      the reason the error of the
 *                 running coroutine's last failed call carried (dispatch.c)
 *
 * running. The coroutine the dispatcher resumed last (UV_RUNNING). Sessions
 * are registered for it, not for the running coroutine: a skynet.coroutine
 * nested in it passes every framework yield up, so the framework resumes
 * the root.
 *
 * Last will. The kernel userdata's __gc runs when the state closes: unless
 * the service went through skynet.exit (k->exited), it sends an error to the
 * source of every request still unanswered and fails each detached response
 * closure (kill.c), so no caller waits forever on a killed service.
 *
 * Owns: the kernel userdata and its single values set once (UV_S,
 * UV_SKYNET, UV_REQUIRE, UV_FRAMEWORK, UV_GRANTED, the default unknown
 * hooks). Reads, in the last will: k->exited (kill.c calls on
 * UV_REQ_SESSION, UV_REQ_SOURCE, UV_UNRESPONSE).
 * Units: timeouts in centiseconds; sessions are positive C ints.
 * Locking: none; only the worker running the service touches its state.
 * These files are built without ThreadSanitizer: the Makefile says why.
 */

#include "kernel.h"

#include <lauxlib.h>

#include <string.h>

const char KERNEL_KEY = 0;

/* ---- last will ---- */

/* __gc of the kernel: fail the requests a killed service never answered. */
static int
last_will(lua_State *L) {
	enum { SLOT_KERNEL = 1 };
	lua_settop(L, SLOT_KERNEL);
	struct kernel *k = lua_touserdata(L, SLOT_KERNEL);
	kernel_trace_free(k);
	if (k->exited)
		return 0;
	kernel_fail_requests(L, SLOT_KERNEL, k);
	kernel_fail_responses(L, SLOT_KERNEL);
	return 0;
}

/* ---- building ---- */

/* The arguments of create_kernel, as luaopen_skynet_kernel leaves them. */
enum { OPEN_CORE = 1, OPEN_REQUIRE, OPEN_FRAMEWORK, OPEN_GRANTED, OPEN_KERNEL };

/* Push S, skynet.private: an empty table whose __index fills it. */
static void
push_private(lua_State *L) {
	lua_newtable(L);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, kernel_lprivate_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
}

/* Set the user values of the new kernel at OPEN_KERNEL that never change. */
static void
set_fixed_values(lua_State *L) {
	push_private(L);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, OPEN_KERNEL, UV_S);
	lua_pushvalue(L, OPEN_REQUIRE);
	lua_setiuservalue(L, OPEN_KERNEL, UV_REQUIRE);
	lua_pushvalue(L, OPEN_FRAMEWORK);
	lua_setiuservalue(L, OPEN_KERNEL, UV_FRAMEWORK);
	lua_pushvalue(L, OPEN_GRANTED);
	lua_setiuservalue(L, OPEN_KERNEL, UV_GRANTED);
	lua_pushcfunction(L, kernel_lunknown_message);
	lua_setiuservalue(L, OPEN_KERNEL, UV_UNKNOWN_REQUEST);
	lua_pushcfunction(L, kernel_lunknown_message);
	lua_setiuservalue(L, OPEN_KERNEL, UV_UNKNOWN_RESPONSE);
}

/*
 * Name the kernel's C functions that run as frames of every message (no
 * module holds them) in registry table "profiler.names" (function -> name),
 * where the sampling profiler looks (service-src/snlua/sampler.c).
 */
static void
name_frames(lua_State *L) {
	static const struct {
		const char *name;
		lua_CFunction (*get)(void);
	} frames[] = {
	    {"skynet.kernel.dispatch", kernel_dispatch_frame},
	    {"skynet.kernel.coroutine", kernel_coroutine_frame},
	};
	lua_createtable(L, 0, 3);
	lua_pushcfunction(L, kernel_ldispatch_message);
	lua_pushliteral(L, "skynet.dispatch_message");
	lua_rawset(L, -3);
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		lua_pushcfunction(L, frames[i].get());
		lua_pushstring(L, frames[i].name);
		lua_rawset(L, -3);
	}
	lua_setfield(L, LUA_REGISTRYINDEX, "profiler.names");
}

/*
 * Push the kernel userdata of a new state (at OPEN_KERNEL) and S above it.
 * skynet.core, skynet.require, snlua's framework and granted hooks (or nil)
 * are at OPEN_CORE..OPEN_GRANTED.
 */
static void
create_kernel(lua_State *L) {
	struct kernel *k = lua_newuserdatauv(L, sizeof(*k), UV_COUNT);
	memset(k, 0, sizeof(*k));
	lua_getfield(L, LUA_REGISTRYINDEX, "skynet_context");
	k->ctx = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (k->ctx == NULL)
		luaL_error(L, "skynet.kernel: no skynet_context in the registry (not in a service)");
	if (lua_getfield(L, LUA_REGISTRYINDEX, "snlua.resume") == LUA_TLIGHTUSERDATA)
		k->host = lua_touserdata(L, -1);
	lua_pop(L, 1);
	k->wq_h = k->eq_h = k->fq_h = 1;
	lua_createtable(L, 0, 1); // metatable: __gc is the last will
	lua_pushcfunction(L, last_will);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, OPEN_KERNEL);
	set_fixed_values(L);
	lua_pushvalue(L, OPEN_KERNEL);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &KERNEL_KEY);
	name_frames(L);
	lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_pushvalue(L, -2);
	lua_setfield(L, -2, "skynet.private");
	lua_pop(L, 1);
}

/* Push skynet.require, then snlua's framework and granted hooks (nil outside snlua). */
static void
push_hooks(lua_State *L) {
	kernel_require(L, "skynet.require");
	lua_pushnil(L);
	lua_pushnil(L);
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "preload");
	if (lua_getfield(L, -1, "skynet.snlua") != LUA_TNIL) {
		kernel_require(L, "skynet.snlua");
		lua_getfield(L, -1, "framework");
		lua_replace(L, OPEN_FRAMEWORK);
		lua_getfield(L, -1, "granted");
		lua_replace(L, OPEN_GRANTED);
	}
	lua_settop(L, OPEN_GRANTED);
}

/* Push the skynet table, with the values copied now and __index for the rest. */
static void
push_skynet_table(lua_State *L) {
	/* Copied now, as they are when skynet loads (a later change of skynet.core
	 * does not show): skynet.core's functions, pcall, skynet.require's init;
	 * their names exist in the state already. */
	static const char *const copied[] = {
	    "pack", "packstring", "unpack", "tostring", "trash", "now", "hpc",
	};
	lua_createtable(L, 0, 10);
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		lua_getfield(L, OPEN_CORE, copied[i]);
		lua_setfield(L, -2, copied[i]);
	}
	lua_getfield(L, OPEN_CORE, "error"); // wrapped: a traced coroutine's lines carry its tag
	lua_pushcclosure(L, kernel_lerror, 1);
	lua_setfield(L, -2, "error");
	lua_getglobal(L, "pcall");
	lua_setfield(L, -2, "pcall");
	lua_getfield(L, OPEN_REQUIRE, "init");
	lua_setfield(L, -2, "init");
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, kernel_llazy_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
}

/*
 * require "skynet.kernel" -> the skynet table, once per state (lualib/skynet.lua
 * returns it). It takes skynet.core, skynet.require and, under snlua, the
 * hooks of skynet.snlua (framework marking for the lazy parts, the memory
 * grant they load under). Apart from ten functions copied at once, its
 * __index stores each name on first use (lazy.c), so a service holds only
 * the names it uses.
 */
LUAMOD_API int
luaopen_skynet_kernel(lua_State *L) {
	luaL_checkversion(L);
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &KERNEL_KEY) != LUA_TNIL)
		return luaL_error(L, "skynet.kernel: built already in this state");
	lua_settop(L, 0);
	kernel_require(L, "skynet.core");
	push_hooks(L);
	create_kernel(L);
	lua_settop(L, OPEN_KERNEL);
	kernel_register_builtins(L, OPEN_CORE);
	push_skynet_table(L);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, OPEN_KERNEL, UV_SKYNET);
	return 1;
}
