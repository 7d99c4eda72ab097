/*
 * skynet.pack / skynet.unpack: byte vectors, round trips, limits,
 * errors and hostile input. The implementation is included directly because
 * the unit tests link only the core archive.
 */
#include "../../lualib-src/lua-seri.c"

#include "tt.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Lua helpers every case may use: deep equality that also compares number subtypes. */
static const char PRELUDE[] = "function deq(a, b)\n"
                              "  if type(a) ~= type(b) then return false end\n"
                              "  if type(a) == 'number' then\n"
                              "    if math.type(a) ~= math.type(b) then return false end\n"
                              "    if a ~= a then return b ~= b end\n"
                              "    return a == b\n"
                              "  end\n"
                              "  if type(a) ~= 'table' then return a == b end\n"
                              "  for k, v in next, a do\n"
                              "    if not deq(v, rawget(b, k)) then return false end\n"
                              "  end\n"
                              "  for k in next, b do\n"
                              "    if rawget(a, k) == nil then return false end\n"
                              "  end\n"
                              "  return true\n"
                              "end\n"
                              "function roundtrip(...)\n"
                              "  local n = select('#', ...)\n"
                              "  local s = packstring(...)\n"
                              "  local p, sz = pack(...)\n"
                              "  local same = #s == sz\n"
                              "  local a = table.pack(unpack(s))\n"
                              "  local b = table.pack(unpack(p, sz))\n"
                              "  free(p)\n"
                              "  if a.n ~= n or b.n ~= n then return false end\n"
                              "  for i = 1, n do\n"
                              "    local v = select(i, ...)\n"
                              "    if not deq(a[i], v) or not deq(b[i], v) then return false end\n"
                              "  end\n"
                              "  return same\n"
                              "end\n"
                              "function nest(levels, inner)\n"
                              "  local t = inner\n"
                              "  for i = 2, levels do t = { t } end\n"
                              "  return t\n"
                              "end\n";

static int
lfree(lua_State *L) {
	skynet_free(lua_touserdata(L, 1));
	return 0;
}

static lua_State *
new_state(void) {
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	lua_register(L, "pack", luaseri_pack);
	lua_register(L, "packstring", luaseri_packstring);
	lua_register(L, "unpack", luaseri_unpack);
	lua_register(L, "free", lfree);
	lua_pushlightuserdata(L, (void *)(uintptr_t)0x1122334455667788u);
	lua_setglobal(L, "LUD");
	lua_pushlightuserdata(L, NULL);
	lua_setglobal(L, "NULL");
	lua_newuserdatauv(L, 16, 0);
	lua_setglobal(L, "FULL");
	if (luaL_dostring(L, PRELUDE) != LUA_OK) {
		fprintf(stderr, "prelude: %s\n", lua_tostring(L, -1));
		abort();
	}
	return L;
}

/* Run a chunk; true when it runs without error and returns true. */
static bool
lua_true(lua_State *L, const char *code) {
	int top = lua_gettop(L);
	bool ok = false;
	if (luaL_loadstring(L, code) != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK)
		fprintf(stderr, "lua error: %s\n  in: %s\n", lua_tostring(L, -1), code);
	else
		ok = lua_toboolean(L, -1);
	lua_settop(L, top);
	return ok;
}

/*
 * luaL_error prefixes the position of the Lua code that called the C
 * function ("[string \"...\"]:1: "); skynet's messages are what follows.
 */
static const char *
strip_where(const char *msg) {
	if (strncmp(msg, "[string \"", 9) != 0)
		return msg;
	const char *p = strstr(msg, "\"]:");
	if (p == NULL)
		return msg;
	p += 3;
	while (*p >= '0' && *p <= '9')
		p++;
	return p[0] == ':' && p[1] == ' ' ? p + 2 : msg;
}

/*
 * Run a chunk that must raise; its error message without the position
 * prefix, or "" when it did not raise.
 */
static const char *
lua_fails(lua_State *L, const char *code) {
	static char msg[256];
	int top = lua_gettop(L);
	msg[0] = '\0';
	if (luaL_loadstring(L, code) != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
		const char *m = lua_tostring(L, -1);
		snprintf(msg, sizeof(msg), "%s", m ? strip_where(m) : "(non-string error)");
	}
	lua_settop(L, top);
	return msg;
}

static bool
fails_with(lua_State *L, const char *code, const char *expect) {
	const char *msg = lua_fails(L, code);
	if (strcmp(msg, expect) == 0)
		return true;
	fprintf(stderr, "expected error \"%s\", got \"%s\"\n  in: %s\n", expect, msg, code);
	return false;
}

