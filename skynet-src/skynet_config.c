/*
 * The config file loader.
 *
 * A config file is Lua source. It runs, in text mode, with a fresh table as
 * its _ENV: every global assignment lands in that table, so later lines can
 * use earlier keys (root .. "service/?.lua"). The table's metatable resolves
 * one extra name, include, which runs another file into the same table; the
 * metatable is removed before the keys are read, so include is never a key.
 * Nothing else is visible to a config (no print, no os); the string library
 * is opened only so that string methods ("x"):upper() work.
 *
 * include "file" is relative to the directory of the file doing the include;
 * an absolute name resets the directory. The separator is LUA_DIRSEP (the
 * first character of package.config). The directory of the running file is
 * kept in the registry (CONFIG_DIR_KEY) as a Lua string, so an error that
 * unwinds through nested includes leaks nothing.
 *
 * Before a file is compiled, every $NAME (letters, digits, underscore) in its
 * text is replaced by getenv(NAME); the substitution is textual, so it also
 * reaches string literals and comments. An unset variable is an error.
 *
 * Conversion: keys must be strings; booleans become "true"/"false", integers
 * print without ".0" (a float with an integral value, such as 16/2, prints as
 * an integer too), other numbers print with "%.14g", strings are copied.
 * Tables, functions and the like are errors. The whole table is checked
 * before the first key is written, so a failed load leaves the env untouched.
 *
 * Everything runs inside one lua_pcall on a temporary lua_State that uses the
 * project allocator; every error ends up as one line in err. A count hook
 * stops a config (all its includes together) after CONFIG_MAX_STEPS VM
 * instructions, so an endless loop is an error instead of a hung startup.
 * Likewise the state may hold at most CONFIG_MAX_BYTES (beyond that Lua
 * raises a memory error), and no config file may reach that size.
 */

#include "skynet_env.h"
#include "skynet.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_INCLUDE_MAX 32                 // nesting depth; a file including itself stops here
#define CONFIG_HOOK_STEPS  1000               // VM instructions between two calls of the count hook
#define CONFIG_MAX_BYTES   ((size_t)64 << 20) // Lua memory, and the size a file must stay under

/* VM instructions a config may run. A variable only so that the fuzz target can lower it. */
static int CONFIG_MAX_STEPS = 10000000;

struct config_loader {
	const char *path; // borrowed: the top-level file name
	int depth;        // include nesting of the file running now
	int steps;        // VM instructions run so far, in units of CONFIG_HOOK_STEPS
	size_t bytes;     // memory the Lua state holds, at most CONFIG_MAX_BYTES
};

/* Registry keys (their addresses are the keys). */
static const char CONFIG_DIR_KEY = 'd';
static const char CONFIG_ENV_KEY = 'e';

/* The project allocator, refusing to grow the state past CONFIG_MAX_BYTES. */
static void *
config_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
	struct config_loader *ld = ud;
	size_t old = ptr != NULL ? osize : 0; // for a new block osize is a type tag
	if (nsize > old && nsize - old > CONFIG_MAX_BYTES - ld->bytes)
		return NULL; // Lua raises a memory error
	ld->bytes = ld->bytes - old + nsize;
	return skynet_lalloc(ptr, osize, nsize);
}

/*
 * Read the file at path and push its content as a string. Returns 0, or an
 * errno value with nothing pushed (EFBIG: CONFIG_MAX_BYTES or more).
 */
static int
push_file(lua_State *L, const char *path) {
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return errno;
	size_t cap = 4096, len = 0;
	char *buf = skynet_malloc(cap);
	int err = 0;
	for (;;) {
		len += fread(buf + len, 1, cap - len, f);
		if (len < cap)
			break;
		if (cap >= CONFIG_MAX_BYTES) {
			err = EFBIG; // also stops an endless device such as /dev/zero
			break;
		}
		cap *= 2;
		buf = skynet_realloc(buf, cap);
	}
	if (err == 0 && ferror(f))
		err = errno ? errno : EIO;
	(void)fclose(f); // read-only: nothing to do on failure
	if (err == 0)
		lua_pushlstring(L, buf, len);
	skynet_free(buf);
	return err;
}

/*
 * Raise a formatted message as it is, without a position prefix. The format
 * is lua_pushfstring's (%s %d %c %f %p %%), a subset of printf's.
 */
