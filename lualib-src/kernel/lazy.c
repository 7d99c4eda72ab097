/*
 * skynet.kernel, the lazy tables: the skynet table and skynet.private (S).
 *
 * The skynet table's __index stores each name of LAZY on first use, so a
 * service holds only the names it uses: a kernel function is stored at
 * once; a name of a lazy Lua module (skynet.ext.*, skynet.manager,
 * skynet.codecache) loads the module, which stores its functions in the
 * table. The functions copied when the table was made (skynet.core's, pcall,
 * init) are never looked up again: a removed one stays removed. PTYPE_*,
 * _proto and private are answered here too.
 *
 * S holds functions only: its __index stores each function of
 * PRIVATE_FUNCS on first use. It hands out no table of the kernel; the
 * functions that return a table make a new one.
 *
 * Owns: the fields of the skynet table and of S it stores; k->tracing,
 * k->trace_timeouts and the unknown-message hooks through S.set.
 * Reads: UV_GRANTED, UV_FRAMEWORK (snlua's memory grant and framework
 * marking, for the modules it loads).
 */

#include "kernel.h"

#include <lauxlib.h>

#include <string.h>

/* Where the value of a name of the skynet table comes from. */
enum lazy_kind {
	LAZY_KERNEL, // a function of the kernel, stored on first use
	LAZY_COPIED, // copied when the table was made (skynet.core's, pcall, skynet.require's init)
	LAZY_MODULE, // a lazy Lua module, loaded on first use; it stores its names
};

struct lazy_name {
	const char *name;
	enum lazy_kind kind;
	lua_CFunction func; // LAZY_KERNEL
	const char *module; // LAZY_MODULE
};

#define EXT_KILL    "skynet.ext.kill"
#define EXT_SERVICE "skynet.ext.service"
#define EXT_TRACE   "skynet.ext.trace"
#define EXT_TASK    "skynet.ext.task"
#define EXT_REQUEST "skynet.ext.request"
#define EXT_MESSAGE "skynet.ext.message"
#define MANAGER     "skynet.manager"
#define CODECACHE   "skynet.codecache"

