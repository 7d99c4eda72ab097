/*
 * Fuzz target "cluster": the cluster protocol codec of lualib-src/lua-cluster.c
 * (skynet.cluster.core), which decodes bytes from any peer that reaches a
 * cluster port, and replies from any node this one connects to.
 *
 * The first input byte picks a mode; the rest is its material.
 *   even  DECODE: the rest is one frame body, given to unpackrequest and to
 *         unpackresponse. Each must either raise or return values that
 *         describe exactly the body: a single request re-encoded with
 *         packrequest/packpush gives the same frame back, a part or a
 *         trace frame carries the body's tail, a header's total is its
 *         last four bytes, a response of status 0 or 1 re-encodes to the
 *         same frame, and so on.
 *   odd   ENCODE: the next bytes choose an address (a handle or a name of
 *         1..255 bytes), a session, push or call, and a payload size up to
 *         about 130 KB (filled from the input, repeated). Every frame that
 *         packrequest / packpush / packresponse returns must decode back to
 *         those values, and the parts must rebuild the payload.
 */
#include "../../lualib-src/lua-cluster.c"

#include "fuzz.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Calls core[fname] with the nargs values on top; results stay on the stack. */
static int
call_core(lua_State *L, const char *fname, int nargs, int *nresults) {
	int base = lua_gettop(L) - nargs;
	lua_getfield(L, 1, fname);
	lua_insert(L, base + 1);
	int status = lua_pcall(L, nargs, LUA_MULTRET, 0);
	*nresults = lua_gettop(L) - base;
	return status;
}

static void
push_frame_of(lua_State *L, const uint8_t *body, size_t n) {
	uint8_t head[2] = {(uint8_t)(n >> 8), (uint8_t)(n & 0xff)};
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addlstring(&b, (const char *)head, 2);
	luaL_addlstring(&b, (const char *)body, n);
	luaL_pushresult(&b);
}

static bool
string_is(lua_State *L, int idx, const uint8_t *p, size_t n) {
	size_t len = 0;
	const char *s = lua_tolstring(L, idx, &len);
	return s != NULL && len == n && memcmp(s, p, n) == 0;
}

/* A decoded single request re-encodes to the same frame. */
static void
check_single(lua_State *L, int base, const uint8_t *body, size_t n) {
	lua_Integer session = lua_tointeger(L, base + 2);
	size_t plen = 0;
	lua_tolstring(L, base + 3, &plen);
	FUZZ_CHECK(lua_tointeger(L, base + 4) == (lua_Integer)plen);
	FUZZ_CHECK(lua_toboolean(L, base + 6) == (session == 0));
	bool named = body[0] == REQ_NAME;
	size_t namelen = named ? body[1] : 0;
	FUZZ_CHECK(plen == n - (named ? 6 + namelen : 9));
	if (plen >= MULTI_PART || session > SESSION_MAX || (named && namelen == 0))
		return;
	int top = lua_gettop(L);
	lua_pushvalue(L, base + 1);
	lua_pushinteger(L, session == 0 ? 1 : session);
	lua_pushvalue(L, base + 3);
	int nres = 0;
	FUZZ_CHECK(call_core(L, session == 0 ? "packpush" : "packrequest", 3, &nres) == LUA_OK);
	push_frame_of(L, body, n);
	FUZZ_CHECK(lua_rawequal(L, -1, top + 1));
	lua_settop(L, top);
}

static void
check_request(lua_State *L, int base, int nres, const uint8_t *body, size_t n) {
	switch (body[0]) {
	case REQ_NUMBER:
	case REQ_NAME:
		FUZZ_CHECK(nres == 6);
		check_single(L, base, body, n);
		break;
	case REQ_MULTI:
	case REQ_MULTI_PUSH:
	case REQ_MULTI_NAME:
	case REQ_MULTI_PUSH_N: {
		FUZZ_CHECK(nres == 6 && lua_isnil(L, base + 3) && lua_toboolean(L, base + 5));
		size_t off = body[0] & 0x80 ? 2 + (size_t)body[1] : 5;
		FUZZ_CHECK(lua_tointeger(L, base + 4) == get_u32(body + off + 4));
		FUZZ_CHECK(lua_toboolean(L, base + 6) == ((body[0] & 0x40) != 0));
		break;
	}
	case REQ_PART:
	case REQ_PART_LAST:
		FUZZ_CHECK(nres == 5 && lua_type(L, base + 1) == LUA_TBOOLEAN);
		FUZZ_CHECK(lua_tointeger(L, base + 2) == get_u32(body + 1));
		FUZZ_CHECK(string_is(L, base + 3, body + 5, n - 5));
		FUZZ_CHECK(lua_toboolean(L, base + 5) == (body[0] == REQ_PART));
		break;
	case REQ_TRACE:
		FUZZ_CHECK(nres == 1 && string_is(L, base + 1, body + 1, n - 1));
		break;
	default:
		FUZZ_CHECK(!"an unknown request type decoded");
	}
}

