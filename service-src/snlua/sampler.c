/*
 * snlua's side of the sampling profiler: turns the stack of the running
 * service into one folded line for skynet_profiler_record (the profiler's
 * core and its design: skynet-src/skynet_profiler.c; how a sample is asked
 * for and when the hook fires: trap.c).
 *
 * The line. "name :addr;frame;...;frame", root first: the service's name
 * (its script, the first word of its snlua args) and address, then, when a
 * coroutine runs, the main thread's frames (the dispatcher, ending in the
 * resume), then the running coroutine's frames, the newest last. At most
 * SAMPLE_DEPTH frames per thread are kept, the newest ones ("..." stands
 * for the rest). A frame reads:
 *   name (src:line)      a Lua function with a name at its call site
 *   function (src:line)  one without (called from C), line = where defined
 *   main chunk (src)     a chunk's body
 *   name [C]             a C function: its name in registry table
 *                        "profiler.names" (function -> name: C modules name
 *                        there the functions that run as frames but that no
 *                        module holds, such as the kernel's dispatcher), or
 *                        the name under which a loaded module holds it
 *                        ("skynet.core.send", "pcall"), else its name at
 *                        the call site, else "?"
 * ';' and line breaks inside a frame become ':' and ' ' (the format's
 * separators). The walk uses lua_getstack and lua_getinfo("Sn"), and "f"
 * for C functions, in the service's own thread, from a hook: safe, as for
 * any hook. Finding a C function's module name searches package.loaded
 * (raw reads, no metamethod); the result is cached in names, a small
 * direct-mapped table keyed by the function's address (a miss is searched
 * again after SAMPLE_RETRY samples: a lazy module may store it later).
 *
 * Data: struct snlua_sampler in each instance (sampler.h); ticket is
 * stored by trap.c's signal handler and read by the hook or the end of the
 * message, on the same thread (relaxed); names is
 * allocated at the first sample and freed with the instance. Locking: none
 * (the thread running the service only; skynet_profiler_record locks).
 * Units: bytes (SAMPLE_LINE), frames (SAMPLE_DEPTH).
 */
#include "sampler.h"
#include "instance.h"

#include "skynet.h"

#include <lauxlib.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SAMPLE_LINE  8192 // bytes of one folded line
#define SAMPLE_DEPTH 48   // frames kept per thread
#define SAMPLE_NAMES 64   // C function names cached per service
#define SAMPLE_CNAME 48   // bytes of a cached C function name, with the NUL
#define SAMPLE_RETRY 64   // samples of a function with no name before the next search
#define NAMES_KEY    "profiler.names"

struct sampler_names {
	lua_CFunction fn[SAMPLE_NAMES];
	unsigned short retry[SAMPLE_NAMES];    // samples until a missing name is looked for again
	char name[SAMPLE_NAMES][SAMPLE_CNAME]; // "" when no module holds fn (yet)
};

/* A folded line being built. */
struct sample_line {
	size_t len;
	char text[SAMPLE_LINE];
};

void
snlua_sampler_init(struct snlua *l, uint32_t handle, const char *args) {
	struct snlua_sampler *s = &l->sampler;
	s->handle = handle;
	size_t n = args ? strcspn(args, " \t") : 0;
	if (n >= SNLUA_SAMPLER_NAME)
		n = SNLUA_SAMPLER_NAME - 1;
	memcpy(s->name, args ? args : "", n);
	s->name[n] = '\0';
	if (n == 0)
		strcpy(s->name, "snlua");
}

void
snlua_sampler_destroy(struct snlua *l) {
	skynet_free(l->sampler.names);
	l->sampler.names = NULL;
}

/* Append a frame (or the prefix), after a ';' unless it is the first. */
static void line_add(struct sample_line *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
line_add(struct sample_line *b, const char *fmt, ...) {
	size_t room = SAMPLE_LINE - b->len;
	if (room < 2)
		return;
	size_t start = b->len;
	if (b->len > 0)
		b->text[b->len++] = ';';
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->text + b->len, SAMPLE_LINE - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->len = start;
		return;
	}
	size_t end = b->len + (size_t)n;
	if (end >= SAMPLE_LINE)
		end = SAMPLE_LINE - 1; // cut: the rest of the line is lost
	for (size_t i = b->len; i < end; i++) {
		char c = b->text[i];
		if (c == ';')
			b->text[i] = ':';
		else if (c == '\n' || c == '\r')
			b->text[i] = ' ';
	}
	b->len = end;
}

/*
 * The name under which a loaded module holds the function on L's top
 * ("string.rep", "pcall" for _G's), written to out; false if none. The
 * function stays on the top.
 */
