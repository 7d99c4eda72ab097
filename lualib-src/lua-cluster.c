/*
 * skynet.cluster.core: the byte format of the cluster protocol, shared by
 * the sender (client side), the agent (server side) and clusterproxy.
 *
 * Framing. Every frame on a cluster connection is a 2-byte big-endian
 * length followed by that many body bytes (0..65535). Inside a body every
 * integer (address, session, size) is a uint32 in little-endian order.
 * Every frame this module returns is a Lua string that already starts with
 * its 2-byte length; every body it decodes is given without that length.
 *
 * Requests (first body byte = type):
 *   00 addr session payload            single call or push, numeric address
 *   80 namelen name session payload    single call or push, string address
 *   01 / 41 addr session total         multi-part call / push header (len 13)
 *   81 / C1 namelen name session total the same with a string address
 *   02 session bytes                   a part, more follow
 *   03 session bytes                   the final part
 *   04 tag                             trace tag for the next request
 * A single push carries session 0. A payload of MULTI_PART (0x8000) bytes or
 * more is split: a header with the total, then MULTI_PART-byte slices.
 *
 * Responses: session u32, status u8, data. Status 0 is an error text (cut to
 * MULTI_PART bytes, never split), 1 the reply bytes (maybe empty); a reply
 * larger than MULTI_PART bytes is status 2 with the total (body of exactly 9
 * bytes), then slices with status 3, the last one with status 4.
 *
 * API. msg, sz is a Lua string (sz ignored) or a light userdata and its
 * size. packrequest and packpush take such a buffer over (it comes from
 * skynet.pack) and free it on every path, errors included; every other
 * function only reads it (a message the framework still owns).
 *   packrequest(addr, session, msg, sz) -> frame, next_session [, parts]
 *   packpush(addr, session, msg, sz)    -> frame, next_session [, parts]
 *       addr: integer handle (0..0xffffffff) or a 1..255-byte string. session:
 *       1..0x7fffffff; next_session wraps from 0x7fffffff to 1. A single push
 *       goes out with session 0 and does not use up the session; a call and a
 *       multi-part push do. parts: an array of the part frames after the
 *       header, in order, only for a split message.
 *   packtrace(tag) -> frame
 *   unpackrequest(body | ptr, sz) ->
 *       single frame:  addr, session, payload, #payload, false, is_push
 *       header:        addr, session, nil, total, true, is_push
 *       part:          false, session, bytes, #bytes, more (true for 02)
 *       trace:         tag (one value)
 *     addr is an integer or a string. Malformed bodies raise an error naming
 *     what is wrong; nothing is ever read past the body.
 *   packresponse(session, ok, msg, sz) -> frame | { frames }
 *       session: 0..0xffffffff, echoed as is. ok false: msg is the error text.
 *   unpackresponse(body) -> session, ok, data [, padding]
 *       0: session, false, text      1: session, true, bytes
 *       2: session, true, total, true (total is an integer)
 *       3: session, true, bytes, true    4: session, true, bytes, false
 *     A body under 5 bytes, a status-2 body that is not 9 bytes long or an
 *     unknown status raises an error.
 *   append(t, msg, sz)  t[#t + 1] = the bytes as a string
 *   concat(t) -> string | nothing   t[1] is the expected size, t[2..] the
 *       slices; nothing when they do not add up to it.
 *   isname(v) -> true when v is a string starting with '@'
 *   nodename() -> host name (bytes <= 0x20 become '_') followed by the pid
 */
#include "skynet_malloc.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define MULTI_PART   0x8000
#define FRAME_MAX    0xffff
#define SESSION_MAX  0x7fffffff
#define NAME_MAX_LEN 255

#define REQ_NUMBER       0x00
#define REQ_NAME         0x80
#define REQ_MULTI        0x01
#define REQ_MULTI_PUSH   0x41
#define REQ_MULTI_NAME   0x81
#define REQ_MULTI_PUSH_N 0xc1
#define REQ_PART         0x02
#define REQ_PART_LAST    0x03
#define REQ_TRACE        0x04