static int fail(lua_State *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
fail(lua_State *L, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	return lua_error(L);
}

static inline bool
is_name_char(char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int
line_of(const char *text, size_t pos) {
	int line = 1;
	for (size_t i = 0; i < pos; i++)
		line += text[i] == '\n';
	return line;
}

/* Push text with every $NAME replaced by getenv(NAME); raises on an unset NAME. */
static void
push_expanded(lua_State *L, const char *text, size_t len, const char *path) {
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	size_t i = 0;
	while (i < len) {
		const char *dollar = memchr(text + i, '$', len - i);
		size_t stop = dollar ? (size_t)(dollar - text) : len;
		luaL_addlstring(&b, text + i, stop - i);
		if (stop == len)
			break;
		size_t end = stop + 1;
		while (end < len && is_name_char(text[end]))
			end++;
		if (end == stop + 1) { // a lone '$' stays as it is
			luaL_addchar(&b, '$');
			i = end;
			continue;
		}
		lua_pushlstring(L, text + stop + 1, end - stop - 1); // balanced: popped below
		const char *name = lua_tostring(L, -1);
		const char *value = getenv(name);
		if (value == NULL)
			fail(L, "%s:%d: os.getenv() failed: %s", path, line_of(text, stop), name);
		lua_pop(L, 1);
		luaL_addstring(&b, value);
		i = end;
	}
	luaL_pushresult(&b);
}

/*
 * Raise "<where><formatted message>". level is the call level to blame (1: the caller of the
 * running C function), 0 for no position.
 */
static int raise_at(lua_State *L, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
raise_at(lua_State *L, int level, const char *fmt, ...) {
	if (level > 0)
		luaL_where(L, level);
	else
		lua_pushliteral(L, "");
	va_list ap;
	va_start(ap, fmt);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	lua_concat(L, 2);
	return lua_error(L);
}

/*
 * Run the config file name (resolved against the directory of the running
 * file) into the env table. level is the call level that asked for it, for
 * error positions (0: the top-level file). Raises on any error.
 */
static void
run_file(lua_State *L, struct config_loader *ld, const char *name, int level) {
	if (ld->depth >= CONFIG_INCLUDE_MAX)
		raise_at(L, level, "include nested deeper than %d levels (%s)", CONFIG_INCLUDE_MAX, name);
	int base = lua_gettop(L);
	lua_rawgetp(L, LUA_REGISTRYINDEX, &CONFIG_DIR_KEY); // base+1: directory of the includer
	if (name[0] == LUA_DIRSEP[0])
		lua_pushstring(L, name);
	else
		lua_pushfstring(L, "%s%s", lua_tostring(L, base + 1), name);
	const char *full = lua_tostring(L, base + 2); // base+2: resolved path
	const char *sep = strrchr(full, LUA_DIRSEP[0]);
	lua_pushlstring(L, full, sep ? (size_t)(sep - full + 1) : 0); // base+3: its directory
	int err = push_file(L, full);                                 // base+4: raw text
	if (err != 0)
		raise_at(L, level, "cannot open %s %s: %s", level > 0 ? "included file" : "config file",
		         full, strerror(err));
	size_t len;
	const char *text = lua_tolstring(L, base + 4, &len);
	push_expanded(L, text, len, full); // base+5: expanded text
	const char *code = lua_tolstring(L, base + 5, &len);
	const char *chunkname = lua_pushfstring(L, "@%s", full);
	if (luaL_loadbufferx(L, code, len, chunkname, "t") != LUA_OK)
		lua_error(L); // the message already names file and line
	lua_rawgetp(L, LUA_REGISTRYINDEX, &CONFIG_ENV_KEY);
	lua_setupvalue(L, -2, 1); // a main chunk's only upvalue is _ENV
	lua_pushvalue(L, base + 3);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &CONFIG_DIR_KEY);
	ld->depth++;
	lua_call(L, 0, 0);
	ld->depth--;
	lua_pushvalue(L, base + 1);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &CONFIG_DIR_KEY);
	lua_settop(L, base);
}

/* Count hook: raise once the config has run more than CONFIG_MAX_STEPS instructions. */
static void
count_steps(lua_State *L, lua_Debug *ar) {
	(void)ar;
	void *ud;
	lua_getallocf(L, &ud);
	struct config_loader *ld = ud;
	if (++ld->steps <= CONFIG_MAX_STEPS / CONFIG_HOOK_STEPS)
		return;
	luaL_where(L, 0); // the Lua function the hook interrupted
	lua_pushfstring(L, "config runs too long (more than %d instructions)", CONFIG_MAX_STEPS);
	lua_concat(L, 2);
	lua_error(L);
}

/* include "file": upvalue 1 is the struct config_loader. */
static int
config_include(lua_State *L) {
	struct config_loader *ld = lua_touserdata(L, lua_upvalueindex(1));
	if (lua_type(L, 1) != LUA_TSTRING)
		return raise_at(L, 1, "include: file name expected, got %s", luaL_typename(L, 1));
	run_file(L, ld, lua_tostring(L, 1), 1);
	return 0;
}

/* The env value for the entry at idx, or NULL when its type is not allowed. */
static const char *
value_string(lua_State *L, int idx, char *buf, size_t len) {
	switch (lua_type(L, idx)) {
	case LUA_TBOOLEAN:
		return lua_toboolean(L, idx) ? "true" : "false";
	case LUA_TSTRING:
		return lua_tostring(L, idx);
	case LUA_TNUMBER: {
		lua_Integer i = 0;
		lua_Number n = lua_tonumber(L, idx);
		if (lua_isinteger(L, idx))
			i = lua_tointeger(L, idx);
		else if (!lua_numbertointeger(n, &i) || (lua_Number)i != n) {
			snprintf(buf, len, LUA_NUMBER_FMT, (LUAI_UACNUMBER)n);
			return buf;
		}
		snprintf(buf, len, LUA_INTEGER_FMT, (LUAI_UACINT)i);
		return buf;
	}
	default:
		return NULL;
	}
}

/* Check every entry of the table at idx; raises on the first bad one. */
static void
check_table(lua_State *L, int idx) {
	char buf[64];
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		size_t klen;
		if (lua_type(L, -2) != LUA_TSTRING)
			fail(L, "Invalid config table");
		const char *key = lua_tolstring(L, -2, &klen);
		const char *value = value_string(L, -1, buf, sizeof(buf));
		if (klen != strlen(key) || value == NULL ||
		    (lua_type(L, -1) == LUA_TSTRING && lua_rawlen(L, -1) != strlen(value)))
			fail(L, "Invalid config table key = %s", key);
		if (skynet_getenv(key) != NULL)
			fail(L, "config key is set already: %s", key);
		lua_pop(L, 1);
	}
}