/* True when msg is exactly "Invalid serialize stream <n> (line:<m>)"; stores n. */
static bool
is_invalid_stream(const char *msg, long *remaining) {
	long n = -1;
	int line = 0, end = 0;
	if (sscanf(msg, "Invalid serialize stream %ld (line:%d)%n", &n, &line, &end) != 2)
		return false;
	if (msg[end] != '\0' || n < 0 || line <= 0)
		return false;
	if (remaining != NULL)
		*remaining = n;
	return true;
}

static size_t
hex_decode(const char *hex, uint8_t *out, size_t cap) {
	size_t n = 0;
	unsigned v;
	int used;
	while (n < cap && sscanf(hex, " %2x%n", &v, &used) == 1) {
		out[n++] = (uint8_t)v;
		hex += used;
	}
	return n;
}

static void
dump(const char *what, const uint8_t *p, size_t n) {
	fprintf(stderr, "  %s:", what);
	for (size_t i = 0; i < n && i < 64; i++)
		fprintf(stderr, " %02x", p[i]);
	fprintf(stderr, n > 64 ? " ...\n" : "\n");
}

/* Both pack and packstring of the Lua expression list args give exactly hex. */
static bool
packs_to(lua_State *L, const char *args, const char *hex) {
	uint8_t want[512];
	size_t want_n = hex_decode(hex, want, sizeof(want));
	char code[512];
	snprintf(code, sizeof(code), "return packstring(%s)", args);
	bool ok = false;
	if (luaL_dostring(L, code) != LUA_OK) {
		fprintf(stderr, "lua error: %s\n", lua_tostring(L, -1));
		lua_settop(L, 0);
		return false;
	}
	size_t n;
	const uint8_t *got = (const uint8_t *)lua_tolstring(L, -1, &n);
	ok = n == want_n && memcmp(got, want, n) == 0;
	if (!ok) {
		fprintf(stderr, "packstring(%s) mismatch\n", args);
		dump("want", want, want_n);
		dump("got ", got, n);
	}
	snprintf(code, sizeof(code), "return pack(%s)", args);
	lua_settop(L, 0);
	if (luaL_dostring(L, code) != LUA_OK) {
		lua_settop(L, 0);
		return false;
	}
	void *buf = lua_touserdata(L, -2);
	lua_Integer sz = lua_tointeger(L, -1);
	if (sz != (lua_Integer)want_n || memcmp(buf, want, want_n) != 0) {
		fprintf(stderr, "pack(%s) mismatch\n", args);
		ok = false;
	}
	skynet_free(buf);
	lua_settop(L, 0);
	return ok;
}

static void
vectors_nil_boolean(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(packs_to(L, "nil", "00"));
	TT_CHECK(packs_to(L, "false", "01"));
	TT_CHECK(packs_to(L, "true", "09"));
	TT_CHECK(packs_to(L, "1, nil, 'a'", "0a 01 00 0c 61"));
	TT_CHECK(packs_to(L, "nil, nil", "00 00"));
	TT_CHECK(packs_to(L, "", ""));
	lua_close(L);
}

static void
vectors_integers(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(packs_to(L, "0", "02"));
	TT_CHECK(packs_to(L, "1", "0a 01"));
	TT_CHECK(packs_to(L, "0xff", "0a ff"));
	TT_CHECK(packs_to(L, "0x100", "12 00 01"));
	TT_CHECK(packs_to(L, "0xffff", "12 ff ff"));
	TT_CHECK(packs_to(L, "0x10000", "22 00 00 01 00"));
	TT_CHECK(packs_to(L, "0x7fffffff", "22 ff ff ff 7f"));
	TT_CHECK(packs_to(L, "0x80000000", "32 00 00 00 80 00 00 00 00"));
	TT_CHECK(packs_to(L, "-1", "22 ff ff ff ff"));
	TT_CHECK(packs_to(L, "-256", "22 00 ff ff ff"));
	TT_CHECK(packs_to(L, "-0x80000000", "22 00 00 00 80"));
	TT_CHECK(packs_to(L, "-0x80000000 - 1", "32 ff ff ff 7f ff ff ff ff"));
	TT_CHECK(packs_to(L, "math.mininteger", "32 00 00 00 00 00 00 00 80"));
	TT_CHECK(packs_to(L, "math.maxinteger", "32 ff ff ff ff ff ff ff 7f"));
	lua_close(L);
}