/* The names of the skynet table (docs/tools/api.lua lists them as skynet.*). */
static const struct lazy_name LAZY[] = {
    {"send", LAZY_KERNEL, kernel_lsend, NULL},
    {"call", LAZY_KERNEL, kernel_lcall, NULL},
    {"ret", LAZY_KERNEL, kernel_lret, NULL},
    {"retpack", LAZY_KERNEL, kernel_lretpack, NULL},
    {"genid", LAZY_KERNEL, kernel_lgenid, NULL},
    {"self", LAZY_KERNEL, kernel_lself, NULL},
    {"address", LAZY_KERNEL, kernel_laddress, NULL},
    {"timeout", LAZY_KERNEL, kernel_ltimeout, NULL},
    {"timeout_us", LAZY_KERNEL, kernel_ltimeout_us, NULL},
    {"sleep", LAZY_KERNEL, kernel_lsleep, NULL},
    {"wait", LAZY_KERNEL, kernel_lwait, NULL},
    {"wakeup", LAZY_KERNEL, kernel_lwakeup, NULL},
    {"fork", LAZY_KERNEL, kernel_lfork, NULL},
    {"register_protocol", LAZY_KERNEL, kernel_lregister_protocol, NULL},
    {"dispatch", LAZY_KERNEL, kernel_ldispatch, NULL},
    {"dispatch_message", LAZY_KERNEL, kernel_ldispatch_message, NULL},
    {"init_service", LAZY_KERNEL, kernel_linit_service, NULL},
    {"start", LAZY_KERNEL, kernel_lstart, NULL},
    {"pack", LAZY_COPIED, NULL, NULL},
    {"packstring", LAZY_COPIED, NULL, NULL},
    {"unpack", LAZY_COPIED, NULL, NULL},
    {"tostring", LAZY_COPIED, NULL, NULL},
    {"trash", LAZY_COPIED, NULL, NULL},
    {"error", LAZY_COPIED, NULL, NULL},
    {"now", LAZY_COPIED, NULL, NULL},
    {"hpc", LAZY_COPIED, NULL, NULL},
    {"pcall", LAZY_COPIED, NULL, NULL},
    {"init", LAZY_COPIED, NULL, NULL},
    {"exit", LAZY_MODULE, NULL, EXT_KILL},
    {"killthread", LAZY_MODULE, NULL, EXT_KILL},
    {"term", LAZY_MODULE, NULL, EXT_KILL},
    {"localname", LAZY_MODULE, NULL, EXT_SERVICE},
    {"harbor", LAZY_MODULE, NULL, EXT_SERVICE},
    {"getenv", LAZY_MODULE, NULL, EXT_SERVICE},
    {"setenv", LAZY_MODULE, NULL, EXT_SERVICE},
    {"starttime", LAZY_MODULE, NULL, EXT_SERVICE},
    {"time", LAZY_MODULE, NULL, EXT_SERVICE},
    {"endless", LAZY_MODULE, NULL, EXT_SERVICE},
    {"mqlen", LAZY_MODULE, NULL, EXT_SERVICE},
    {"priority", LAZY_MODULE, NULL, EXT_SERVICE},
    {"stat", LAZY_MODULE, NULL, EXT_SERVICE},
    {"memlimit", LAZY_MODULE, NULL, EXT_SERVICE},
    {"budget", LAZY_MODULE, NULL, EXT_SERVICE},
    {"newservice", LAZY_MODULE, NULL, EXT_SERVICE},
    {"uniqueservice", LAZY_MODULE, NULL, EXT_SERVICE},
    {"queryservice", LAZY_MODULE, NULL, EXT_SERVICE},
    {"info_func", LAZY_MODULE, NULL, EXT_SERVICE},
    {"trace", LAZY_MODULE, NULL, EXT_TRACE},
    {"tracetag", LAZY_MODULE, NULL, EXT_TRACE},
    {"tracelog", LAZY_MODULE, NULL, EXT_TRACE},
    {"traceproto", LAZY_MODULE, NULL, EXT_TRACE},
    {"tracecall", LAZY_MODULE, NULL, EXT_TRACE},
    {"trace_timeout", LAZY_MODULE, NULL, EXT_TRACE},
    {"task", LAZY_MODULE, NULL, EXT_TASK},
    {"uniqtask", LAZY_MODULE, NULL, EXT_TASK},
    {"request", LAZY_MODULE, NULL, EXT_REQUEST},
    {"launch", LAZY_MODULE, NULL, MANAGER},
    {"kill", LAZY_MODULE, NULL, MANAGER},
    {"abort", LAZY_MODULE, NULL, MANAGER},
    {"register", LAZY_MODULE, NULL, MANAGER},
    {"name", LAZY_MODULE, NULL, MANAGER},
    {"forward_type", LAZY_MODULE, NULL, MANAGER},
    {"filter", LAZY_MODULE, NULL, MANAGER},
    {"monitor", LAZY_MODULE, NULL, MANAGER},
    {"cache", LAZY_MODULE, NULL, CODECACHE},
    {"response", LAZY_MODULE, NULL, EXT_MESSAGE},
    {"ignoreret", LAZY_MODULE, NULL, EXT_MESSAGE},
    {"context", LAZY_MODULE, NULL, EXT_MESSAGE},
    {"redirect", LAZY_KERNEL, kernel_lredirect, NULL},
    {"rawsend", LAZY_KERNEL, kernel_lrawsend, NULL},
    {"rawcall", LAZY_MODULE, NULL, EXT_MESSAGE},
    {"yield", LAZY_MODULE, NULL, EXT_MESSAGE},
    {"dispatch_unknown_request", LAZY_MODULE, NULL, EXT_MESSAGE},
    {"dispatch_unknown_response", LAZY_MODULE, NULL, EXT_MESSAGE},
};