static void
store_table(lua_State *L, int idx) {
	char buf[64];
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		const char *key = lua_tostring(L, -2);
		if (skynet_setenv(key, value_string(L, -1, buf, sizeof(buf))) != 0)
			fail(L, "config key is set already: %s", key); // set by another thread meanwhile
		lua_pop(L, 1);
	}
}

/* lua_pcall body: argument 1 is the struct config_loader. */
static int
load_protected(lua_State *L) {
	struct config_loader *ld = lua_touserdata(L, 1);
	luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0); // string methods for configs
	lua_pop(L, 1);
	lua_newtable(L);
	int env = lua_gettop(L);
	lua_pushvalue(L, env);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &CONFIG_ENV_KEY);
	lua_createtable(L, 0, 1); // metatable
	lua_createtable(L, 0, 1); // its __index: the helpers
	lua_pushlightuserdata(L, ld);
	lua_pushcclosure(L, config_include, 1);
	lua_setfield(L, -2, "include");
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, env);
	lua_pushliteral(L, "");
	lua_rawsetp(L, LUA_REGISTRYINDEX, &CONFIG_DIR_KEY);

	run_file(L, ld, ld->path, 0);

	lua_pushnil(L);
	lua_setmetatable(L, env);
	check_table(L, env);
	store_table(L, env);
	return 0;
}

/* Copy msg into err as one line (newlines become spaces), truncating. */
static void
set_error(char *err, size_t err_len, const char *msg) {
	if (err == NULL || err_len == 0)
		return;
	size_t i = 0;
	for (; msg[i] != '\0' && i + 1 < err_len; i++)
		err[i] = (msg[i] == '\n' || msg[i] == '\r') ? ' ' : msg[i];
	err[i] = '\0';
}

int
skynet_config_load(const char *path, char *err, size_t err_len) {
	if (path == NULL || path[0] == '\0') {
		set_error(err, err_len, "no config file name given");
		return SKYNET_EINVAL;
	}
	struct config_loader ld = {.path = path, .depth = 0, .steps = 0, .bytes = 0};
	lua_State *L = lua_newstate(config_alloc, &ld);
	if (L == NULL) {
		set_error(err, err_len, "cannot create a lua state for the config");
		return SKYNET_EINVAL;
	}
	lua_sethook(L, count_steps, LUA_MASKCOUNT, CONFIG_HOOK_STEPS);
	lua_pushcfunction(L, load_protected);
	lua_pushlightuserdata(L, &ld);
	int ret = 0;
	int status = lua_pcall(L, 1, 0, 0);
	if (status == LUA_ERRMEM) {
		char msg[64];
		snprintf(msg, sizeof(msg), "config needs more than %zu MB of memory",
		         CONFIG_MAX_BYTES >> 20);
		set_error(err, err_len, msg);
		ret = SKYNET_EINVAL;
	} else if (status != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		set_error(err, err_len, msg ? msg : "config error (the error value is not a string)");
		ret = SKYNET_EINVAL;
	}
	lua_close(L);
	return ret;
}