static void
vectors_floats(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(packs_to(L, "1.0", "42 00 00 00 00 00 00 f0 3f"));
	TT_CHECK(packs_to(L, "0.0", "42 00 00 00 00 00 00 00 00"));
	TT_CHECK(packs_to(L, "-0.0", "42 00 00 00 00 00 00 00 80"));
	TT_CHECK(packs_to(L, "math.huge", "42 00 00 00 00 00 00 f0 7f"));
	TT_CHECK(packs_to(L, "-math.huge", "42 00 00 00 00 00 00 f0 ff"));
	TT_CHECK(packs_to(L, "0.5", "42 00 00 00 00 00 00 e0 3f"));
	/* NaN: any payload, but the float tag and a NaN back. */
	TT_CHECK(lua_true(L, "local s = packstring(0/0) return #s == 9 and s:byte(1) == 0x42 "
	                     "and select(1, unpack(s)) ~= select(1, unpack(s))"));
	TT_CHECK(lua_true(L, "local v = unpack(packstring(0/0)) return math.type(v) == 'float'"));
	lua_close(L);
}

static void
vectors_strings(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(packs_to(L, "''", "04"));
	TT_CHECK(packs_to(L, "'a'", "0c 61"));
	TT_CHECK(packs_to(L, "'ab'", "14 61 62"));
	TT_CHECK(packs_to(L, "'\\0'", "0c 00"));
	TT_CHECK(lua_true(L, "local s = packstring(('x'):rep(31)) "
	                     "return #s == 32 and s:byte(1) == 0xfc and s:sub(2) == ('x'):rep(31)"));
	TT_CHECK(lua_true(L, "local s = packstring(('x'):rep(32)) "
	                     "return #s == 35 and s:sub(1, 3) == '\\x15\\x20\\x00' "
	                     "and s:sub(4) == ('x'):rep(32)"));
	TT_CHECK(lua_true(L, "local s = packstring(('y'):rep(65535)) "
	                     "return #s == 65538 and s:sub(1, 3) == '\\x15\\xff\\xff' "
	                     "and s:sub(4) == ('y'):rep(65535)"));
	TT_CHECK(lua_true(L, "local s = packstring(('z'):rep(65536)) "
	                     "return #s == 65541 and s:sub(1, 5) == '\\x25\\x00\\x00\\x01\\x00' "
	                     "and s:sub(6) == ('z'):rep(65536)"));
	lua_close(L);
}

static void
vectors_lightuserdata(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(packs_to(L, "LUD", "03 88 77 66 55 44 33 22 11"));
	TT_CHECK(packs_to(L, "NULL", "03 00 00 00 00 00 00 00 00"));
	TT_CHECK(lua_true(L, "return unpack(packstring(LUD)) == LUD"));
	lua_close(L);
}

static void
vectors_tables(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(packs_to(L, "{}", "06 00"));
	TT_CHECK(packs_to(L, "{1, 2}", "16 0a 01 0a 02 00"));
	TT_CHECK(packs_to(L, "{x = 1}", "06 0c 78 0a 01 00"));
	TT_CHECK(packs_to(L, "{1, x = 1}", "0e 0a 01 0c 78 0a 01 00"));
	TT_CHECK(packs_to(L, "{{}}", "0e 06 00 00"));
	TT_CHECK(packs_to(L, "{[1.5] = true}", "06 42 00 00 00 00 00 00 f8 3f 09 00"));
	TT_CHECK(packs_to(L, "{[-1] = 0}", "06 22 ff ff ff ff 02 00"));
	/* Nils inside the border: the constructor gives raw length 3. */
	TT_CHECK(packs_to(L, "{1, nil, 3}", "1e 0a 01 00 0a 03 00"));
	/* Integer keys past the border go to the pair part. */
	TT_CHECK(packs_to(L, "{[2] = 5}", "06 0a 02 0a 05 00"));
	/* 30 items fit the cookie; 31 take the 0xFE form with N as a full number. */
	TT_CHECK(lua_true(L, "local t = {} for i = 1, 30 do t[i] = i end "
	                     "local s = packstring(t) local want = '\\xf6' "
	                     "for i = 1, 30 do want = want .. '\\x0a' .. string.char(i) end "
	                     "return s == want .. '\\0'"));
	TT_CHECK(lua_true(L, "local t = {} for i = 1, 31 do t[i] = i end "
	                     "local s = packstring(t) local want = '\\xfe\\x0a\\x1f' "
	                     "for i = 1, 31 do want = want .. '\\x0a' .. string.char(i) end "
	                     "return s == want .. '\\0'"));
	TT_CHECK(lua_true(L, "local t = {} for i = 1, 256 do t[i] = false end "
	                     "local s = packstring(t) "
	                     "return s == '\\xfe\\x12\\x00\\x01' .. ('\\x01'):rep(256) .. '\\0'"));
	TT_CHECK(lua_true(L, "local t = {} for i = 1, 70000 do t[i] = 0 end "
	                     "local s = packstring(t) "
	                     "return s == '\\xfe\\x22\\x70\\x11\\x01\\x00' .. ('\\x02'):rep(70000) .. "
	                     "'\\0'"));
	lua_close(L);
}