static const struct {
	const char *name;
	int id;
} PTYPES[] = {
    {"PTYPE_TEXT", 0},   {"PTYPE_RESPONSE", 1}, {"PTYPE_MULTICAST", 2}, {"PTYPE_CLIENT", 3},
    {"PTYPE_SYSTEM", 4}, {"PTYPE_HARBOR", 5},   {"PTYPE_SOCKET", 6},    {"PTYPE_ERROR", 7},
    {"PTYPE_QUEUE", 8},  {"PTYPE_DEBUG", 9},    {"PTYPE_LUA", 10},      {"PTYPE_SNAX", 11},
    {"PTYPE_TRACE", 12},
};

/* The entry of LAZY named name (len bytes, may hold zeros), or NULL. */
static const struct lazy_name *
find_lazy(const char *name, size_t len) {
	for (size_t i = 0; i < sizeof(LAZY) / sizeof(LAZY[0]); i++) {
		if (strlen(LAZY[i].name) == len && memcmp(LAZY[i].name, name, len) == 0)
			return &LAZY[i];
	}
	return NULL;
}

/* Push the value of a name outside LAZY (PTYPE_*, _proto, private); false: none. */
static bool
push_other(lua_State *L, int K, const char *name) {
	if (strncmp(name, "PTYPE_", 6) == 0) {
		for (size_t i = 0; i < sizeof(PTYPES) / sizeof(PTYPES[0]); i++) {
			if (strcmp(PTYPES[i].name, name) == 0) {
				lua_pushinteger(L, PTYPES[i].id);
				return true;
			}
		}
		return false;
	}
	if (strcmp(name, "_proto") == 0) {
		kernel_tab(L, K, UV_PROTO);
		return true;
	}
	if (strcmp(name, "private") == 0) {
		kernel_uv(L, K, UV_S);
		return true;
	}
	return false;
}

/* The stack of __index(t, k) of the skynet table. */
enum { INDEX_TABLE = 1, INDEX_NAME, INDEX_KERNEL, INDEX_MODULE, INDEX_VALUE };

/* Load the lazy module m, then push rawget(t, k). */
static int
load_module(lua_State *L, const char *name, const char *m) {
	/* Under snlua's memory grant: a service at its limit can still use a
	 * function it has not loaded yet (skynet.exit above all). */
	if (kernel_uv(L, INDEX_KERNEL, UV_GRANTED) != LUA_TNIL) {
		lua_getglobal(L, "require");
		lua_pushstring(L, m);
		lua_call(L, 2, 1);
	} else {
		lua_pop(L, 1);
		kernel_require(L, m);
	}
	if (strcmp(name, "cache") == 0) { // skynet.codecache is skynet.cache itself
		lua_pushvalue(L, INDEX_NAME);
		lua_pushvalue(L, -2);
		lua_rawset(L, INDEX_TABLE);
	}
	lua_pushvalue(L, INDEX_NAME);
	lua_rawget(L, INDEX_TABLE);
	if (lua_type(L, INDEX_VALUE) == LUA_TFUNCTION &&
	    kernel_uv(L, INDEX_KERNEL, UV_FRAMEWORK) != LUA_TNIL) {
		lua_pushvalue(L, INDEX_VALUE);
		lua_pcall(L, 1, 0, 0); // with every slot taken it stays unmarked
	}
	lua_settop(L, INDEX_VALUE);
	return 1;
}

/* __index(t, k) of the skynet table. */
int
kernel_llazy_index(lua_State *L) {
	lua_settop(L, INDEX_NAME);
	if (lua_type(L, INDEX_NAME) != LUA_TSTRING)
		return 0;
	size_t len;
	const char *name = lua_tolstring(L, INDEX_NAME, &len);
	kernel_push(L);
	const struct lazy_name *e = find_lazy(name, len);
	if (e == NULL) {
		if (!push_other(L, INDEX_KERNEL, name))
			return 0;
	} else if (e->kind == LAZY_KERNEL) {
		lua_pushcfunction(L, e->func);
	} else if (e->kind == LAZY_MODULE) {
		return load_module(L, name, e->module);
	} else {
		return 0; // LAZY_COPIED: stored when the table was made (a removed one stays removed)
	}
	lua_pushvalue(L, INDEX_NAME);
	lua_pushvalue(L, -2);
	lua_rawset(L, INDEX_TABLE);
	return 1;
}

/* ---- S ---- */

