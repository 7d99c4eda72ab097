/*
 * bson decoder on hostile input, through full userdata of exact sizes (so
 * AddressSanitizer reports a read even one byte past the end): every prefix
 * of a document holding every type, seeded random mutations and random
 * bytes, deep nesting, bounds of embedded documents, and makeindex on the
 * same bytes. Each must decode (or index) or fail with one of the decoder's
 * errors. The Lua test test/lua/test_bson.lua covers the API itself. The
 * module is included directly because the unit tests link only the core.
 */
#include "../../lualib-src/bson/lua-bson.c"

#include "tt.h"
#include "tt_lua.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdint.h>
#include <string.h>

/* ud(s [, bson]): a full userdata of exactly #s bytes holding s; with bson true it gets the
 * bson metatable. */
static int
lud(lua_State *L) {
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	void *p = lua_newuserdatauv(L, len, 1);
	memcpy(p, s, len);
	if (lua_toboolean(L, 2))
		luaL_setmetatable(L, "bson");
	return 1;
}

static int
lnull(lua_State *L) {
	lua_pushlightuserdata(L, NULL);
	return 1;
}

static const char PRELUDE[] =
    "bson = require 'bson'\n"
    "local spack = string.pack\n"
    "local function bstr(s) return spack('<i4', #s + 1) .. s .. '\\0' end\n"
    "function rawdoc(e) return spack('<i4', #e + 5) .. e .. '\\0' end\n"
    "SAMPLE = tostring(bson.encode_order('d', 1.5, 's', 'text', 'o', { x = 1, y = { 1, 2 } },\n"
    "  'b', bson.binary('bin'), 'i', bson.objectid('0123456789abcdef01234567'), 't', true,\n"
    "  'D', bson.date(5), 'n', bson.null, 'r', bson.regex('a', 'b'),\n"
    "  'p', '\\0\\12' .. bstr('n') .. ('\\1'):rep(12), 'j', '\\0\\13' .. bstr('c'),\n"
    "  'c', '\\0\\15' .. spack('<i4', 15) .. bstr('f') .. rawdoc(''), 'I', 7,\n"
    "  'T', bson.timestamp(1, 2), 'L', 1 << 40, 'm', bson.minkey, 'M', bson.maxkey))\n"
    "local KNOWN = { 'Invalid bson block', 'Invalid document end',\n"
    "  'Invalid bson string , length =', 'Invalid bson type : ',\n"
    "  'Too depth while decoding bson', 'Invalid bson array key : ' }\n"
    "function known(err)\n"
    "  for _, text in ipairs(KNOWN) do\n"
    "    if tostring(err):find(text, 1, true) then return true end\n"
    "  end\n"
    "  print('unexpected error: ' .. tostring(err))\n"
    "  return false\n"
    "end\n"
    /* 'ok', 'error' or 'bad' (a result that is neither a table nor a known error); makeindex
     * walks only the top level, so it may succeed where decode fails */
    "function try(s)\n"
    "  local doc = ud(s, true)\n"
    "  local ok, res = pcall(doc.makeindex, doc)\n"
    "  if not ok and not known(res) then return 'bad' end\n"
    "  local ok2, res2 = pcall(bson.decode, doc)\n"
    "  ok, res = pcall(bson.decode, ud(s))\n"
    "  if ok ~= ok2 then return 'bad' end\n"
    "  if ok then return type(res) == 'table' and 'ok' or 'bad' end\n"
    "  return known(res) and 'error' or 'bad'\n"
    "end\n"
    "return true\n";

static lua_State *
open_state(void) {
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	luaL_requiref(L, "bson", luaopen_bson, 0);
	lua_pop(L, 1);
	lua_register(L, "ud", lud);
	lua_register(L, "null", lnull);
	if (!tt_lua_run(L, PRELUDE))
		abort();
	return L;
}

static void
sample_decodes_and_indexes(int *failed) {
	lua_State *L = open_state();
	TT_CHECK(tt_lua_run(L, "return try(SAMPLE) == 'ok'"));
	TT_CHECK(tt_lua_run(L, "local d = ud(SAMPLE, true):makeindex()\n"
	                       "d.I = 8; d.t = false; d.L = -1\n"
	                       "local t = d:decode()\n"
	                       "return t.I == 8 and t.t == false and t.L == -1 and t.s == 'text'"));
	lua_close(L);
}

/* Every prefix, once with the length field of the whole document (it claims
 * more than the userdata holds) and once with the length set to the prefix. */
static void
prefixes_fail(int *failed) {
	lua_State *L = open_state();
	TT_CHECK(
	    tt_lua_run(L, "for n = 0, #SAMPLE - 1 do\n"
	                  "  local cut = SAMPLE:sub(1, n)\n"
	                  "  if try(cut) ~= 'error' then print('prefix', n) return false end\n"
	                  "  if n >= 4 then\n"
	                  "    cut = string.pack('<i4', n) .. cut:sub(5)\n"
	                  "    if try(cut) ~= 'error' then print('sized prefix', n) return false end\n"
	                  "  end\n"
	                  "end\n"
	                  "return true"));
	lua_close(L);
}