static void
vectors_metatables(int *failed) {
	lua_State *L = new_state();
	/* __pairs: array length 0, the iterator's pairs, then the terminator. */
	TT_CHECK(packs_to(L,
	                  "setmetatable({1, 2, 3}, {__pairs = function(t) "
	                  "return next, {a = 1}, nil end})",
	                  "06 0c 61 0a 01 00"));
	TT_CHECK(packs_to(L, "setmetatable({}, {__pairs = function(t) return ipairs({5, 6}) end})",
	                  "06 0a 01 0a 05 0a 02 0a 06 00"));
	TT_CHECK(packs_to(L, "setmetatable({}, {__pairs = function(t) return function() end end})",
	                  "06 00"));
	/* __index and __len are ignored: raw access only. */
	TT_CHECK(packs_to(L,
	                  "setmetatable({1, 2}, {__len = function() return 5 end, "
	                  "__index = function() return 9 end})",
	                  "16 0a 01 0a 02 00"));
	/* The decoder drops metatables. */
	TT_CHECK(lua_true(L, "local t = unpack(packstring(setmetatable({1}, {}))) "
	                     "return getmetatable(t) == nil and t[1] == 1"));
	/* An error inside __pairs propagates unchanged. */
	TT_CHECK(fails_with(L,
	                    "pack(('x'):rep(1000), setmetatable({}, {__pairs = function() "
	                    "error('boom', 0) end}))",
	                    "boom"));
	TT_CHECK(fails_with(L,
	                    "pack(('x'):rep(1000), setmetatable({}, {__pairs = function(t) "
	                    "return function() error('iter', 0) end end}))",
	                    "iter"));
	lua_close(L);
}

static void
roundtrip_every_type(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(lua_true(L, "return roundtrip(nil)"));
	TT_CHECK(lua_true(L, "return roundtrip()"));
	TT_CHECK(lua_true(L, "return roundtrip(true, false, nil, nil)"));
	TT_CHECK(lua_true(L, "return roundtrip(0, 1, 255, 256, 65535, 65536, 0x7fffffff, "
	                     "0x80000000, -1, -0x80000000, -0x80000001, math.mininteger, "
	                     "math.maxinteger)"));
	TT_CHECK(lua_true(L, "return roundtrip(0.0, -0.0, 1.0, 1.5, -2.25, 1e300, 5e-324, "
	                     "math.huge, -math.huge, 0/0)"));
	TT_CHECK(lua_true(L, "return roundtrip('', 'a', ('q'):rep(31), ('q'):rep(32), "
	                     "('q'):rep(65535), ('q'):rep(65536), '\\0\\1\\2')"));
	TT_CHECK(lua_true(L, "return roundtrip(LUD, NULL)"));
	TT_CHECK(lua_true(L, "return roundtrip({}, {1, 2, 3}, {x = 1, y = {z = {'deep'}}}, "
	                     "{1, nil, 3, [10] = 10, [-5] = 'neg', [2.5] = 'f', [true] = false})"));
	/* Integer and float subtypes survive, also as keys. */
	TT_CHECK(lua_true(L, "local a, b, c = unpack(packstring(1, 1.0, 2^53)) "
	                     "return math.type(a) == 'integer' and math.type(b) == 'float' "
	                     "and math.type(c) == 'float'"));
	TT_CHECK(lua_true(L, "local t = unpack(packstring({[1.5] = 1, [7] = 2})) "
	                     "return t[1.5] == 1 and t[7] == 2"));
	/* Table keys. */
	TT_CHECK(lua_true(L,
	                  "local t = unpack(packstring({[{1}] = 'k'})) "
	                  "local k, v = next(t) return k[1] == 1 and v == 'k' and next(t, k) == nil"));
	/* Large mixed table. */
	TT_CHECK(lua_true(L, "local t = {} for i = 1, 1000 do t[i] = i * 3 t['k' .. i] = {i, "
	                     "tostring(i)} end return roundtrip(t)"));
	/* Hand-made streams: assignments happen in stream order, so a later duplicate wins. */
	TT_CHECK(lua_true(L, "local t = unpack('\\x06\\x0c\\x61\\x0a\\x01\\x0c\\x61\\x0a\\x02\\0') "
	                     "return t.a == 2"));
	TT_CHECK(lua_true(L, "local t = unpack('\\x0e\\x0a\\x05\\x0a\\x01\\x0a\\x07\\0') "
	                     "return t[1] == 7 and #t == 1"));
	TT_CHECK(lua_true(L, "local t = unpack('\\x06\\x0a\\x02\\x09\\0') "
	                     "return t[2] == true and next(t, 2) == nil"));
	/* Trailing nils survive as values. */
	TT_CHECK(lua_true(L, "return select('#', unpack(packstring(1, nil, nil))) == 3"));
	lua_close(L);
}