static void
check_response(lua_State *L, int base, int nres, const uint8_t *body, size_t n) {
	FUZZ_CHECK(lua_tointeger(L, base + 1) == get_u32(body));
	uint8_t status = body[4];
	FUZZ_CHECK(status <= RESP_LAST);
	if (status == RESP_BEGIN) {
		FUZZ_CHECK(n == 9 && nres == 4 && lua_tointeger(L, base + 3) == get_u32(body + 5));
		return;
	}
	FUZZ_CHECK(string_is(L, base + 3, body + 5, n - 5));
	FUZZ_CHECK(nres == (status <= RESP_OK ? 3 : 4));
	if (status > RESP_OK || n - 5 > MULTI_PART)
		return;
	int top = lua_gettop(L);
	lua_pushvalue(L, base + 1);
	lua_pushvalue(L, base + 2);
	lua_pushvalue(L, base + 3);
	int r = 0;
	FUZZ_CHECK(call_core(L, "packresponse", 3, &r) == LUA_OK && r == 1);
	push_frame_of(L, body, n);
	FUZZ_CHECK(lua_rawequal(L, -1, -2));
	lua_settop(L, top);
}

static void
decode(lua_State *L, const uint8_t *body, size_t n) {
	int base = lua_gettop(L);
	lua_pushlstring(L, (const char *)body, n);
	int nres = 0;
	if (call_core(L, "unpackrequest", 1, &nres) == LUA_OK)
		check_request(L, base, nres, body, n);
	lua_settop(L, base);
	lua_pushlstring(L, (const char *)body, n);
	if (call_core(L, "unpackresponse", 1, &nres) == LUA_OK)
		check_response(L, base, nres, body, n);
	lua_settop(L, base);
}

/* The body length of the frame string at idx, its length prefix checked. */
static size_t
frame_len(lua_State *L, int idx) {
	size_t fl = 0;
	const uint8_t *f = (const uint8_t *)lua_tolstring(L, idx, &fl);
	FUZZ_CHECK(f != NULL && fl >= 2 && (size_t)((f[0] << 8) | f[1]) == fl - 2);
	return fl - 2;
}

/* Pushes the body of the frame string at idx. */
static void
push_body(lua_State *L, int idx) {
	size_t len = frame_len(L, idx);
	lua_pushlstring(L, lua_tostring(L, idx) + 2, len);
}

/* Decodes the part frame at idx; pushes its bytes. Returns "more follow". */
static bool
decode_part(lua_State *L, int idx, uint32_t session) {
	push_body(L, idx);
	int nres = 0;
	FUZZ_CHECK(call_core(L, "unpackrequest", 1, &nres) == LUA_OK && nres == 5);
	// false, session, bytes, size, more
	FUZZ_CHECK(lua_type(L, -5) == LUA_TBOOLEAN && !lua_toboolean(L, -5));
	FUZZ_CHECK(lua_tointeger(L, -4) == session);
	FUZZ_CHECK(lua_tointeger(L, -2) == (lua_Integer)lua_rawlen(L, -3));
	bool more = lua_toboolean(L, -1);
	lua_pop(L, 2);
	lua_remove(L, -2);
	lua_remove(L, -2);
	return more;
}

static void
encode_request(lua_State *L, struct fuzz_input *in, const uint8_t *payload, size_t psz) {
	uint8_t mode = fuzz_byte(in);
	bool push = mode & 1;
	bool named = mode & 2;
	uint32_t session = (uint32_t)fuzz_byte(in) << 24 | (uint32_t)fuzz_byte(in) << 16 |
	                   (uint32_t)fuzz_byte(in) << 8 | fuzz_byte(in);
	session = session % SESSION_MAX + 1;
	int top = lua_gettop(L);
	size_t namelen = 0;
	if (named) {
		namelen = (size_t)fuzz_byte(in) % NAME_MAX_LEN + 1;
		size_t got = 0;
		const uint8_t *name = fuzz_bytes(in, namelen, &got);
		if (got == 0) {
			name = (const uint8_t *)"@n";
			got = 2;
		}
		namelen = got;
		lua_pushlstring(L, (const char *)name, namelen);
	} else {
		lua_pushinteger(L, (lua_Integer)(uint32_t)(session * 7u));
	}
	int addr_idx = lua_gettop(L);
	lua_pushvalue(L, addr_idx);
	lua_pushinteger(L, session);
	lua_pushlstring(L, (const char *)payload, psz);
	int nres = 0;
	FUZZ_CHECK(call_core(L, push ? "packpush" : "packrequest", 3, &nres) == LUA_OK);
	int first = addr_idx + 1;
	uint32_t nexts = session >= SESSION_MAX ? 1 : session + 1;
	if (psz < MULTI_PART) {
		FUZZ_CHECK(nres == 2);
		FUZZ_CHECK(lua_tointeger(L, first + 1) == (push ? session : nexts));
		push_body(L, first);
		FUZZ_CHECK(call_core(L, "unpackrequest", 1, &nres) == LUA_OK && nres == 6);
		int r = lua_gettop(L) - 5;
		FUZZ_CHECK(lua_rawequal(L, r, addr_idx));
		FUZZ_CHECK(lua_tointeger(L, r + 1) == (push ? 0 : session));
		FUZZ_CHECK(string_is(L, r + 2, payload, psz));
		lua_settop(L, top);
		return;
	}
	FUZZ_CHECK(nres == 3 && lua_tointeger(L, first + 1) == nexts);
	push_body(L, first);
	FUZZ_CHECK(call_core(L, "unpackrequest", 1, &nres) == LUA_OK && nres == 6);
	int r = lua_gettop(L) - 5;
	FUZZ_CHECK(lua_rawequal(L, r, addr_idx));
	FUZZ_CHECK(lua_tointeger(L, r + 1) == session);
	FUZZ_CHECK(lua_tointeger(L, r + 3) == (lua_Integer)psz);
	FUZZ_CHECK(lua_toboolean(L, r + 5) == push);
	lua_settop(L, first + 2);
	int parts = first + 2;
	lua_Integer n = luaL_len(L, parts);
	FUZZ_CHECK(n == (lua_Integer)((psz + MULTI_PART - 1) / MULTI_PART));
	size_t off = 0;
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, parts, i);
		bool more = decode_part(L, lua_gettop(L), session);
		FUZZ_CHECK(more == (i < n));
		size_t bl = 0;
		const char *bytes = lua_tolstring(L, -1, &bl);
		FUZZ_CHECK(bytes != NULL && bl <= MULTI_PART && off + bl <= psz);
		FUZZ_CHECK(memcmp(bytes, payload + off, bl) == 0);
		off += bl;
		lua_pop(L, 2);
	}
	FUZZ_CHECK(off == psz);
	lua_settop(L, top);
}

