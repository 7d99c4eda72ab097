/*
 * Fuzz target "netpack": the client framing of lualib-src/lua-netpack.c fed
 * the way a gate feeds it, one PTYPE_SOCKET message at a time, with the byte
 * stream cut wherever the fuzzer likes and spread over several connections.
 *
 * The input is a list of operations; each starts with one byte b:
 *   b & 7 in 0..3  DATA: connection (b >> 3) & 3 receives the next n bytes,
 *                  n = the following byte (255: all that is left)
 *   4              POP: take up to (b >> 5) queued frames (0: all of them)
 *   5, 6           CLOSE, ERROR on connection (b >> 3) & 3
 *   7              b == 255 ? CLEAR the queue : a UDP datagram (dropped); clear
 *                  walks every hash bucket, so it is kept rare
 * The four connections use fds 1, 1025, 2049 (one hash bucket) and 7.
 *
 * A model decodes the same stream on its own (a byte buffer per fd, frames
 * cut with the 2-byte big-endian length) and keeps the frames it expects in
 * order. Properties: every frame filter or pop hands out is the model's next
 * frame (fd and payload), the kind filter returns ("data", "more" or none)
 * is the one the documented rules give, pack(payload) rebuilds the frame's
 * bytes, and at the end the queue holds exactly the frames still expected.
 */
#include "../../lualib-src/lua-netpack.c"

#include "fuzz.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CONNS 4

static const int CONN_FD[CONNS] = {1, 1025, 2049, 7};

/* A frame the model decoded: its own copy of the payload. */
struct model_frame {
	int fd;
	int sz;
	uint8_t *data; // owned
};

struct model {
	uint8_t *pending[CONNS]; // owned: bytes of an unfinished frame (header included)
	size_t pending_len[CONNS];
	struct model_frame *frames; // owned: every frame so far; those from head on are expected
	int cap;
	int head;
	int count; // expected frames, from head
};

static void
model_push_frame(struct model *m, int fd, const uint8_t *p, int sz) {
	if (m->head + m->count == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->frames = skynet_realloc(m->frames, (size_t)m->cap * sizeof(*m->frames));
	}
	struct model_frame *f = &m->frames[m->head + m->count];
	f->fd = fd;
	f->sz = sz;
	f->data = skynet_malloc(sz > 0 ? (size_t)sz : 1);
	memcpy(f->data, p, (size_t)sz);
	m->count++;
}

static void
model_drop_first(struct model *m) {
	skynet_free(m->frames[m->head].data);
	m->head++;
	m->count--;
}

/* Append n bytes received on connection c; returns the number of frames completed. */
static int
model_data(struct model *m, int c, const uint8_t *p, size_t n) {
	m->pending[c] = skynet_realloc(m->pending[c], m->pending_len[c] + n + 1);
	memcpy(m->pending[c] + m->pending_len[c], p, n);
	m->pending_len[c] += n;
	const uint8_t *b = m->pending[c];
	size_t left = m->pending_len[c];
	int produced = 0;
	while (left >= 2 && left >= 2 + (size_t)((b[0] << 8) | b[1])) {
		int sz = (b[0] << 8) | b[1];
		model_push_frame(m, CONN_FD[c], b + 2, sz);
		b += 2 + sz;
		left -= 2 + (size_t)sz;
		produced++;
	}
	memmove(m->pending[c], b, left);
	m->pending_len[c] = left;
	return produced;
}

static void
model_clear(struct model *m) {
	while (m->count > 0)
		model_drop_first(m);
	for (int c = 0; c < CONNS; c++) {
		skynet_free(m->pending[c]);
		m->pending[c] = NULL;
		m->pending_len[c] = 0;
	}
}

/* fd, ptr, sz at the top of the stack: the model's next frame. Frees ptr. */
static void
check_frame(lua_State *L, struct model *m) {
	FUZZ_CHECK(m->count > 0);
	struct model_frame *f = &m->frames[m->head];
	FUZZ_CHECK(lua_tointeger(L, -3) == f->fd);
	FUZZ_CHECK(lua_type(L, -2) == LUA_TLIGHTUSERDATA && lua_touserdata(L, -2) != NULL);
	FUZZ_CHECK(lua_tointeger(L, -1) == f->sz);
	void *ptr = lua_touserdata(L, -2);
	FUZZ_CHECK(memcmp(ptr, f->data, (size_t)f->sz) == 0);
	skynet_free(ptr);
	lua_pop(L, 3);

	// pack(payload) must give back the frame as it was on the wire.
	lua_pushcfunction(L, lpack);
	lua_pushlstring(L, (const char *)f->data, (size_t)f->sz);
	FUZZ_CHECK(lua_pcall(L, 1, 2, 0) == LUA_OK);
	uint8_t *wire = lua_touserdata(L, -2);
	FUZZ_CHECK(lua_tointeger(L, -1) == f->sz + 2);
	FUZZ_CHECK(wire[0] == (uint8_t)(f->sz >> 8) && wire[1] == (uint8_t)(f->sz & 0xff));
	FUZZ_CHECK(memcmp(wire + 2, f->data, (size_t)f->sz) == 0);
	skynet_free(wire);
	lua_pop(L, 2);
	model_drop_first(m);
}

/*
 * Run filter(queue, msg) with the queue at stack index 1; the returned queue
 * replaces it. Leaves the results after the queue on the stack; returns their count.
 */
