/*
 * snlua: the C service that hosts one Lua 5.4 VM per service. This file is
 * its lifecycle (create, init, release, signal) and start-up; the parts live
 * in snlua/, each with its own design comment:
 *   snlua/instance.h  struct snlua, the instance every part works on
 *   snlua/alloc.c     the state's allocator: small-object pool, byte count, limit
 *   snlua/trap.c      signals: breaking an endless loop, logging the memory
 *   snlua/tombstone.c the Lua stack in a crash tombstone (from the signal handler)
 *   snlua/profile.c   skynet.profile and the accounting coroutine.resume/wrap
 *   snlua/codecache.c the process-wide code cache and require through it
 *   snlua/modcache.c  the process-wide cache of where each require search succeeded
 *   snlua/slim.c      the bytecode rewriter that slims framework chunks
 *   snlua/lazylib.c   the standard libraries, some opened on first use
 *
 * Start-up. init sends the service its own parameter as the first message
 * (PTYPE_TEXT, DONTCOPY) through a one-shot callback. That callback builds
 * the VM (libraries, some opened on first use (snlua/lazylib.c), registry
 * "skynet_context" and the "snlua.*" C functions of snlua/alloc.c and
 * snlua/trap.c, skynet.profile, skynet.codecache and skynet.snlua (the
 * hooks framework and granted) in package.preload, accounting
 * coroutine.resume/wrap, generational GC, the LUA_* globals from env) and
 * runs the loader script.
 * Any failure is logged, the service exits and then "ERROR <reason>" goes to .launcher;
 * with no .launcher yet (the bootstrap failed) the node stops with status 1.
 *
 * Lua warnings (warn() and errors in __gc) go to the log, one line each;
 * a warning sent in pieces is assembled in warn_buf (at most
 * SNLUA_WARN_BUF - 1 bytes are kept). An unprotected error (a panic) is
 * printed to stderr, and Lua then aborts.
 *
 * Data: struct snlua (snlua/instance.h), created here and freed by
 * snlua_release after its state closes. Locking: none here; only the
 * worker running the service touches the instance, except the trap's
 * atomics (snlua_signal runs on any thread; see snlua/trap.c).
 */

#include "skynet.h"
#include "snlua/alloc.h"
#include "snlua/codecache.h"
#include "snlua/modcache.h"
#include "snlua/instance.h"
#include "snlua/lazylib.h"
#include "snlua/profile.h"
#include "snlua/tombstone.h"
#include "snlua/trap.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNLUA_MB         (1024.0 * 1024.0)
#define SNLUA_REASON_MAX 1000 // bytes of a start error sent to .launcher

static int
state_panic(lua_State *L) {
	const char *msg = lua_tostring(L, -1);
	fprintf(stderr, "fatal: snlua: unprotected lua error err=%s\n", msg ? msg : "?");
	return 0; // Lua aborts
}

/* Lua warnings (warn() and errors in __gc) go to the log, one line each. */
static void
state_warn(void *ud, const char *msg, int tocont) {
	struct snlua *l = ud;
	if (l->warn_len == 0 && !tocont && msg[0] == '@') {
		if (strcmp(msg, "@off") == 0)
			l->warn_off = true;
		else if (strcmp(msg, "@on") == 0)
			l->warn_off = false;
		return;
	}
	size_t len = strlen(msg);
	size_t room = SNLUA_WARN_BUF - 1 - l->warn_len;
	if (len > room)
		len = room;
	memcpy(l->warn_buf + l->warn_len, msg, len);
	l->warn_len += len;
	if (tocont)
		return;
	l->warn_buf[l->warn_len] = '\0';
	l->warn_len = 0;
	if (!l->warn_off)
		skynet_error(l->ctx, "warn: lua: %s", l->warn_buf);
}

/* ---- start-up ---------------------------------------------------------- */

static void
preload(lua_State *L, const char *name, lua_CFunction open) {
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, open);
	lua_setfield(L, -2, name);
	lua_pop(L, 1);
}

/* Module "skynet.snlua": the hooks skynet.lua takes without the debug library. */
static int
open_hooks(lua_State *L) {
	static const luaL_Reg hooks[] = {
	    {"framework", snlua_trap_mark_framework},
	    {"granted", snlua_mem_granted},
	    {NULL, NULL},
	};
	luaL_newlib(L, hooks);
	return 1;
}

/* Global name = env key, or def (NULL: leave the global unset). */
static void
set_env_global(lua_State *L, struct snlua *l, const char *name, const char *key, const char *def) {
	const char *value = skynet_command(l->ctx, "GETENV", key);
	if (value == NULL)
		value = def;
	if (value == NULL)
		return;
	lua_pushstring(L, value);
	lua_setglobal(L, name);
}