static void
roundtrip_large_string(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(lua_true(L, "local s = {} for i = 1, 1048576 // 16 do "
	                     "s[i] = string.format('%015d\\n', i) end s = table.concat(s) "
	                     "return #s == 1048576 and roundtrip(s, {s, s})"));
	TT_CHECK(lua_true(L, "local s = ('b'):rep(1048576) local p = packstring(s) "
	                     "return #p == 1048581 and p:sub(1, 5) == '\\x25\\0\\0\\x10\\0'"));
	lua_close(L);
}

static void
pack_buffer_ownership(int *failed) {
	lua_State *L = new_state();
	/* pack() returns a buffer even for no values; the caller frees it. */
	TT_CHECK(lua_true(L, "local p, n = pack() free(p) return type(p) == 'userdata' and n == 0"));
	TT_CHECK(lua_true(L, "local p, n = pack(('x'):rep(5000)) local ok = n == 5003 "
	                     "and unpack(p, n) == ('x'):rep(5000) and unpack(p, n) == ('x'):rep(5000) "
	                     "free(p) return ok"));
	/* Reentrant: a __pairs iterator that packs while the outer pack is running. */
	TT_CHECK(lua_true(L, "local inner local t = setmetatable({}, {__pairs = function() "
	                     "inner = packstring(('i'):rep(600), {1, 2}) return next, {a = 1} end}) "
	                     "local s = packstring(('o'):rep(600), t) "
	                     "local o, u = unpack(s) local x, y = unpack(inner) "
	                     "return o == ('o'):rep(600) and u.a == 1 and x == ('i'):rep(600) "
	                     "and y[2] == 2"));
	lua_close(L);
}

static void
depth_limit(int *failed) {
	lua_State *L = new_state();
	const char *too_deep = "serialize can't pack too depth table";
	/* 32 nested tables holding a value: fine; 33: the value is too deep. */
	TT_CHECK(lua_true(L, "return roundtrip(nest(32, {1}))"));
	TT_CHECK(fails_with(L, "pack(nest(33, {1}))", too_deep));
	TT_CHECK(fails_with(L, "packstring(nest(33, {1}))", too_deep));
	/* The 33rd level itself may exist if it is empty; a 34th may not. */
	TT_CHECK(lua_true(L, "return roundtrip(nest(33, {}))"));
	TT_CHECK(fails_with(L, "pack(nest(34, {}))", too_deep));
	/* Keys count like values. */
	TT_CHECK(fails_with(L, "pack(nest(32, {[{1}] = 1}))", too_deep));
	/* Cycles stop at the depth limit; big buffers are freed on the way out. */
	TT_CHECK(fails_with(L, "local t = {} t[1] = t pack(t)", too_deep));
	TT_CHECK(fails_with(L, "local t = {('x'):rep(300)} t[2] = t pack(t)", too_deep));
	TT_CHECK(fails_with(L, "local t = {('x'):rep(300)} t[2] = t packstring(t)", too_deep));
	/* The decoder accepts the deepest stream the encoder makes, and rejects one more. */
	TT_CHECK(lua_true(L, "return packstring(nest(33, {})) == ('\\x0e'):rep(32) .. "
	                     "'\\x06\\0' .. ('\\0'):rep(32)"));
	long rem = -1;
	TT_CHECK(is_invalid_stream(lua_fails(L, "unpack(('\\x0e'):rep(33) .. '\\x06\\0' .. "
	                                        "('\\0'):rep(33))"),
	                           &rem));
	TT_CHECK(rem == 34);
	/* A long run of table tags never recurses deeply. */
	TT_CHECK(is_invalid_stream(lua_fails(L, "unpack(('\\x0e'):rep(1000000))"), NULL));
	TT_CHECK(is_invalid_stream(lua_fails(L, "unpack(('\\x06\\x06'):rep(500000))"), NULL));
	lua_close(L);
}