static int
ltimer_object(lua_State *L) {
	lua_pushlightuserdata(L, (void *)(intptr_t)luaL_checkinteger(L, 1));
	return 1;
}

/*
 * S.set(what, value): "tracing", "trace_timeouts", "unknown_request" and
 * "unknown_response" (returns the hook it replaced).
 */
static int
lset(lua_State *L) {
	enum { ARG_WHAT = 1, ARG_VALUE, SLOT_KERNEL };
	lua_settop(L, ARG_VALUE);
	struct kernel *k = kernel_push(L);
	const char *what = lua_tostring(L, ARG_WHAT);
	if (what == NULL)
		return 0;
	if (strcmp(what, "tracing") == 0) {
		k->tracing = lua_toboolean(L, ARG_VALUE);
		if (k->tracing)
			kernel_trace_on(k);
	} else if (strcmp(what, "trace_timeouts") == 0) {
		k->trace_timeouts = lua_toboolean(L, ARG_VALUE);
	} else if (strcmp(what, "unknown_request") == 0 || strcmp(what, "unknown_response") == 0) {
		int slot = strcmp(what, "unknown_request") == 0 ? UV_UNKNOWN_REQUEST : UV_UNKNOWN_RESPONSE;
		kernel_uv(L, SLOT_KERNEL, slot);
		lua_pushvalue(L, ARG_VALUE);
		lua_setiuservalue(L, SLOT_KERNEL, slot);
		return 1;
	}
	return 0;
}

/* The functions of S (skynet.private), the whole of it; init.c's design
 * comment and docs/internals.md say what each does. */
static const luaL_Reg PRIVATE_FUNCS[] = {
    {"new_call", kernel_lnew_call},
    {"yield_call", kernel_lyield_call},
    {"call_handler", kernel_lcall_handler},
    {"drop_handler", kernel_ldrop_handler},
    {"request", kernel_lrequest},
    {"owe", kernel_lowe},
    {"owes", kernel_lowes},
    {"error_dispatch", kernel_lerror_dispatch},
    {"protocol", kernel_lprotocol},
    {"protocols", kernel_lprotocols},
    {"tag", kernel_ltag},
    {"set_tag", kernel_lset_tag},
    {"new_tag", kernel_lnew_tag},
    {"trace_begin", kernel_ltrace_begin},
    {"trace_end", kernel_ltrace_end},
    {"trace_context", kernel_ltrace_context},
    {"set", lset},
    {"timer_object", ltimer_object},
    {"pending", kernel_lpending},
    {"pending_count", kernel_lpending_count},
    {"creation", kernel_lcreation},
    {"init_thread", kernel_linit_thread},
    {"killthread", kernel_lkillthread},
    {"exit_state", kernel_lexit_state},
    {"parked", kernel_lparked},
    {"reason", kernel_lreason},
    {NULL, NULL},
};

static lua_CFunction
find_private(const char *name) {
	for (const luaL_Reg *reg = PRIVATE_FUNCS; reg->name != NULL; reg++) {
		if (strcmp(reg->name, name) == 0)
			return reg->func;
	}
	return NULL;
}

/* __index(S, k): the function named k, stored in S on first use. */
int
kernel_lprivate_index(lua_State *L) {
	enum { ARG_S = 1, ARG_NAME };
	lua_settop(L, ARG_NAME);
	if (lua_type(L, ARG_NAME) != LUA_TSTRING)
		return 0;
	lua_CFunction f = find_private(lua_tostring(L, ARG_NAME));
	if (f == NULL)
		return 0;
	if (f == kernel_lprotocol) {
		/* On the path of skynet.rawcall: a closure over the protocol table
		 * (made when the kernel opens, never replaced) skips the registry. */
		kernel_push(L);
		kernel_tab(L, lua_gettop(L), UV_PROTO);
		lua_remove(L, -2);
		lua_pushcclosure(L, f, 1);
	} else {
		lua_pushcfunction(L, f);
	}
	lua_pushvalue(L, ARG_NAME);
	lua_pushvalue(L, -2);
	lua_rawset(L, ARG_S);
	return 1;
}