#define TRACEBACK_HEAD "\nstack traceback:"
#define NAMELESS_FRAME "\t[C]: in ?"
#define ERROR_FRAME    "\t[C]: in function 'error'"

/* True when the traceback line (len bytes, from its '\t') is text. */
static bool
is_line(const char *line, size_t len, const char *text) {
	return len == strlen(text) && memcmp(line, text, len) == 0;
}

/*
 * Push msg and the frames of tb (a traceback's lines, each after a '\n')
 * that say something: not the nameless C frames ("[C]: in ?") nor the
 * loader's own (loader: its path), whose errors name the file already.
 * When no frame is left but error() itself, push msg alone.
 */
static void
push_useful_frames(lua_State *L, const char *msg, const char *tb, const char *loader) {
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, msg);
	luaL_addstring(&b, TRACEBACK_HEAD);
	size_t loader_len = strlen(loader);
	int useful = 0;
	for (const char *line = tb; *line == '\n';) {
		const char *next = strchr(line + 1, '\n');
		size_t len = next ? (size_t)(next - line) : strlen(line);
		const char *frame = line + 1;
		bool is_loader = frame[0] == '\t' && strncmp(frame + 1, loader, loader_len) == 0 &&
		                 frame[1 + loader_len] == ':';
		if (!is_line(frame, len - 1, NAMELESS_FRAME) && !is_loader) {
			luaL_addlstring(&b, line, len);
			if (!is_line(frame, len - 1, ERROR_FRAME))
				useful++;
		}
		line += len;
	}
	luaL_pushresult(&b);
	if (useful == 0) {
		lua_pop(L, 1);
		lua_pushstring(L, msg);
	}
}

/* The loader's error handler (upvalue 1: the loader's path): the error with
 * the frames of its traceback that say something (push_useful_frames). */
static int
traceback(lua_State *L) {
	const char *msg = lua_tostring(L, 1);
	if (msg == NULL)
		msg = lua_isnoneornil(L, 1) ? "(no message)" : luaL_tolstring(L, 1, NULL);
	luaL_traceback(L, L, msg, 1);
	const char *tb = lua_tostring(L, -1) + strlen(msg);
	if (strncmp(tb, TRACEBACK_HEAD, strlen(TRACEBACK_HEAD)) != 0)
		return 1;
	push_useful_frames(L, msg, tb + strlen(TRACEBACK_HEAD), lua_tostring(L, lua_upvalueindex(1)));
	return 1;
}

/* Protected body of the first message: build the VM and run the loader. */
static int
start_lua(lua_State *L) {
	struct snlua *l = lua_touserdata(L, 1);
	const char *args = lua_tostring(L, 2);
	snlua_lazylib_open(L);
	lua_pushlightuserdata(L, l->ctx);
	lua_setfield(L, LUA_REGISTRYINDEX, "skynet_context");
	lua_pushcfunction(L, snlua_trap_enter);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.enter");
	lua_pushcfunction(L, snlua_trap_leave);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.leave");
	lua_pushcfunction(L, snlua_trap_mark_framework);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.framework");
	lua_pushcfunction(L, snlua_trap_interrupts);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.interrupts");
	lua_pushcfunction(L, snlua_mem_exit_reserve);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.exit_reserve");
	lua_pushcfunction(L, snlua_mem_granted);
	lua_setfield(L, LUA_REGISTRYINDEX, "snlua.granted");
	preload(L, "skynet.profile", snlua_profile_open);
	preload(L, "skynet.codecache", snlua_codecache_open);
	preload(L, "skynet.snlua", open_hooks);
	snlua_profile_install(L);
	snlua_codecache_install(L);
	snlua_modcache_install(L);
	set_env_global(L, l, "LUA_PATH", "lua_path", "./lualib/?.lua;./lualib/?/init.lua");
	set_env_global(L, l, "LUA_CPATH", "lua_cpath", "./luaclib/?.so");
	set_env_global(L, l, "LUA_SERVICE", "luaservice", "./service/?.lua");
	set_env_global(L, l, "LUA_PRELOAD", "preload", NULL);
	const char *loader = skynet_command(l->ctx, "GETENV", "lualoader");
	lua_pushstring(L, loader ? loader : "./lualib/loader.lua");
	loader = lua_tostring(L, -1);
	lua_pushvalue(L, -1);
	lua_pushcclosure(L, traceback, 1);
	if (snlua_codecache_load(L, loader, NULL) != LUA_OK)
		return luaL_error(L, "can't load loader path=%s err=%s", loader, lua_tostring(L, -1));
	lua_pushstring(L, args);
	if (lua_pcall(L, 1, 0, -3) != LUA_OK)
		return luaL_error(L, "loader failed args=%s err=%s", args, lua_tostring(L, -1));
	if (lua_getfield(L, LUA_REGISTRYINDEX, "memlimit") == LUA_TNUMBER) {
		lua_Number limit = lua_tonumber(L, -1);
		if (limit >= 1) {
			snlua_mem_set_limit(&l->mem, (size_t)limit);
			skynet_error(l->ctx, "info: snlua: memory limit size_mb=%.2f", limit / SNLUA_MB);
		}
	}
	return 0;
}

