/*
 * Fuzz target "socket_buffer": the read buffers of lualib-src/lua-socket.c
 * (socketdriver.buffer/push/pop/readline/readall/clear/size), which parse the
 * bytes a peer sent on behalf of skynet.socket.
 *
 * The input is a list of operations; each starts with one byte b:
 *   b % 8 == 0, 1  PUSH the next n bytes as one received chunk, n = the
 *                  following byte (255: all that is left; 0 pushes an empty one)
 *   2              POP n bytes, n = the next byte, or with b & 8 a 16-bit
 *                  big-endian count
 *   3              READLINE with a separator of 1 + ((b >> 3) & 3) bytes
 *                  taken from the input; with b & 32 only test (pool nil)
 *   4              READLINE with one of "\n", "\r\n", "\r\n\r\n", "--" ((b >> 3) & 3)
 *   5              READALL
 *   6              CLEAR
 *   7              SIZE
 *
 * A model keeps the unread bytes as one flat array. Properties: every result
 * (string, nil or boolean) and every size equals what the model gives, with a
 * line ending at the first occurrence of the separator (memmem); nothing is
 * read outside the pushed chunks (ASan); the chunks are freed (LeakSanitizer).
 */
#define _GNU_SOURCE // memmem
#include "../../lualib-src/lua-socket.c"

#include "fuzz.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct model {
	uint8_t *bytes; // owned: the unread bytes
	size_t len;
};

static const char *const LINE_SEPS[] = {"\n", "\r\n", "\r\n\r\n", "--"};

/* Push f, the buffer and a pool (or nil); the caller pushes the arguments after them. */
static void
begin_call(lua_State *L, lua_CFunction f, bool pool) {
	lua_pushcfunction(L, f);
	lua_pushvalue(L, 1);
	if (pool)
		lua_newtable(L);
	else
		lua_pushnil(L);
}

/* Run the call begun with nargs arguments; returns the number of results (above the buffer). */
static int
finish_call(lua_State *L, int nargs) {
	FUZZ_CHECK(lua_pcall(L, 2 + nargs, LUA_MULTRET, 0) == LUA_OK);
	return lua_gettop(L) - 1;
}

/* The string on top is the model's first n bytes; drop them (and skip more) from the model. */
static void
check_taken(lua_State *L, struct model *m, size_t n, size_t skip) {
	FUZZ_CHECK(lua_type(L, -1) == LUA_TSTRING);
	size_t len;
	const char *s = lua_tolstring(L, -1, &len);
	FUZZ_CHECK(len == n);
	if (n + skip == 0)
		return; // the model may hold no array yet
	FUZZ_CHECK(memcmp(s, m->bytes, n) == 0);
	memmove(m->bytes, m->bytes + n + skip, m->len - n - skip);
	m->len -= n + skip;
}

static void
check_size(lua_State *L, const struct model *m) {
	begin_call(L, lsize, false);
	FUZZ_CHECK(finish_call(L, 0) == 1);
	FUZZ_CHECK(lua_tointeger(L, -1) == (lua_Integer)m->len);
	lua_settop(L, 1);
}

static void
op_push(lua_State *L, struct model *m, const uint8_t *p, size_t n) {
	char *chunk = skynet_malloc(n);
	memcpy(chunk, p, n);
	begin_call(L, lpush, true);
	lua_pushlightuserdata(L, chunk);
	lua_pushinteger(L, (lua_Integer)n);
	FUZZ_CHECK(finish_call(L, 2) == 1);
	m->bytes = skynet_realloc(m->bytes, m->len + n + 1);
	memcpy(m->bytes + m->len, p, n);
	m->len += n;
	FUZZ_CHECK(lua_tointeger(L, -1) == (lua_Integer)m->len);
	lua_settop(L, 1);
}

static void
op_pop(lua_State *L, struct model *m, size_t n) {
	begin_call(L, lpop, true);
	lua_pushinteger(L, (lua_Integer)n);
	int nret = finish_call(L, 1);
	if (n > m->len) {
		FUZZ_CHECK(nret == 0);
	} else {
		FUZZ_CHECK(nret == 1);
		check_taken(L, m, n, 0);
	}
	lua_settop(L, 1);
}

static void
op_readline(lua_State *L, struct model *m, const char *sep, size_t seplen, bool test_only) {
	const uint8_t *hit = m->len ? memmem(m->bytes, m->len, sep, seplen) : NULL;
	begin_call(L, lreadline, !test_only);
	lua_pushlstring(L, sep, seplen);
	int nret = finish_call(L, 1);
	if (test_only) {
		FUZZ_CHECK(nret == 1 && lua_type(L, -1) == LUA_TBOOLEAN);
		FUZZ_CHECK(lua_toboolean(L, -1) == (hit != NULL));
	} else if (hit == NULL) {
		FUZZ_CHECK(nret == 0);
	} else {
		FUZZ_CHECK(nret == 1);
		check_taken(L, m, (size_t)(hit - m->bytes), seplen);
	}
	lua_settop(L, 1);
}

static void
op_readall(lua_State *L, struct model *m) {
	begin_call(L, lreadall, true);
	FUZZ_CHECK(finish_call(L, 0) == 1);
	check_taken(L, m, m->len, 0);
	lua_settop(L, 1);
}

static void
op_clear(lua_State *L, struct model *m) {
	begin_call(L, lclear, true);
	finish_call(L, 0);
	lua_settop(L, 1);
	m->len = 0;
}

static void
run_op(lua_State *L, struct model *m, struct fuzz_input *in) {
	uint8_t b = fuzz_byte(in);
	size_t n;
	const uint8_t *p;
	switch (b & 7) {
	case 0:
	case 1: {
		size_t want = fuzz_byte(in);
		p = fuzz_bytes(in, want == 255 ? in->left : want, &n);
		op_push(L, m, p, n);
		break;
	}
	case 2:
		n = fuzz_byte(in);
		if (b & 8)
			n = n << 8 | fuzz_byte(in);
		op_pop(L, m, n);
		break;
	case 3: {
		size_t want = 1 + ((b >> 3) & 3);
		p = fuzz_bytes(in, want, &n);
		if (n > 0)
			op_readline(L, m, (const char *)p, n, b & 32);
		break;
	}
	case 4: {
		const char *sep = LINE_SEPS[(b >> 3) & 3];
		op_readline(L, m, sep, strlen(sep), b & 32);
		break;
	}
	case 5:
		op_readall(L, m);
		break;
	case 6:
		op_clear(L, m);
		break;
	default:
		check_size(L, m);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	lua_State *L = fuzz_lua_open();
	// The module wants a service context; the buffer functions never use it.
	static char fake_context;
	lua_pushlightuserdata(L, &fake_context);
	lua_setfield(L, LUA_REGISTRYINDEX, "skynet_context");
	luaL_requiref(L, "skynet.socketdriver", luaopen_skynet_socketdriver, 0);
	lua_settop(L, 0);
	lua_pushcfunction(L, lnewbuffer);
	lua_call(L, 0, 1); // index 1: the buffer
	struct model m = {NULL, 0};
	struct fuzz_input in = {data, size};
	while (fuzz_more(&in))
		run_op(L, &m, &in);
	check_size(L, &m);
	skynet_free(m.bytes);
	lua_close(L); // the buffer's __gc frees the chunks still held
	return 0;
}
