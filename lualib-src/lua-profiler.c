/*
 * skynet.profiler.core: the node's sampling profiler, straight from the
 * core (skynet_profiler_* in skynet.h). lualib/skynet/profiler.lua checks
 * the arguments and is the documented API (docs/ref/skynet.profiler.md).
 *
 *   start(target, hz)  -> true, or nil and "busy" | "invalid" | "io"
 *   stop()             -> folded text, samples; or nil when no profile runs
 *   last()             -> folded text, samples of the last stopped profile; or nil
 *   status()           -> { running, target, hz, elapsed (seconds), ticks, signals,
 *                           samples, cost (seconds the workers spent taking them), stacks,
 *                           last_samples (nil without a last profile) }
 */
#include "skynet.h"

#include <lauxlib.h>
#include <lua.h>

static int
lstart(lua_State *L) {
	lua_Integer target = luaL_checkinteger(L, 1);
	lua_Integer hz = luaL_checkinteger(L, 2);
	if (target < 0 || target > (lua_Integer)UINT32_MAX)
		return luaL_error(L, "skynet.profiler.core: bad target (%I)", target);
	if (hz < 1 || hz > SKYNET_PROFILER_HZ_MAX)
		return luaL_error(L, "skynet.profiler.core: bad hz (%I)", hz);
	int err = skynet_profiler_start((uint32_t)target, (int)hz);
	if (err == 0) {
		lua_pushboolean(L, 1);
		return 1;
	}
	lua_pushnil(L);
	lua_pushstring(L, err == SKYNET_EBUSY ? "busy" : err == SKYNET_EINVAL ? "invalid" : "io");
	return 2;
}

/* __gc of a text box: frees a text a raised error left behind. */
static int
box_gc(lua_State *L) {
	char **box = lua_touserdata(L, 1);
	skynet_free(*box);
	*box = NULL;
	return 0;
}

/*
 * Push a box (a full userdata holding a core-owned text, NULL for now) whose
 * __gc frees it, so that a memory error while the text becomes a Lua string
 * leaks nothing.
 */
static char **
push_box(lua_State *L) {
	char **box = lua_newuserdatauv(L, sizeof(char *), 0);
	*box = NULL;
	if (luaL_newmetatable(L, "skynet.profiler.text")) {
		lua_pushcfunction(L, box_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return box;
}

/* Replace the box on the top by its text and push samples; or nil for no text. */
static int
push_profile(lua_State *L, char **box, size_t len, uint64_t samples) {
	if (*box == NULL) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushlstring(L, *box, len);
	skynet_free(*box);
	*box = NULL;
	lua_pushinteger(L, (lua_Integer)samples);
	return 2;
}

/* The profile get hands out (stop, or the last one), as push_profile pushes it. */
static int
push_from(lua_State *L, char *(*get)(size_t *len, uint64_t *samples)) {
	char **box = push_box(L);
	size_t len = 0;
	uint64_t samples = 0;
	*box = get(&len, &samples);
	return push_profile(L, box, len, samples);
}

static int
lstop(lua_State *L) {
	return push_from(L, skynet_profiler_stop);
}

static int
llast(lua_State *L) {
	return push_from(L, skynet_profiler_last);
}

static void
set_integer(lua_State *L, const char *key, uint64_t v) {
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, key);
}

static int
lstatus(lua_State *L) {
	struct skynet_profiler_status st;
	skynet_profiler_status(&st);
	lua_createtable(L, 0, 10);
	lua_pushboolean(L, st.running);
	lua_setfield(L, -2, "running");
	set_integer(L, "target", st.target);
	set_integer(L, "hz", (uint64_t)st.hz);
	lua_pushnumber(L, (double)st.elapsed_ns / 1e9);
	lua_setfield(L, -2, "elapsed");
	set_integer(L, "ticks", st.ticks);
	set_integer(L, "signals", st.signals);
	set_integer(L, "samples", st.samples);
	lua_pushnumber(L, (double)st.cost_ns / 1e9);
	lua_setfield(L, -2, "cost");
	set_integer(L, "stacks", st.stacks);
	if (st.has_last)
		set_integer(L, "last_samples", st.last_samples);
	return 1;
}

int
luaopen_skynet_profiler_core(lua_State *L) {
	static const luaL_Reg funcs[] = {
	    {"start", lstart}, {"stop", lstop}, {"last", llast}, {"status", lstatus}, {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}