/*
 * Tell .launcher the start failed: "ERROR <reason>", the reason being the
 * loader's error without the traceback (err is start_lua's message, "loader
 * failed args=... err=<error>\nstack traceback:..."), so that newservice
 * raises it.
 */
static void
tell_launcher_error(struct skynet_context *ctx, const char *err) {
	const char *reason = err ? strstr(err, " err=") : NULL;
	reason = reason ? reason + strlen(" err=") : (err ? err : "(no message)");
	const char *tb = strstr(reason, "\nstack traceback:");
	size_t len = tb ? (size_t)(tb - reason) : strlen(reason);
	if (len > SNLUA_REASON_MAX)
		len = SNLUA_REASON_MAX;
	char msg[sizeof("ERROR ") + SNLUA_REASON_MAX];
	memcpy(msg, "ERROR ", 6);
	memcpy(msg + 6, reason, len);
	skynet_sendname(ctx, 0, ".launcher", PTYPE_TEXT, 0, msg, 6 + len);
}

static int
launch_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
          const void *msg, size_t sz) {
	struct snlua *l = ud;
	lua_State *L = l->L;
	skynet_callback(ctx, NULL, NULL); // one shot: the loader may install the Lua callback
	lua_gc(L, LUA_GCSTOP);
	lua_pushcfunction(L, start_lua);
	lua_pushlightuserdata(L, l);
	lua_pushlstring(L, msg, sz);
	snlua_trap_enter(L);
	int status = lua_pcall(L, 2, 0, 0);
	snlua_trap_leave(L);
	if (status == LUA_OK) {
		lua_settop(L, 0);
		lua_gc(L, LUA_GCRESTART);
		return 0;
	}
	const char *err = lua_tostring(L, -1);
	skynet_error(ctx, "error: snlua: %s", err ? err : "(no message)");
	if (skynet_command(ctx, "QUERY", ".launcher") == NULL) {
		// Started before the launcher: the bootstrap, or the launcher itself.
		skynet_error(ctx, "error: snlua: the node cannot start without this service; "
		                  "stopping with exit status 1");
		skynet_command(ctx, "ABORT", "1");
	} else {
		/* Exit first: the caller may log the reason as a failed node's last
		 * line, which then comes after this service's "KILL self". */
		skynet_command(ctx, "EXIT", NULL);
		tell_launcher_error(ctx, err);
	}
	lua_settop(L, 0);
	lua_gc(L, LUA_GCRESTART);
	return 0;
}

/* ---- module interface -------------------------------------------------- */

struct snlua *
snlua_create(void) {
	struct snlua *l = skynet_calloc(1, sizeof(*l));
	snlua_mem_init(&l->mem);
	l->L = lua_newstate(snlua_mem_alloc, l);
	snlua_trap_init(l);
	snlua_tombstone_install();
	lua_gc(l->L, LUA_GCGEN, 0, 0); // switching runs a full cycle: do it while the heap is empty
	snlua_profile_init_state(l->L);
	lua_atpanic(l->L, state_panic);
	lua_setwarnf(l->L, state_warn, l);
	return l;
}

int
snlua_init(struct snlua *l, struct skynet_context *ctx, const char *args) {
	l->ctx = ctx;
	skynet_context_set_heap(ctx, &l->mem.bytes); // for the memory budget and top
	const char *self = skynet_command(ctx, "REG", NULL);
	if (self == NULL || self[0] != ':')
		return SKYNET_EINVAL;
	uint32_t handle = (uint32_t)strtoul(self + 1, NULL, 16);
	size_t sz = args ? strlen(args) : 0;
	char *msg = skynet_malloc(sz + 1);
	memcpy(msg, args ? args : "", sz + 1);
	skynet_callback(ctx, l, launch_cb);
	/* The queue is not scheduled before init returns, so this is the first message. */
	int r = skynet_send(ctx, 0, handle, PTYPE_TEXT | PTYPE_TAG_DONTCOPY, 0, msg, sz);
	return r < 0 ? r : 0;
}

void
snlua_release(struct snlua *l) {
	if (l == NULL)
		return;
	lua_close(l->L);
	snlua_mem_destroy(&l->mem); // after lua_close: it frees into the pool
	skynet_free(l);
}

void
snlua_signal(struct snlua *l, int signal) {
	snlua_trap_post(l, signal);
}
