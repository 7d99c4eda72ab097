/*
 * Fuzz target "datasheet": the image check and the proxy reader of
 * skynet.datasheet.core (lualib-src/lua-datasheet.c), and undump of
 * lualib/skynet/datasheet/dump.lua, on arbitrary bytes given as an image
 * string (what builder.new accepts from a script).
 *
 * Properties, for every input:
 *   - check accepts the bytes or raises "datasheet: invalid image (...)",
 *     and load agrees with it;
 *   - an accepted image reads through proxies without touching memory
 *     outside it (ASan): every table reachable from the root is filled once,
 *     holds only numbers, booleans, strings and proxies, and the walk visits
 *     as many tables as the tree undump builds holds;
 *   - update to a second copy of the image keeps every proxy valid and the
 *     second walk sees the same number of tables;
 *   - undump returns a tree or raises "datasheet image: ..." (no other
 *     error: every offset it follows is checked), and accepts whatever
 *     check accepts;
 *   - once the state is closed and the images released, no image is alive.
 *
 * The target runs from the repository root (test/fuzz/run.sh does), where it
 * reads dump.lua once and keeps its bytecode.
 */
#include "../../lualib-src/lua-datasheet.c"

#include "fuzz.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define DUMP_LUA "lualib/skynet/datasheet/dump.lua"

static struct {
	char *code; // owned: string.dump of dump.lua, made once
	size_t size;
} DUMP_CHUNK;

static int
dump_writer(lua_State *L, const void *p, size_t sz, void *ud) {
	(void)L;
	(void)ud;
	DUMP_CHUNK.code = skynet_realloc(DUMP_CHUNK.code, DUMP_CHUNK.size + sz);
	memcpy(DUMP_CHUNK.code + DUMP_CHUNK.size, p, sz);
	DUMP_CHUNK.size += sz;
	return 0;
}

/* Pushes the dump module (its chunk run once in this state). */
static void
push_dump_module(lua_State *L) {
	if (DUMP_CHUNK.code == NULL) {
		if (luaL_loadfile(L, DUMP_LUA) != LUA_OK) {
			fprintf(stderr, "fuzz_datasheet: %s (run from the repository root)\n",
			        lua_tostring(L, -1));
			abort();
		}
		FUZZ_CHECK(lua_dump(L, dump_writer, NULL, 0) == 0);
		lua_pop(L, 1);
	}
	FUZZ_CHECK(luaL_loadbuffer(L, DUMP_CHUNK.code, DUMP_CHUNK.size, "=dump.lua") == LUA_OK);
	FUZZ_CHECK(lua_pcall(L, 0, 1, 0) == LUA_OK);
}

static bool
error_starts(lua_State *L, const char *text) {
	const char *err = lua_tostring(L, -1);
	if (err != NULL && strstr(err, text) != NULL)
		return true;
	fprintf(stderr, "unexpected error: %s\n", err ? err : "(not a string)");
	return false;
}

/*
 * Reads the table at t whole, then every child; returns the number of tables
 * seen. A proxy (proxy true) must be untouched, and # fills it. Each
 * reachable table is met once (the image is a tree), so the recursion is
 * bounded by the table count.
 */
static size_t
walk(lua_State *L, int t, bool proxy) {
	luaL_checkstack(L, 4, NULL);
	if (proxy) {
		FUZZ_CHECK(lua_getmetatable(L, t) == 1); // an untouched proxy
		lua_pop(L, 1);
		lua_len(L, t);
		lua_pop(L, 1);
	}
	FUZZ_CHECK(lua_getmetatable(L, t) == 0); // a plain table now
	size_t n = 1;
	lua_pushnil(L);
	while (lua_next(L, t) != 0) {
		int kt = lua_type(L, -2);
		FUZZ_CHECK(kt == LUA_TNUMBER || kt == LUA_TSTRING);
		switch (lua_type(L, -1)) {
		case LUA_TNUMBER:
		case LUA_TBOOLEAN:
		case LUA_TSTRING:
			break;
		case LUA_TTABLE:
			n += walk(L, lua_gettop(L), proxy);
			break;
		default:
			FUZZ_CHECK(!"a proxy holds an unexpected type");
		}
		lua_pop(L, 1);
	}
	return n;
}