static void
unsupported_types(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(fails_with(L, "pack(print)", "Unsupport type function to serialize"));
	TT_CHECK(fails_with(L, "pack(function() end)", "Unsupport type function to serialize"));
	TT_CHECK(
	    fails_with(L, "packstring(coroutine.create(print))", "Unsupport type thread to serialize"));
	TT_CHECK(fails_with(L, "pack(FULL)", "Unsupport type userdata to serialize"));
	TT_CHECK(
	    fails_with(L, "pack(1, 2, {a = {b = print}})", "Unsupport type function to serialize"));
	TT_CHECK(fails_with(L, "pack({[print] = 1})", "Unsupport type function to serialize"));
	/* After the buffer left the C stack: the box frees it (LeakSanitizer checks). */
	TT_CHECK(
	    fails_with(L, "pack(('x'):rep(100000), print)", "Unsupport type function to serialize"));
	TT_CHECK(fails_with(L, "packstring(('x'):rep(100000), {FULL})",
	                    "Unsupport type userdata to serialize"));
	/* An error escaping a coroutine that is never closed: __gc frees the buffer. */
	TT_CHECK(lua_true(
	    L, "local co = coroutine.create(function() pack(('x'):rep(9000), print) end) "
	       "local ok, err = coroutine.resume(co) "
	       "return not ok and err:find('Unsupport type function to serialize', 1, true) ~= nil"));
	TT_CHECK(lua_true(L, "collectgarbage() return true"));
	lua_close(L);
}

static void
size_limit(int *failed) {
	lua_State *L = new_state();
	SERI_MAX_BYTES = 1000;
	TT_CHECK(lua_true(L, "local p, n = pack(('x'):rep(995)) free(p) return n == 998"));
	TT_CHECK(fails_with(L, "pack(('x'):rep(2000))", "serialize can't pack more than 1000 bytes"));
	TT_CHECK(fails_with(L, "pack(('x'):rep(997), 1)", "serialize can't pack more than 1000 bytes"));
	TT_CHECK(fails_with(L, "local t = {} for i = 1, 600 do t[i] = i end packstring(t)",
	                    "serialize can't pack more than 1000 bytes"));
	/* A limit below the inline buffer is honoured too. */
	SERI_MAX_BYTES = 100;
	TT_CHECK(lua_true(L, "return #packstring(('x'):rep(97)) == 100"));
	TT_CHECK(
	    fails_with(L, "packstring(('x'):rep(98))", "serialize can't pack more than 100 bytes"));
	TT_CHECK(fails_with(L, "local t = {} for i = 1, 120 do t[i] = true end pack(t)",
	                    "serialize can't pack more than 100 bytes"));
	SERI_MAX_BYTES = INT_MAX;
	lua_close(L);
}

static void
unpack_empty_and_null(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(lua_true(L, "return select('#', unpack(nil)) == 0"));
	TT_CHECK(lua_true(L, "return select('#', unpack()) == 0"));
	TT_CHECK(lua_true(L, "return select('#', unpack('')) == 0"));
	TT_CHECK(lua_true(L, "return select('#', unpack(NULL, 0)) == 0"));
	TT_CHECK(lua_true(L, "return select('#', unpack(LUD, 0)) == 0"));
	TT_CHECK(fails_with(L, "unpack(NULL, 5)", "deserialize null pointer"));
	TT_CHECK(lua_fails(L, "unpack(LUD, -1)")[0] != '\0');
	TT_CHECK(lua_fails(L, "unpack(LUD)")[0] != '\0');
	TT_CHECK(lua_fails(L, "unpack(42)")[0] != '\0');
	lua_close(L);
}

/*
 * Unpack an exact-size heap copy, so a read past the end trips ASan. Returns
 * the pcall status; on success *nvals is the number of values pushed, on
 * error the message is on top of the stack.
 */
static int
unpack_bytes(lua_State *L, const uint8_t *p, size_t n, int *nvals) {
	uint8_t *copy = skynet_malloc(n);
	memcpy(copy, p, n);
	int top = lua_gettop(L);
	lua_pushcfunction(L, luaseri_unpack);
	lua_pushlightuserdata(L, copy);
	lua_pushinteger(L, (lua_Integer)n);
	int status = lua_pcall(L, 2, LUA_MULTRET, 0);
	skynet_free(copy);
	*nvals = lua_gettop(L) - top;
	return status;
}