static int
filter(lua_State *L, struct skynet_socket_message *sm, size_t msg_sz) {
	lua_pushcfunction(L, lfilter);
	lua_pushvalue(L, 1);
	lua_pushlightuserdata(L, sm);
	lua_pushinteger(L, (lua_Integer)msg_sz);
	FUZZ_CHECK(lua_pcall(L, 3, LUA_MULTRET, 0) == LUA_OK);
	int n = lua_gettop(L) - 1;
	FUZZ_CHECK(n >= 1);
	lua_copy(L, 2, 1); // the queue, maybe new
	lua_remove(L, 2);
	return n - 1;
}

static bool
kind_is(lua_State *L, int idx, const char *kind) {
	const char *s = lua_tostring(L, idx);
	return s != NULL && strcmp(s, kind) == 0;
}

static void
op_data(lua_State *L, struct model *m, int c, const uint8_t *p, size_t n) {
	int before = m->count;
	int produced = model_data(m, c, p, n);
	struct skynet_socket_message sm = {.type = SKYNET_SOCKET_TYPE_DATA, .id = CONN_FD[c]};
	sm.ud = (int)n;
	sm.buffer = skynet_malloc(n);
	memcpy(sm.buffer, p, n);
	int nret = filter(L, &sm, sizeof(sm)); // frees sm.buffer
	if (produced == 0) {
		FUZZ_CHECK(nret == 0);
	} else if (produced == 1 && before == 0) {
		FUZZ_CHECK(nret == 4 && kind_is(L, 2, "data"));
		check_frame(L, m);
		lua_settop(L, 1);
	} else {
		FUZZ_CHECK(nret == 1 && kind_is(L, 2, "more"));
		lua_settop(L, 1);
	}
}

static void
op_pop(lua_State *L, struct model *m, int limit) {
	for (int i = 0; limit == 0 || i < limit; i++) {
		lua_pushcfunction(L, lpop);
		lua_pushvalue(L, 1);
		FUZZ_CHECK(lua_pcall(L, 1, LUA_MULTRET, 0) == LUA_OK);
		int n = lua_gettop(L) - 1;
		if (n == 0) {
			FUZZ_CHECK(m->count == 0);
			return;
		}
		FUZZ_CHECK(n == 3);
		check_frame(L, m);
	}
}

/* CLOSE or ERROR: the connection's partial frame is forgotten, queued frames stay. */
static void
op_end(lua_State *L, struct model *m, int c, int type) {
	const char *text = "fuzz";
	size_t msg_sz = sizeof(struct skynet_socket_message) + strlen(text);
	struct skynet_socket_message *sm = skynet_malloc(msg_sz);
	sm->type = type;
	sm->id = CONN_FD[c];
	sm->ud = 0;
	sm->buffer = NULL;
	memcpy(sm + 1, text, strlen(text));
	int nret = filter(L, sm, msg_sz);
	skynet_free(sm);
	if (type == SKYNET_SOCKET_TYPE_CLOSE)
		FUZZ_CHECK(nret == 2 && kind_is(L, 2, "close") && lua_tointeger(L, 3) == CONN_FD[c]);
	else
		FUZZ_CHECK(nret == 3 && kind_is(L, 2, "error") && lua_tointeger(L, 3) == CONN_FD[c]);
	lua_settop(L, 1);
	m->pending_len[c] = 0;
}

static void
op_udp(lua_State *L) {
	struct skynet_socket_message sm = {.type = SKYNET_SOCKET_TYPE_UDP, .id = 9, .ud = 3};
	sm.buffer = skynet_malloc(3);
	memcpy(sm.buffer, "udp", 3);
	FUZZ_CHECK(filter(L, &sm, sizeof(sm)) == 0); // frees sm.buffer
}

static void
op_clear(lua_State *L, struct model *m) {
	lua_pushcfunction(L, lclear);
	lua_pushvalue(L, 1);
	FUZZ_CHECK(lua_pcall(L, 1, 0, 0) == LUA_OK);
	model_clear(m);
}

static void
run_ops(lua_State *L, struct model *m, struct fuzz_input *in) {
	while (fuzz_more(in)) {
		uint8_t b = fuzz_byte(in);
		int c = (b >> 3) & 3;
		switch (b & 7) {
		case 0:
		case 1:
		case 2:
		case 3: {
			size_t want = fuzz_byte(in);
			size_t n;
			const uint8_t *p = fuzz_bytes(in, want == 255 ? in->left : want, &n);
			op_data(L, m, c, p, n);
			break;
		}
		case 4:
			op_pop(L, m, b >> 5);
			break;
		case 5:
			op_end(L, m, c, SKYNET_SOCKET_TYPE_CLOSE);
			break;
		case 6:
			op_end(L, m, c, SKYNET_SOCKET_TYPE_ERROR);
			break;
		default:
			if (b == 255)
				op_clear(L, m);
			else
				op_udp(L);
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	lua_State *L = fuzz_lua_open();
	luaL_requiref(L, "skynet.netpack", luaopen_skynet_netpack, 0);
	lua_settop(L, 0);
	lua_pushnil(L); // index 1: the queue
	struct model m = {.frames = NULL};
	struct fuzz_input in = {data, size};
	run_ops(L, &m, &in);
	op_pop(L, &m, 0); // everything still expected is queued, nothing more
	model_clear(&m);
	skynet_free(m.frames);
	lua_close(L);
	return 0;
}