static bool
loaded_name(lua_State *L, char *out, size_t room) {
	int fn = lua_gettop(L);
	if (!lua_checkstack(L, 6))
		return false;
	lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	int loaded = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, loaded)) { // module name at -2, module at -1
		if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
			lua_pushnil(L);
			while (lua_next(L, -2)) { // field at -2, value at -1
				if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, fn)) {
					const char *mod = lua_tostring(L, -4);
					const char *field = lua_tostring(L, -2);
					if (strcmp(mod, LUA_GNAME) == 0)
						snprintf(out, room, "%s", field);
					else
						snprintf(out, room, "%s.%s", mod, field);
					lua_settop(L, fn);
					return true;
				}
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
	lua_settop(L, fn);
	return false;
}

/* Registry NAMES_KEY's name for the function on L's top, written to out; false if none. */
static bool
registered_name(lua_State *L, char *out, size_t room) {
	if (!lua_checkstack(L, 3))
		return false;
	bool found = false;
	if (lua_getfield(L, LUA_REGISTRYINDEX, NAMES_KEY) == LUA_TTABLE) {
		lua_pushvalue(L, -2);
		if (lua_rawget(L, -2) == LUA_TSTRING) {
			snprintf(out, room, "%s", lua_tostring(L, -1));
			found = true;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return found;
}

/*
 * The name of the C function of frame ar (a C frame), "" if none: cached;
 * a miss is looked for again after SAMPLE_RETRY samples (a lazy module may
 * store the function later).
 */
static const char *
c_name(struct snlua *l, lua_State *L, lua_Debug *ar) {
	struct sampler_names *names = l->sampler.names;
	if (names == NULL)
		names = l->sampler.names = skynet_calloc(1, sizeof(*names));
	if (!lua_getinfo(L, "f", ar)) // pushes the function
		return "";
	lua_CFunction fn = lua_tocfunction(L, -1);
	size_t slot = ((uintptr_t)fn >> 4) % SAMPLE_NAMES;
	char *name = names->name[slot];
	bool stale = names->fn[slot] != fn;
	if (!stale && name[0] == '\0' && names->retry[slot]-- == 0)
		stale = true;
	if (stale) {
		names->fn[slot] = fn;
		names->retry[slot] = SAMPLE_RETRY;
		if (!registered_name(L, name, SAMPLE_CNAME) && !loaded_name(L, name, SAMPLE_CNAME))
			name[0] = '\0';
	}
	lua_pop(L, 1);
	return name;
}

static void
add_frame(struct snlua *l, lua_State *L, lua_Debug *ar, struct sample_line *b) {
	if (!lua_getinfo(L, "Sn", ar)) {
		line_add(b, "?");
		return;
	}
	if (ar->what[0] == 'C') {
		const char *name = c_name(l, L, ar);
		if (name[0] == '\0')
			name = ar->name != NULL ? ar->name : "?";
		line_add(b, "%s [C]", name);
	} else if (ar->what[0] == 'm') {
		line_add(b, "main chunk (%s)", ar->short_src);
	} else {
		line_add(b, "%s (%s:%d)", ar->name != NULL ? ar->name : "function", ar->short_src,
		         ar->linedefined);
	}
}

/* L's frames, root first, at most SAMPLE_DEPTH (the newest). */
static void
add_thread(struct snlua *l, lua_State *L, struct sample_line *b) {
	lua_Debug ar;
	int depth = 0;
	while (depth <= SAMPLE_DEPTH && lua_getstack(L, depth, &ar))
		depth++;
	if (depth > SAMPLE_DEPTH) {
		line_add(b, "...");
		depth = SAMPLE_DEPTH;
	}
	for (int level = depth - 1; level >= 0; level--) {
		if (lua_getstack(L, level, &ar))
			add_frame(l, L, &ar, b);
	}
}

static void
add_prefix(struct snlua *l, struct sample_line *b) {
	line_add(b, "%s :%08x", l->sampler.name, l->sampler.handle);
}

void
snlua_sampler_take(struct snlua *l, lua_State *L) {
	uint64_t start_ns = skynet_monotonic_ns();
	struct sample_line b;
	b.len = 0;
	add_prefix(l, &b);
	if (L != l->L)
		add_thread(l, l->L, &b); // the dispatcher, waiting in the resume
	add_thread(l, L, &b);
	skynet_profiler_record(ATOM_LOAD_RELAXED(&l->sampler.ticket), b.text, b.len,
	                       skynet_monotonic_ns() - start_ns);
}

void
snlua_sampler_outside(struct snlua *l) {
	uint64_t start_ns = skynet_monotonic_ns();
	struct sample_line b;
	b.len = 0;
	add_prefix(l, &b);
	line_add(&b, "[outside Lua]");
	skynet_profiler_record(ATOM_LOAD_RELAXED(&l->sampler.ticket), b.text, b.len,
	                       skynet_monotonic_ns() - start_ns);
}

void
snlua_sampler_install(void) {
	skynet_profiler_set_sampler(snlua_trap_sample);
}