static void
encode_response(lua_State *L, uint32_t session, bool ok, const uint8_t *data, size_t dsz) {
	int top = lua_gettop(L);
	lua_pushinteger(L, session);
	lua_pushboolean(L, ok);
	lua_pushlstring(L, (const char *)data, dsz);
	int nres = 0;
	FUZZ_CHECK(call_core(L, "packresponse", 3, &nres) == LUA_OK && nres == 1);
	int res = lua_gettop(L);
	bool split = ok && dsz > MULTI_PART;
	FUZZ_CHECK(lua_istable(L, res) == split);
	if (!split) {
		size_t keep = !ok && dsz > MULTI_PART ? MULTI_PART : dsz;
		FUZZ_CHECK(frame_len(L, res) == 5 + keep);
		push_body(L, res);
		FUZZ_CHECK(call_core(L, "unpackresponse", 1, &nres) == LUA_OK && nres == 3);
		FUZZ_CHECK(lua_tointeger(L, -3) == session && lua_toboolean(L, -2) == ok);
		FUZZ_CHECK(string_is(L, -1, data, keep));
		lua_settop(L, top);
		return;
	}
	lua_Integer n = luaL_len(L, res);
	FUZZ_CHECK(n == (lua_Integer)((dsz + MULTI_PART - 1) / MULTI_PART) + 1);
	size_t off = 0;
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, res, i);
		push_body(L, lua_gettop(L));
		FUZZ_CHECK(call_core(L, "unpackresponse", 1, &nres) == LUA_OK && nres == 4);
		FUZZ_CHECK(lua_tointeger(L, -4) == session && lua_toboolean(L, -3));
		if (i == 1) {
			FUZZ_CHECK(lua_tointeger(L, -2) == (lua_Integer)dsz && lua_toboolean(L, -1));
		} else {
			size_t bl = 0;
			const char *bytes = lua_tolstring(L, -2, &bl);
			FUZZ_CHECK(bytes != NULL && off + bl <= dsz && memcmp(bytes, data + off, bl) == 0);
			FUZZ_CHECK(lua_toboolean(L, -1) == (i < n));
			off += bl;
		}
		lua_settop(L, res);
	}
	FUZZ_CHECK(off == dsz);
	lua_settop(L, top);
}

static void
encode(lua_State *L, struct fuzz_input *in) {
	size_t want = (size_t)fuzz_byte(in) << 9 | (size_t)fuzz_byte(in) << 1;
	uint8_t fill_sz = fuzz_byte(in);
	size_t got = 0;
	const uint8_t *fill = fuzz_bytes(in, fill_sz, &got);
	uint8_t *payload = skynet_malloc(want + 1);
	for (size_t i = 0; i < want; i++)
		payload[i] = got ? fill[i % got] : (uint8_t)i;
	encode_request(L, in, payload, want);
	uint32_t session = (uint32_t)fuzz_byte(in) << 24 | fuzz_byte(in);
	encode_response(L, session, fuzz_byte(in) & 1, payload, want);
	skynet_free(payload);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	lua_State *L = fuzz_lua_open();
	luaL_requiref(L, "skynet.cluster.core", luaopen_skynet_cluster_core, 0);
	lua_settop(L, 1); // index 1: the module table
	struct fuzz_input in = {data, size};
	uint8_t mode = fuzz_byte(&in);
	if ((mode & 1) == 0) {
		if (in.left > 0)
			decode(L, in.p, in.left > FRAME_MAX ? FRAME_MAX : in.left);
	} else {
		encode(L, &in);
	}
	lua_close(L);
	return 0;
}