/* lua_pcall-able: walk(root, proxy) as an integer. */
static int
lwalk(lua_State *L) {
	lua_pushinteger(L, (lua_Integer)walk(L, 1, lua_toboolean(L, 2)));
	return 1;
}

static lua_Integer
walk_protected(lua_State *L, int root, bool proxy) {
	lua_pushcfunction(L, lwalk);
	lua_pushvalue(L, root);
	lua_pushboolean(L, proxy);
	FUZZ_CHECK(lua_pcall(L, 2, 1, 0) == LUA_OK);
	lua_Integer n = lua_tointeger(L, -1);
	lua_pop(L, 1);
	return n;
}

/* Number of tables in the tree undump returns, or -1 if it raised. */
static lua_Integer
undump_tables(lua_State *L, int dump, int image) {
	lua_getfield(L, dump, "undump");
	lua_pushvalue(L, image);
	if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
		FUZZ_CHECK(error_starts(L, "datasheet image: "));
		lua_pop(L, 1);
		return -1;
	}
	FUZZ_CHECK(lua_type(L, -1) == LUA_TTABLE);
	lua_Integer n = walk_protected(L, lua_gettop(L), false);
	lua_pop(L, 1);
	return n;
}

/* Calls core function name with the value at arg; leaves its result (or error) on top. */
static int
call_core(lua_State *L, int core, const char *name, int arg) {
	lua_getfield(L, core, name);
	lua_pushvalue(L, arg);
	return lua_pcall(L, 1, 1, 0);
}

static void
read_image(lua_State *L, int core, int image, lua_Integer undumped) {
	FUZZ_CHECK(call_core(L, core, "load", image) == LUA_OK);
	void *first = lua_touserdata(L, -1);
	lua_pop(L, 1);
	FUZZ_CHECK(call_core(L, core, "load", image) == LUA_OK);
	void *second = lua_touserdata(L, -1);
	lua_pop(L, 1);

	lua_getfield(L, core, "new");
	lua_pushlightuserdata(L, first);
	FUZZ_CHECK(lua_pcall(L, 1, 1, 0) == LUA_OK);
	int root = lua_gettop(L);
	FUZZ_CHECK(walk_protected(L, root, true) == undumped);

	lua_getfield(L, core, "update");
	lua_pushvalue(L, root);
	lua_pushlightuserdata(L, second);
	FUZZ_CHECK(lua_pcall(L, 2, 0, 0) == LUA_OK);
	FUZZ_CHECK(walk_protected(L, root, true) == undumped);
	lua_pop(L, 1);

	// The sheet holds a reference to the second copy; drop the loader's ones.
	image_release(first);
	image_release(second);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	lua_State *L = fuzz_lua_open();
	luaL_openlibs(L);
	luaL_requiref(L, "skynet.datasheet.core", luaopen_skynet_datasheet_core, 0);
	int core = lua_gettop(L);
	push_dump_module(L);
	int dump = lua_gettop(L);
	lua_pushlstring(L, (const char *)data, size);
	int image = lua_gettop(L);

	bool accepted = call_core(L, core, "check", image) == LUA_OK;
	if (!accepted)
		FUZZ_CHECK(error_starts(L, "datasheet: invalid image ("));
	lua_pop(L, 1);
	int loaded = call_core(L, core, "load", image);
	FUZZ_CHECK((loaded == LUA_OK) == accepted);
	if (loaded == LUA_OK)
		image_release(lua_touserdata(L, -1));
	lua_pop(L, 1);

	lua_Integer undumped = undump_tables(L, dump, image);
	if (accepted) {
		FUZZ_CHECK(undumped > 0);
		read_image(L, core, image, undumped);
	}
	lua_close(L);
	FUZZ_CHECK(ATOM_LOAD(&LIVE_IMAGES) == 0);
	return 0;
}