/*
 * Every proper prefix of a one-value stream is invalid, with the exact message
 * shape (long streams: every cut near either end, and a sample between).
 */
static bool
all_truncations_fail(lua_State *L, const char *expr) {
	char code[256];
	snprintf(code, sizeof(code), "return packstring(%s)", expr);
	if (luaL_dostring(L, code) != LUA_OK)
		return false;
	size_t n;
	const uint8_t *s = (const uint8_t *)lua_tolstring(L, -1, &n);
	int base = lua_gettop(L);
	bool ok = true;
	for (size_t cut = 1; cut<n; cut += n> 4096 && cut > 64 && cut + 64 < n ? 997 : 1) {
		long rem = -1;
		int nvals;
		int st = unpack_bytes(L, s, cut, &nvals);
		if (st == LUA_OK || !is_invalid_stream(lua_tostring(L, -1), &rem) || rem >= (long)cut) {
			fprintf(stderr, "%s cut at %zu/%zu: %s\n", expr, cut, n,
			        st == LUA_OK ? "no error" : lua_tostring(L, -1));
			ok = false;
		}
		lua_settop(L, base);
	}
	int nvals;
	if (unpack_bytes(L, s, n, &nvals) != LUA_OK || nvals != 1) // the whole stream decodes
		ok = false;
	lua_settop(L, 0);
	return ok;
}

static void
malformed_truncations(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(all_truncations_fail(L, "{}"));
	TT_CHECK(all_truncations_fail(L, "{1, 0x100, 0x10000, 0x100000000, -1, 1.5, LUD, true}"));
	TT_CHECK(all_truncations_fail(L, "('s'):rep(31)"));
	TT_CHECK(all_truncations_fail(L, "('s'):rep(40)"));
	TT_CHECK(all_truncations_fail(L, "('s'):rep(70000)"));
	TT_CHECK(all_truncations_fail(L, "{x = {y = {'z', ('l'):rep(300)}}, [2.5] = false}"));
	TT_CHECK(all_truncations_fail(L, "(function() local t = {} for i = 1, 40 do t[i] = i end "
	                                 "return t end)()"));
	TT_CHECK(all_truncations_fail(L, "setmetatable({}, {__pairs = function() "
	                                 "return next, {1, 2, k = 'v'} end})"));
	TT_CHECK(all_truncations_fail(L, "2^70"));
	TT_CHECK(all_truncations_fail(L, "math.mininteger"));
	/* The remaining count in the message is the bytes left when the read failed. */
	long rem = -1;
	TT_CHECK(is_invalid_stream(lua_fails(L, "unpack('\\x15\\x20')"), &rem) && rem == 1);
	TT_CHECK(is_invalid_stream(lua_fails(L, "unpack('\\x0a')"), &rem) && rem == 0);
	TT_CHECK(
	    is_invalid_stream(lua_fails(L, "unpack('\\x25\\xff\\xff\\xff\\xff' .. 'abc')"), &rem) &&
	    rem == 3);
	lua_close(L);
}

static void
malformed_invalid_tags(int *failed) {
	lua_State *L = new_state();
	static const char *const bad[] = {
	    "'\\x07'",                                          // type 7
	    "'\\xff'",                                          // type 7, cookie 31
	    "'\\x08'",                                          // nil with a cookie
	    "'\\x11'",                                          // boolean cookie 2
	    "'\\x1a' .. ('\\0'):rep(8)",                        // number subtype 3
	    "'\\x4a' .. ('\\0'):rep(8)",                        // number subtype 9
	    "'\\x0b' .. ('\\0'):rep(8)",                        // light userdata with a cookie
	    "'\\x0d' .. ('\\0'):rep(8)",                        // long string width 1
	    "'\\x1d' .. ('\\0'):rep(8)",                        // long string width 3
	    "'\\xfe\\x42' .. ('\\0'):rep(8)",                   // long array length as a float
	    "'\\xfe\\x0c\\x41'",                                // long array length as a string
	    "'\\xfe\\x22\\xff\\xff\\xff\\xff\\0'",              // negative array length
	    "'\\xfe\\x32' .. ('\\xff'):rep(7) .. '\\x7f\\0'",   // huge array length
	    "'\\xfe\\x12\\xff\\xff' .. ('\\0'):rep(100)",       // more items than bytes
	    "'\\xf6' .. ('\\x02'):rep(29)",                     // 30 items, 29 bytes
	    "'\\x06\\x42\\0\\0\\0\\0\\0\\0\\xf8\\x7f\\x02\\0'", // NaN key
	    "'\\x06\\x0c\\x61'",                                // key without a value
	    "'\\x06\\x08\\x02\\0'",                             // odd nil as a key
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char code[256];
		snprintf(code, sizeof(code), "unpack(%s)", bad[i]);
		const char *msg = lua_fails(L, code);
		bool ok = is_invalid_stream(msg, NULL);
		if (!ok)
			fprintf(stderr, "%s: \"%s\"\n", code, msg);
		TT_CHECK(ok);
	}
	lua_close(L);
}