/*
 * Under ThreadSanitizer each Lua error thrown from this (instrumented) module
 * through the system's uninstrumented liblua leaves a few frames on TSan's
 * shadow stack, and past 65536 frames in one thread TSan aborts. This
 * single-threaded loop gains nothing from TSan, so there it stays short;
 * the other builds run it whole.
 */
#if defined(__SANITIZE_THREAD__) || defined(SKYNET_TSAN)
#define RANDOM_ROUNDS 1000
#else
#define RANDOM_ROUNDS 20000
#endif

static void
random_input_is_decoded_or_refused(int *failed) {
	lua_State *L = open_state();
	int rounds = RANDOM_ROUNDS;
	lua_pushinteger(L, rounds);
	lua_setglobal(L, "ROUNDS");
	TT_CHECK(tt_lua_run(L, "math.randomseed(7)\n"
	                       "local random, ok = math.random, 0\n"
	                       "for i = 1, ROUNDS do\n"
	                       "  local s\n"
	                       "  if i % 3 == 0 then\n"
	                       "    local b = {}\n"
	                       "    for k = 1, random(0, 48) do b[k] = random(0, 255) end\n"
	                       "    s = string.char(table.unpack(b))\n"
	                       "    if #s >= 4 and random(2) == 1 then\n"
	                       "      s = string.pack('<i4', random(0, #s)) .. s:sub(5)\n"
	                       "    end\n"
	                       "  else\n"
	                       "    local b = { SAMPLE:byte(1, -1) }\n"
	                       "    for _ = 1, random(1, 4) do b[random(#b)] = random(0, 255) end\n"
	                       "    s = string.char(table.unpack(b))\n"
	                       "    if random(4) == 1 then s = s:sub(1, random(0, #s)) end\n"
	                       "  end\n"
	                       "  local r = try(s)\n"
	                       "  if r == 'bad' then print('input', i) return false end\n"
	                       "  if r == 'ok' then ok = ok + 1 end\n"
	                       "end\n"
	                       "return ok > 0"));
	lua_close(L);
}

static void
deep_nesting_is_refused(int *failed) {
	lua_State *L = open_state();
	/* 100000 documents inside each other: an error, not a C stack overflow. */
	TT_CHECK(tt_lua_run(L, "local n, head, tail = 100000, {}, {}\n"
	                       "for i = 1, n do\n"
	                       "  head[i] = string.pack('<i4', (n - i) * 8 + 5) .. '\\3a\\0'\n"
	                       "end\n"
	                       "local s = table.concat(head):sub(1, -4) .. ('\\0'):rep(n)\n"
	                       "s = string.pack('<i4', #s) .. s:sub(5)\n"
	                       "local ok, err = pcall(bson.decode, ud(s))\n"
	                       "return not ok and err:find('Too depth while decoding bson', 1, true)"));
	lua_close(L);
}

static void
embedded_userdata_is_bounded(int *failed) {
	lua_State *L = open_state();
	/* A userdata of 8 bytes whose length field claims 100. */
	TT_CHECK(tt_lua_run(L, "local ok, err = pcall(bson.encode_order, 'e',\n"
	                       "  ud(string.pack('<i4', 100) .. '\\0\\0\\0\\0'))\n"
	                       "return not ok and err:find('Invalid bson block (8:100)', 1, true)"));
	TT_CHECK(tt_lua_run(L, "local ok, err = pcall(bson.encode_order, 'e', ud('\\5\\0'))\n"
	                       "return not ok and err:find('Invalid bson block (2:4)', 1, true)"));
	TT_CHECK(tt_lua_run(L, "local ok, err = pcall(bson.encode_order, 'e', null())\n"
	                       "return not ok and err:find('Invalid bson block (0:4)', 1, true)"));
	TT_CHECK(tt_lua_run(L, "local ok, err = pcall(bson.decode, null())\n"
	                       "return not ok and err:find('Invalid bson block (0:4)', 1, true)"));
	/* A full userdata longer than its document: the rest is ignored. */
	TT_CHECK(tt_lua_run(L, "local t = bson.decode(ud(rawdoc('\\8b\\0\\1') .. 'junk'))\n"
	                       "return t.b == true"));
	lua_close(L);
}

/* The UTF-8 check stops at the length it is given: a lead byte whose
 * continuation lies past it fails, whatever follows in memory. */
static void
utf8_stops_at_the_length(int *failed) {
	const uint8_t e_acute[] = {0xc3, 0xa9};
	const uint8_t euro[] = {0xe2, 0x82, 0xac};
	const uint8_t grin[] = {0xf0, 0x9f, 0x98, 0x80};
	TT_CHECK(is_utf8(e_acute, 2));
	TT_CHECK(!is_utf8(e_acute, 1));
	TT_CHECK(is_utf8(euro, 3));
	TT_CHECK(!is_utf8(euro, 2));
	TT_CHECK(is_utf8(grin, 4));
	TT_CHECK(!is_utf8(grin, 3));
	TT_CHECK(is_utf8(grin, 0));
}

int
main(void) {
	TT_RUN(utf8_stops_at_the_length);
	TT_RUN(sample_decodes_and_indexes);
	TT_RUN(prefixes_fail);
	TT_RUN(random_input_is_decoded_or_refused);
	TT_RUN(deep_nesting_is_refused);
	TT_RUN(embedded_userdata_is_bounded);
	return tt_summary();
}