#define RESP_ERROR  0
#define RESP_OK     1
#define RESP_BEGIN  2
#define RESP_PART   3
#define RESP_LAST   4
#define RESP_HEADER 5 // session u32 + status u8

static void
put_u32(uint8_t *p, uint32_t v) {
	p[0] = (uint8_t)(v & 0xff);
	p[1] = (uint8_t)((v >> 8) & 0xff);
	p[2] = (uint8_t)((v >> 16) & 0xff);
	p[3] = (uint8_t)((v >> 24) & 0xff);
}

static uint32_t
get_u32(const uint8_t *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * The bytes of the message at index idx: a string, or a light userdata with
 * its size at idx + 1, or nil (no bytes). A light userdata is only read,
 * unless owned is set: then it is replaced by a string copy at idx and freed
 * (on every path, errors included). Returns bytes borrowed from the Lua value.
 */
static const uint8_t *
get_message(lua_State *L, int idx, size_t *sz, bool owned) {
	int t = lua_type(L, idx);
	if (t == LUA_TSTRING)
		return (const uint8_t *)lua_tolstring(L, idx, sz);
	if (t == LUA_TLIGHTUSERDATA) {
		void *ptr = lua_touserdata(L, idx);
		int isnum = 0;
		lua_Integer n = lua_tointegerx(L, idx + 1, &isnum);
		if (!isnum || n < 0 || (n > 0 && ptr == NULL)) {
			if (owned)
				skynet_free(ptr);
			luaL_error(L, "cluster: bad message size");
			return NULL;
		}
		if (!owned) {
			*sz = (size_t)n;
			return ptr ? (const uint8_t *)ptr : (const uint8_t *)"";
		}
		// Copy, then free: an error raised from here on holds no buffer.
		lua_pushlstring(L, ptr ? (const char *)ptr : "", (size_t)n);
		skynet_free(ptr);
		lua_replace(L, idx);
		return (const uint8_t *)lua_tolstring(L, idx, sz);
	}
	if (t == LUA_TNIL || t == LUA_TNONE) {
		*sz = 0;
		return (const uint8_t *)"";
	}
	luaL_error(L, "cluster: message must be a string or a pointer, got %s", luaL_typename(L, idx));
	return NULL;
}

/* A request's destination: a numeric handle or a 1..255-byte name. */
struct address {
	uint32_t handle;
	const char *name; // borrowed from the Lua string at the address index, or NULL
	size_t namelen;
};

static void
check_address(lua_State *L, int idx, struct address *a) {
	a->name = NULL;
	a->namelen = 0;
	a->handle = 0;
	int t = lua_type(L, idx);
	if (t == LUA_TNUMBER) {
		lua_Integer h = 0;
		if (!lua_isinteger(L, idx)) {
			lua_Number f = lua_tonumber(L, idx);
			if (!lua_numbertointeger(f, &h) || (lua_Number)h != f)
				luaL_error(L, "cluster: address is not an integer (%f)", (double)f);
		} else {
			h = lua_tointeger(L, idx);
		}
		if (h < 0 || h > (lua_Integer)UINT32_MAX)
			luaL_error(L, "cluster: address out of range (%I)", (lua_Integer)h);
		a->handle = (uint32_t)h;
		return;
	}
	if (t != LUA_TSTRING)
		luaL_error(L, "name is not a string, it's a %s", luaL_typename(L, idx));
	a->name = lua_tolstring(L, idx, &a->namelen);
	if (a->namelen < 1 || a->namelen > NAME_MAX_LEN)
		luaL_error(L, "name length is invalid, must be between 1 and 255 characters: %s", a->name);
}

static uint32_t
check_session(lua_State *L, int idx) {
	lua_Integer s = luaL_checkinteger(L, idx);
	if (s <= 0 || s > SESSION_MAX)
		luaL_error(L, "Invalid request session %I", (lua_Integer)s);
	return (uint32_t)s;
}

/* Pushes a frame string: 2-byte length, then the body head and the tail bytes. */
static void
push_frame(lua_State *L, const uint8_t *head, size_t head_sz, const uint8_t *tail, size_t tail_sz) {
	size_t len = head_sz + tail_sz;
	luaL_Buffer b;
	uint8_t *p = (uint8_t *)luaL_buffinitsize(L, &b, len + 2);
	p[0] = (uint8_t)(len >> 8);
	p[1] = (uint8_t)(len & 0xff);
	memcpy(p + 2, head, head_sz);
	if (tail_sz > 0)
		memcpy(p + 2 + head_sz, tail, tail_sz);
	luaL_pushresultsize(&b, len + 2);
}

/* Writes the address part of a request header; returns its length. */
static size_t
put_address(uint8_t *p, uint8_t type, const struct address *a) {
	p[0] = type;
	if (a->name == NULL) {
		put_u32(p + 1, a->handle);
		return 5;
	}
	p[1] = (uint8_t)a->namelen;
	memcpy(p + 2, a->name, a->namelen);
	return 2 + a->namelen;
}

/* Pushes the part frames of a split message as an array. */
static void
push_parts(lua_State *L, uint32_t session, const uint8_t *msg, size_t sz) {
	size_t n = (sz + MULTI_PART - 1) / MULTI_PART;
	lua_createtable(L, (int)n, 0);
	uint8_t head[5];
	put_u32(head + 1, session);
	for (size_t i = 0; i < n; i++) {
		size_t off = i * MULTI_PART;
		size_t part = sz - off < MULTI_PART ? sz - off : MULTI_PART;
		head[0] = i + 1 == n ? REQ_PART_LAST : REQ_PART;
		push_frame(L, head, sizeof(head), msg + off, part);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static uint32_t
next_session(uint32_t s) {
	return s >= SESSION_MAX ? 1 : s + 1;
}

static int
pack_req(lua_State *L, bool push) {
	size_t sz = 0;
	const uint8_t *msg = get_message(L, 3, &sz, true);
	struct address a;
	check_address(L, 1, &a);
	uint32_t session = check_session(L, 2);
	uint8_t head[2 + NAME_MAX_LEN + 8];
	if (sz < MULTI_PART) {
		size_t n = put_address(head, a.name ? REQ_NAME : REQ_NUMBER, &a);
		put_u32(head + n, push ? 0 : session);
		push_frame(L, head, n + 4, msg, sz);
		lua_pushinteger(L, push ? session : next_session(session));
		return 2;
	}
	if (sz > UINT32_MAX)
		return luaL_error(L, "cluster: message too large (%I bytes)", (lua_Integer)sz);
	uint8_t type =
	    a.name ? (push ? REQ_MULTI_PUSH_N : REQ_MULTI_NAME) : (push ? REQ_MULTI_PUSH : REQ_MULTI);
	size_t n = put_address(head, type, &a);
	put_u32(head + n, session);
	put_u32(head + n + 4, (uint32_t)sz);
	push_frame(L, head, n + 8, NULL, 0);
	lua_pushinteger(L, next_session(session));
	push_parts(L, session, msg, sz);
	return 3;
}

static int
lpackrequest(lua_State *L) {
	return pack_req(L, false);
}

static int
lpackpush(lua_State *L) {
	return pack_req(L, true);
}

static int
lpacktrace(lua_State *L) {
	size_t sz = 0;
	const char *tag = luaL_checklstring(L, 1, &sz);
	if (sz > MULTI_PART)
		return luaL_error(L, "trace tag is too long : %d", (int)sz);
	uint8_t head = REQ_TRACE;
	push_frame(L, &head, 1, (const uint8_t *)tag, sz);
	return 1;
}

static int
unpack_single(lua_State *L, const uint8_t *p, size_t sz) {
	size_t off;
	if (p[0] == REQ_NUMBER) {
		if (sz < 9)
			return luaL_error(L, "Invalid cluster message (size=%d)", (int)sz);
		lua_pushinteger(L, get_u32(p + 1));
		off = 5;
	} else {
		if (sz < 2 || sz < (size_t)p[1] + 6)
			return luaL_error(L, "Invalid cluster message (size=%d)", (int)sz);
		lua_pushlstring(L, (const char *)p + 2, p[1]);
		off = 2 + (size_t)p[1];
	}
	uint32_t session = get_u32(p + off);
	lua_pushinteger(L, session);
	lua_pushlstring(L, (const char *)p + off + 4, sz - off - 4);
	lua_pushinteger(L, (lua_Integer)(sz - off - 4));
	lua_pushboolean(L, 0);
	lua_pushboolean(L, session == 0);
	return 6;
}

static int
unpack_header(lua_State *L, const uint8_t *p, size_t sz) {
	size_t off;
	uint8_t type = p[0];
	if (type == REQ_MULTI || type == REQ_MULTI_PUSH) {
		if (sz != 13)
			return luaL_error(L, "Invalid cluster message size %d (multi req must be 13)", (int)sz);
		lua_pushinteger(L, get_u32(p + 1));
		off = 5;
	} else {
		if (sz < 2 || sz < (size_t)p[1] + 10)
			return luaL_error(L, "Invalid cluster message (size=%d)", (int)sz);
		lua_pushlstring(L, (const char *)p + 2, p[1]);
		off = 2 + (size_t)p[1];
	}
	lua_pushinteger(L, get_u32(p + off));
	lua_pushnil(L);
	lua_pushinteger(L, get_u32(p + off + 4));
	lua_pushboolean(L, 1);
	lua_pushboolean(L, type == REQ_MULTI_PUSH || type == REQ_MULTI_PUSH_N);
	return 6;
}

static int
lunpackrequest(lua_State *L) {
	size_t sz = 0;
	const uint8_t *p = get_message(L, 1, &sz, false);
	if (sz == 0)
		return luaL_error(L, "Invalid req package. size == 0");
	switch (p[0]) {
	case REQ_NUMBER:
	case REQ_NAME:
		return unpack_single(L, p, sz);
	case REQ_MULTI:
	case REQ_MULTI_PUSH:
	case REQ_MULTI_NAME:
	case REQ_MULTI_PUSH_N:
		return unpack_header(L, p, sz);
	case REQ_PART:
	case REQ_PART_LAST:
		if (sz < 5)
			return luaL_error(L, "Invalid cluster multi part message");
		lua_pushboolean(L, 0);
		lua_pushinteger(L, get_u32(p + 1));
		lua_pushlstring(L, (const char *)p + 5, sz - 5);
		lua_pushinteger(L, (lua_Integer)(sz - 5));
		lua_pushboolean(L, p[0] == REQ_PART);
		return 5;
	case REQ_TRACE:
		lua_pushlstring(L, (const char *)p + 1, sz - 1);
		return 1;
	default:
		return luaL_error(L, "Invalid req package type %d", (int)(signed char)p[0]);
	}
}

static uint32_t
check_echo_session(lua_State *L, int idx) {
	lua_Integer s = luaL_checkinteger(L, idx);
	if (s < 0 || s > (lua_Integer)UINT32_MAX)
		luaL_error(L, "cluster: response session out of range (%I)", (lua_Integer)s);
	return (uint32_t)s;
}

static int
lpackresponse(lua_State *L) {
	size_t sz = 0;
	const uint8_t *msg = get_message(L, 3, &sz, false);
	uint32_t session = check_echo_session(L, 1);
	bool ok = lua_toboolean(L, 2);
	uint8_t head[9];
	put_u32(head, session);
	if (!ok) {
		head[4] = RESP_ERROR;
		push_frame(L, head, RESP_HEADER, msg, sz > MULTI_PART ? MULTI_PART : sz);
		return 1;
	}
	if (sz <= MULTI_PART) {
		head[4] = RESP_OK;
		push_frame(L, head, RESP_HEADER, msg, sz);
		return 1;
	}
	if (sz > UINT32_MAX)
		return luaL_error(L, "cluster: response too large (%I bytes)", (lua_Integer)sz);
	size_t n = (sz + MULTI_PART - 1) / MULTI_PART;
	lua_createtable(L, (int)n + 1, 0);
	head[4] = RESP_BEGIN;
	put_u32(head + 5, (uint32_t)sz);
	push_frame(L, head, sizeof(head), NULL, 0);
	lua_rawseti(L, -2, 1);
	for (size_t i = 0; i < n; i++) {
		size_t off = i * MULTI_PART;
		size_t part = sz - off < MULTI_PART ? sz - off : MULTI_PART;
		head[4] = i + 1 == n ? RESP_LAST : RESP_PART;
		push_frame(L, head, RESP_HEADER, msg + off, part);
		lua_rawseti(L, -2, (lua_Integer)i + 2);
	}
	return 1;
}

static int
lunpackresponse(lua_State *L) {
	size_t sz = 0;
	const uint8_t *p = get_message(L, 1, &sz, false);
	if (sz < RESP_HEADER)
		return luaL_error(L, "Invalid response (size=%d)", (int)sz);
	lua_pushinteger(L, get_u32(p));
	const char *data = (const char *)p + RESP_HEADER;
	size_t dsz = sz - RESP_HEADER;
	switch (p[4]) {
	case RESP_ERROR:
		lua_pushboolean(L, 0);
		lua_pushlstring(L, data, dsz);
		return 3;
	case RESP_OK:
		lua_pushboolean(L, 1);
		lua_pushlstring(L, data, dsz);
		return 3;
	case RESP_BEGIN:
		if (sz != 9)
			return luaL_error(L, "Invalid multi-part response begin (size=%d)", (int)sz);
		lua_pushboolean(L, 1);
		lua_pushinteger(L, get_u32(p + RESP_HEADER));
		lua_pushboolean(L, 1);
		return 4;
	case RESP_PART:
	case RESP_LAST:
		lua_pushboolean(L, 1);
		lua_pushlstring(L, data, dsz);
		lua_pushboolean(L, p[4] == RESP_PART);
		return 4;
	default:
		return luaL_error(L, "Invalid response status %d", (int)p[4]);
	}
}

static int
lappend(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	size_t sz = 0;
	const uint8_t *p = get_message(L, 2, &sz, false);
	lua_Integer n = luaL_len(L, 1);
	lua_pushlstring(L, (const char *)p, sz);
	lua_rawseti(L, 1, n + 1);
	return 0;
}

static int
lconcat(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_rawgeti(L, 1, 1);
	int isnum = 0;
	lua_Integer expect = lua_tointegerx(L, -1, &isnum);
	lua_pop(L, 1);
	if (!isnum || expect < 0)
		return 0;
	lua_Integer n = luaL_len(L, 1);
	size_t total = 0;
	for (lua_Integer i = 2; i <= n; i++) {
		lua_rawgeti(L, 1, i);
		if (lua_type(L, -1) != LUA_TSTRING)
			return 0;
		total += lua_rawlen(L, -1);
		lua_pop(L, 1);
		if (total > (size_t)expect)
			return 0;
	}
	if (total != (size_t)expect)
		return 0;
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	for (lua_Integer i = 2; i <= n; i++) {
		lua_rawgeti(L, 1, i);
		luaL_addvalue(&b);
	}
	luaL_pushresult(&b);
	return 1;
}

static int
lisname(lua_State *L) {
	size_t sz = 0;
	const char *s = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &sz) : NULL;
	lua_pushboolean(L, s != NULL && sz > 0 && s[0] == '@');
	return 1;
}

static int
lnodename(lua_State *L) {
	char host[256];
	if (gethostname(host, sizeof(host)) != 0) {
		lua_pushfstring(L, "noname%d", (int)getpid());
		return 1;
	}
	host[sizeof(host) - 1] = '\0';
	for (char *c = host; *c; c++) {
		if ((unsigned char)*c <= 0x20)
			*c = '_';
	}
	lua_pushfstring(L, "%s%d", host, (int)getpid());
	return 1;
}

LUAMOD_API int luaopen_skynet_cluster_core(lua_State *L);

LUAMOD_API int
luaopen_skynet_cluster_core(lua_State *L) {
	luaL_checkversion(L);
	static const luaL_Reg funcs[] = {
	    {"packrequest", lpackrequest},
	    {"packpush", lpackpush},
	    {"packtrace", lpacktrace},
	    {"unpackrequest", lunpackrequest},
	    {"packresponse", lpackresponse},
	    {"unpackresponse", lunpackresponse},
	    {"append", lappend},
	    {"concat", lconcat},
	    {"isname", lisname},
	    {"nodename", lnodename},
	    {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	return 1;
}