static uint64_t
xorshift(uint64_t *s) {
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/*
 * Decode one hostile buffer: it succeeds or raises the invalid-stream error.
 * Counts successful decodes in *decoded.
 */
static bool
survives(lua_State *L, const uint8_t *p, size_t n, int *decoded) {
	int nvals;
	int st = unpack_bytes(L, p, n, &nvals);
	*decoded += st == LUA_OK;
	bool ok = st == LUA_OK || (st == LUA_ERRRUN && is_invalid_stream(lua_tostring(L, -1), NULL));
	if (!ok) {
		fprintf(stderr, "unexpected: %s\n", lua_tostring(L, -1));
		dump("input", p, n);
	}
	lua_settop(L, 0);
	return ok;
}

static void
malformed_random_bytes(int *failed) {
	lua_State *L = new_state();
	uint64_t seed = 0x9e3779b97f4a7c15u;
	uint8_t buf[96];
	int bad = 0, decoded = 0;
	for (int iter = 0; iter < 4000; iter++) {
		size_t n = xorshift(&seed) % sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = (uint8_t)xorshift(&seed);
		/* Bias half of them toward table and string tags to go deeper. */
		if (iter & 1) {
			for (size_t i = 0; i < n; i += 3)
				buf[i] = (uint8_t)((buf[i] & 0xf8) | (i & 1 ? 6 : 4));
		}
		bad += !survives(L, buf, n, &decoded);
	}
	TT_CHECK(bad == 0);
	TT_CHECK(decoded > 20); // some inputs get past the first error check
	lua_close(L);
}

static void
malformed_mutated_streams(int *failed) {
	lua_State *L = new_state();
	TT_CHECK(luaL_dostring(L,
	                       "return packstring({1, -7, 0x12345, 2^40, 3.25, 'str', "
	                       "('L'):rep(40), {a = {b = {c = true}}, [false] = LUD}, nil, 'end'})") ==
	         LUA_OK);
	size_t n;
	const char *s = lua_tolstring(L, -1, &n);
	uint8_t orig[512];
	TT_CHECK(n <= sizeof(orig));
	memcpy(orig, s, n);
	lua_settop(L, 0);
	uint64_t seed = 12345;
	uint8_t buf[512];
	int bad = 0, decoded = 0;
	for (int iter = 0; iter < 3000; iter++) {
		memcpy(buf, orig, n);
		int flips = 1 + (int)(xorshift(&seed) % 3);
		for (int f = 0; f < flips; f++)
			buf[xorshift(&seed) % n] = (uint8_t)xorshift(&seed);
		size_t len = iter % 4 == 0 ? xorshift(&seed) % (n + 1) : n;
		bad += !survives(L, buf, len, &decoded);
	}
	TT_CHECK(bad == 0);
	TT_CHECK(decoded > 100);
	lua_close(L);
}

int
main(void) {
	TT_RUN(vectors_nil_boolean);
	TT_RUN(vectors_integers);
	TT_RUN(vectors_floats);
	TT_RUN(vectors_strings);
	TT_RUN(vectors_lightuserdata);
	TT_RUN(vectors_tables);
	TT_RUN(vectors_metatables);
	TT_RUN(roundtrip_every_type);
	TT_RUN(roundtrip_large_string);
	TT_RUN(pack_buffer_ownership);
	TT_RUN(depth_limit);
	TT_RUN(unsupported_types);
	TT_RUN(size_limit);
	TT_RUN(unpack_empty_and_null);
	TT_RUN(malformed_truncations);
	TT_RUN(malformed_invalid_tags);
	TT_RUN(malformed_random_bytes);
	TT_RUN(malformed_mutated_streams);
	return tt_summary();
}
