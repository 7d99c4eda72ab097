/*
 * skynet.pack / skynet.unpack: the value serialization (format in lua-seri.h).
 *
 * Every value is a tag byte (low 3 bits type, high 5 bits cookie) and a
 * payload; multi-byte fields are in host order (little-endian).
 *
 * Writer. Bytes go first to a buffer inside struct seri_writer, on the C
 * stack, so a typical message costs no allocation besides the one pack
 * returns. On overflow they move to a single skynet_malloc buffer that grows
 * geometrically. That buffer is owned by a "box" userdata held in a stack
 * slot reserved on entry and marked to-be-closed, so any error raised while
 * packing (unsupported type, depth, size, stack overflow, or an error thrown
 * by a __pairs metamethod) frees it as the error unwinds. The box's __gc
 * frees it too, for an error that escapes a coroutine nobody closes. On
 * success pack detaches the buffer and returns it without a copy.
 *
 * Reader. A cursor and a count of bytes left; every read checks the count
 * before touching memory, so no input makes it read out of bounds.
 *
 * Depth. Top-level values are at depth 0 and the keys and values of a table
 * at depth d are at depth d + 1. Packing a value deeper than SERI_MAX_DEPTH
 * fails (which also catches cycles); the reader rejects the same depth, which
 * bounds its C recursion on hostile input.
 */
#include "lua-seri.h"

#include "skynet_malloc.h"

#include <lauxlib.h>
#include <lua.h>

#include <limits.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Value types: the low 3 bits of a tag. */
enum {
	SERI_TNIL = 0,
	SERI_TBOOLEAN = 1,
	SERI_TNUMBER = 2,
	SERI_TUSERDATA = 3,
	SERI_TSHORT_STRING = 4,
	SERI_TLONG_STRING = 5,
	SERI_TTABLE = 6,
};

/* Number subtypes: the cookie of a SERI_TNUMBER tag. */
enum {
	SERI_NUM_ZERO = 0,
	SERI_NUM_BYTE = 1,
	SERI_NUM_WORD = 2,
	SERI_NUM_DWORD = 4,
	SERI_NUM_QWORD = 6,
	SERI_NUM_REAL = 8,
};

#define SERI_MAX_COOKIE   32
#define SERI_LONG_ARRAY   (SERI_MAX_COOKIE - 1) // table cookie: array length follows
#define SERI_MAX_DEPTH    32
#define SERI_INLINE_BYTES 256
#define SERI_STACK_ITEMS  32 // unpack: arrays this short are gathered on the stack
#define SERI_STACK_PAIRS  16 // unpack: pairs gathered before the table is created

/* The largest packed size. A variable only so that the unit test can lower it. */
static size_t SERI_MAX_BYTES = INT_MAX;

/* Its address is the registry key of the box metatable. */
static const char BOX_META_KEY = 0;

struct seri_box {
	char *ptr; // owned: the heap buffer, or NULL
	int keep;  // set on success: __close leaves ptr to the caller
};

struct seri_writer {
	lua_State *L;         // borrowed: the packing state
	char *buf;            // borrowed: inline_buf or box->ptr
	size_t len;           // bytes written
	size_t cap;           // bytes available at buf
	int box_slot;         // stack slot reserved for the box
	struct seri_box *box; // borrowed from box_slot; NULL until inline_buf overflows
	char inline_buf[SERI_INLINE_BYTES];
};

struct seri_reader {
	lua_State *L;
	const uint8_t *p; // borrowed: next unread byte
	size_t left;      // bytes left after p
};

static inline uint8_t
tag(int type, int cookie) {
	return (uint8_t)(type | cookie << 3);
}

/* __close: frees the buffer, unless pack succeeded and hands it to its caller. */
static int
box_close(lua_State *L) {
	struct seri_box *box = lua_touserdata(L, 1);
	if (!box->keep) {
		skynet_free(box->ptr);
		box->ptr = NULL;
	}
	return 0;
}

/* __gc: frees whatever the box still owns. */
static int
box_gc(lua_State *L) {
	struct seri_box *box = lua_touserdata(L, 1);
	skynet_free(box->ptr);
	box->ptr = NULL;
	return 0;
}

/* Put a box in the reserved slot and mark the slot to-be-closed. */
static void
box_create(struct seri_writer *w) {
	lua_State *L = w->L;
	struct seri_box *box = lua_newuserdatauv(L, sizeof(*box), 0);
	box->ptr = NULL;
	box->keep = 0;
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &BOX_META_KEY) == LUA_TNIL) {
		lua_pop(L, 1);
		lua_createtable(L, 0, 2);
		lua_pushcfunction(L, box_close);
		lua_setfield(L, -2, "__close");
		lua_pushcfunction(L, box_gc);
		lua_setfield(L, -2, "__gc");
		lua_pushvalue(L, -1);
		lua_rawsetp(L, LUA_REGISTRYINDEX, &BOX_META_KEY);
	}
	lua_setmetatable(L, -2);
	lua_replace(L, w->box_slot);
	lua_toclose(L, w->box_slot);
	w->box = box;
}

/* Make room for n more bytes, or raise if the total would pass SERI_MAX_BYTES. */
static void
writer_grow(struct seri_writer *w, size_t n) {
	if (n > SERI_MAX_BYTES - w->len)
		luaL_error(w->L, "serialize can't pack more than %I bytes", (lua_Integer)SERI_MAX_BYTES);
	size_t need = w->len + n;
	size_t cap = w->cap * 2;
	if (cap < need)
		cap = need;
	if (cap > SERI_MAX_BYTES)
		cap = SERI_MAX_BYTES;
	if (w->box == NULL) {
		box_create(w); // may raise: nothing is on the heap yet
		w->box->ptr = skynet_malloc(cap);
		memcpy(w->box->ptr, w->buf, w->len);
	} else {
		w->box->ptr = skynet_realloc(w->box->ptr, cap);
	}
	w->buf = w->box->ptr;
	w->cap = cap;
}

static inline char *
reserve(struct seri_writer *w, size_t n) {
	if (w->cap - w->len < n)
		writer_grow(w, n);
	return w->buf + w->len;
}

static inline void
put_byte(struct seri_writer *w, uint8_t b) {
	*reserve(w, 1) = (char)b;
	w->len++;
}

/* A tag byte followed by n payload bytes. */
static inline void
put_tagged(struct seri_writer *w, uint8_t t, const void *p, size_t n) {
	char *d = reserve(w, 1 + n);
	d[0] = (char)t;
	memcpy(d + 1, p, n);
	w->len += 1 + n;
}

static void
put_integer(struct seri_writer *w, lua_Integer v) {
	if (v == 0) {
		put_byte(w, tag(SERI_TNUMBER, SERI_NUM_ZERO));
	} else if (v < INT32_MIN || v > INT32_MAX) {
		int64_t x = v;
		put_tagged(w, tag(SERI_TNUMBER, SERI_NUM_QWORD), &x, sizeof(x));
	} else if (v < 0 || v >= 0x10000) {
		int32_t x = (int32_t)v;
		put_tagged(w, tag(SERI_TNUMBER, SERI_NUM_DWORD), &x, sizeof(x));
	} else if (v < 0x100) {
		uint8_t x = (uint8_t)v;
		put_tagged(w, tag(SERI_TNUMBER, SERI_NUM_BYTE), &x, sizeof(x));
	} else {
		uint16_t x = (uint16_t)v;
		put_tagged(w, tag(SERI_TNUMBER, SERI_NUM_WORD), &x, sizeof(x));
	}
}

static void
put_string(struct seri_writer *w, const char *s, size_t len) {
	if (len < SERI_MAX_COOKIE) {
		put_tagged(w, tag(SERI_TSHORT_STRING, (int)len), s, len);
		return;
	}
	size_t head = len < 0x10000 ? 3 : 5;
	if (len > SERI_MAX_BYTES)
		writer_grow(w, len); // raises the size error before head + len can wrap
	char *d = reserve(w, head + len);
	if (head == 3) {
		uint16_t n = (uint16_t)len;
		d[0] = (char)tag(SERI_TLONG_STRING, 2);
		memcpy(d + 1, &n, sizeof(n));
	} else {
		uint32_t n = (uint32_t)len; // len <= SERI_MAX_BYTES <= INT_MAX
		d[0] = (char)tag(SERI_TLONG_STRING, 4);
		memcpy(d + 1, &n, sizeof(n));
	}
	memcpy(d + head, s, len);
	w->len += head + len;
}

static void pack_value(struct seri_writer *w, int idx, int depth);

/* Pack the key and value on top of the stack, then pop the value. */
static void
pack_pair(struct seri_writer *w, int depth) {
	int top = lua_gettop(w->L);
	pack_value(w, top - 1, depth);
	pack_value(w, top, depth);
	lua_pop(w->L, 1);
}

/* A table whose __pairs is on top of the stack: array length 0, then every pair. */
static void
pack_table_pairs(struct seri_writer *w, int idx, int depth) {
	lua_State *L = w->L;
	put_byte(w, tag(SERI_TTABLE, 0));
	lua_pushvalue(L, idx);
	lua_call(L, 1, 3); // iterator, state, control
	for (;;) {
		lua_pushvalue(L, -3);
		lua_pushvalue(L, -3);
		lua_pushvalue(L, -3);
		lua_call(L, 2, 2); // iterator, state, control, key, value
		if (lua_isnil(L, -2)) {
			lua_pop(L, 5);
			break;
		}
		pack_pair(w, depth);
		lua_replace(L, -2); // the key is the next control value
	}
	put_byte(w, tag(SERI_TNIL, 0));
}

/* Raw access: t[1..N] with N = lua_rawlen, then the other pairs in next order. */
static void
pack_table_raw(struct seri_writer *w, int idx, int depth) {
	lua_State *L = w->L;
	lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
	if (n < SERI_LONG_ARRAY) {
		put_byte(w, tag(SERI_TTABLE, (int)n));
	} else {
		put_byte(w, tag(SERI_TTABLE, SERI_LONG_ARRAY));
		put_integer(w, n);
	}
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, idx, i);
		pack_value(w, lua_gettop(L), depth);
		lua_pop(L, 1);
	}
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		if (lua_isinteger(L, -2)) {
			lua_Integer k = lua_tointeger(L, -2);
			if (k >= 1 && k <= n) {
				lua_pop(L, 1);
				continue;
			}
		}
		pack_pair(w, depth);
	}
	put_byte(w, tag(SERI_TNIL, 0));
}

static void
pack_value(struct seri_writer *w, int idx, int depth) {
	lua_State *L = w->L;
	if (depth > SERI_MAX_DEPTH)
		luaL_error(L, "serialize can't pack too depth table");
	int type = lua_type(L, idx);
	switch (type) {
	case LUA_TNIL:
		put_byte(w, tag(SERI_TNIL, 0));
		break;
	case LUA_TBOOLEAN:
		put_byte(w, tag(SERI_TBOOLEAN, lua_toboolean(L, idx)));
		break;
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx)) {
			put_integer(w, lua_tointeger(L, idx));
		} else {
			double d = (double)lua_tonumber(L, idx);
			put_tagged(w, tag(SERI_TNUMBER, SERI_NUM_REAL), &d, sizeof(d));
		}
		break;
	case LUA_TSTRING: {
		size_t len;
		const char *s = lua_tolstring(L, idx, &len);
		put_string(w, s, len);
		break;
	}
	case LUA_TLIGHTUSERDATA: {
		void *p = lua_touserdata(L, idx);
		put_tagged(w, tag(SERI_TUSERDATA, 0), &p, sizeof(p));
		break;
	}
	case LUA_TTABLE:
		luaL_checkstack(L, LUA_MINSTACK, NULL);
		if (luaL_getmetafield(L, idx, "__pairs") != LUA_TNIL)
			pack_table_pairs(w, idx, depth + 1);
		else
			pack_table_raw(w, idx, depth + 1);
		break;
	default:
		luaL_error(L, "Unsupport type %s to serialize", lua_typename(L, type));
	}
}

/* Pack arguments 1..top into w. Leaves the box slot (maybe a box) above them. */
static void
pack_args(lua_State *L, struct seri_writer *w) {
	int n = lua_gettop(L);
	lua_pushnil(L);
	w->L = L;
	w->buf = w->inline_buf;
	w->len = 0;
	w->cap = sizeof(w->inline_buf) < SERI_MAX_BYTES ? sizeof(w->inline_buf) : SERI_MAX_BYTES;
	w->box_slot = n + 1;
	w->box = NULL;
	for (int i = 1; i <= n; i++)
		pack_value(w, i, 0);
}

/* initial-exec: read on every pack, so no __tls_get_addr call (as snlua's trap.c). */
__thread size_t luaseri_room;
__thread size_t luaseri_packed;

int
luaseri_pack(lua_State *L) {
	struct seri_writer w;
	pack_args(L, &w);
	void *out;
	if (w.box != NULL) {
		/*
		 * Untrack the slot first: if that raises, the box still owns the
		 * buffer. The copy keeps the box alive once the slot is cleared.
		 */
		w.box->keep = 1;
		lua_pushvalue(L, w.box_slot);
		lua_closeslot(L, w.box_slot);
		out = w.box->ptr;
		w.box->ptr = NULL;
		lua_pop(L, 1);
		luaseri_packed = w.cap;
	} else {
		out = skynet_malloc(w.len + luaseri_room);
		memcpy(out, w.buf, w.len);
		luaseri_packed = w.len + luaseri_room;
	}
	/* Nothing below raises, so the caller surely receives out. */
	lua_pushlightuserdata(L, out);
	lua_pushinteger(L, (lua_Integer)w.len);
	return 2;
}

int
luaseri_packstring(lua_State *L) {
	struct seri_writer w;
	pack_args(L, &w);
	lua_pushlstring(L, w.buf, w.len);
	if (w.box != NULL)
		lua_closeslot(L, w.box_slot); // frees the buffer now
	return 1;
}

static void invalid_stream(struct seri_reader *r, int line) __attribute__((noreturn));

static void
invalid_stream(struct seri_reader *r, int line) {
	luaL_error(r->L, "Invalid serialize stream %I (line:%d)", (lua_Integer)r->left, line);
	abort(); // luaL_error does not return
}

/* Consume n bytes and return where they start, or raise if fewer are left. */
static inline const uint8_t *
take(struct seri_reader *r, size_t n) {
	if (r->left < n)
		invalid_stream(r, __LINE__);
	const uint8_t *p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

/* The payload of an integer number whose tag has this cookie. */
static lua_Integer
read_integer(struct seri_reader *r, int cookie) {
	switch (cookie) {
	case SERI_NUM_ZERO:
		return 0;
	case SERI_NUM_BYTE:
		return *take(r, 1);
	case SERI_NUM_WORD: {
		uint16_t v;
		memcpy(&v, take(r, sizeof(v)), sizeof(v));
		return v;
	}
	case SERI_NUM_DWORD: {
		int32_t v;
		memcpy(&v, take(r, sizeof(v)), sizeof(v));
		return v;
	}
	case SERI_NUM_QWORD: {
		int64_t v;
		memcpy(&v, take(r, sizeof(v)), sizeof(v));
		return (lua_Integer)v;
	}
	default:
		invalid_stream(r, __LINE__);
	}
}

static void read_value(struct seri_reader *r, uint8_t t, int depth);

/* The array length of a table whose tag had this cookie. */
static lua_Integer
read_array_length(struct seri_reader *r, int cookie) {
	lua_Integer n = cookie;
	if (cookie == SERI_LONG_ARRAY) {
		uint8_t t = *take(r, 1);
		if ((t & 7) != SERI_TNUMBER || (t >> 3) == SERI_NUM_REAL)
			invalid_stream(r, __LINE__);
		n = read_integer(r, t >> 3);
	}
	/* Each item takes at least one byte: this bounds the preallocation. */
	if (n < 0 || (lua_Unsigned)n > r->left || n > INT_MAX)
		invalid_stream(r, __LINE__);
	return n;
}

/* Push the next key and value of a table; false at its terminator. */
static bool
read_pair(struct seri_reader *r, int depth) {
	uint8_t t = *take(r, 1);
	if (t == tag(SERI_TNIL, 0))
		return false;
	read_value(r, t, depth);
	if (t == tag(SERI_TNUMBER, SERI_NUM_REAL) && isnan(lua_tonumber(r->L, -1)))
		invalid_stream(r, __LINE__); // lua_rawset would raise "index is NaN"
	read_value(r, *take(r, 1), depth);
	return true;
}

/*
 * A table whose tag had this cookie; its keys and values are at depth.
 * Lua cannot presize the hash part of an existing table, so a short array
 * and the first SERI_STACK_PAIRS pairs are gathered on the stack first and
 * the table is created with both parts sized: a typical message table is
 * built without a single rehash.
 */
static void
read_table(struct seri_reader *r, int cookie, int depth) {
	lua_State *L = r->L;
	lua_Integer n = read_array_length(r, cookie);
	int pairs = 0;
	bool more = true;
	if (n <= SERI_STACK_ITEMS) {
		luaL_checkstack(L, (int)n + 2 * SERI_STACK_PAIRS + LUA_MINSTACK, NULL);
		int base = lua_gettop(L);
		for (lua_Integer i = 1; i <= n; i++)
			read_value(r, *take(r, 1), depth);
		while (pairs < SERI_STACK_PAIRS && (more = read_pair(r, depth)))
			pairs++;
		lua_createtable(L, (int)n, pairs);
		int t = lua_gettop(L);
		for (int i = 1; i <= (int)n; i++) { // in stream order: a later duplicate wins
			lua_pushvalue(L, base + i);
			lua_rawseti(L, t, i);
		}
		for (int k = base + (int)n + 1; k < t; k += 2) {
			lua_pushvalue(L, k);
			lua_pushvalue(L, k + 1);
			lua_rawset(L, t);
		}
		lua_copy(L, t, base + 1);
		lua_settop(L, base + 1);
	} else {
		luaL_checkstack(L, LUA_MINSTACK, NULL);
		lua_createtable(L, (int)n, 0);
		for (lua_Integer i = 1; i <= n; i++) {
			read_value(r, *take(r, 1), depth);
			lua_rawseti(L, -2, i);
		}
	}
	while (more && read_pair(r, depth))
		lua_rawset(L, -3);
}

static void
read_string(struct seri_reader *r, int cookie) {
	size_t len;
	if (cookie == 2) {
		uint16_t n;
		memcpy(&n, take(r, sizeof(n)), sizeof(n));
		len = n;
	} else if (cookie == 4) {
		uint32_t n;
		memcpy(&n, take(r, sizeof(n)), sizeof(n));
		len = n;
	} else {
		invalid_stream(r, __LINE__);
	}
	lua_pushlstring(r->L, (const char *)take(r, len), len);
}

/* Push the value whose tag byte t was just read. */
static void
read_value(struct seri_reader *r, uint8_t t, int depth) {
	lua_State *L = r->L;
	int cookie = t >> 3;
	if (depth > SERI_MAX_DEPTH)
		invalid_stream(r, __LINE__);
	switch (t & 7) {
	case SERI_TNIL:
		if (cookie != 0)
			invalid_stream(r, __LINE__);
		lua_pushnil(L);
		break;
	case SERI_TBOOLEAN:
		if (cookie > 1)
			invalid_stream(r, __LINE__);
		lua_pushboolean(L, cookie);
		break;
	case SERI_TNUMBER:
		if (cookie == SERI_NUM_REAL) {
			double d;
			memcpy(&d, take(r, sizeof(d)), sizeof(d));
			lua_pushnumber(L, (lua_Number)d);
		} else {
			lua_pushinteger(L, read_integer(r, cookie));
		}
		break;
	case SERI_TUSERDATA: {
		void *p;
		if (cookie != 0)
			invalid_stream(r, __LINE__);
		memcpy(&p, take(r, sizeof(p)), sizeof(p));
		lua_pushlightuserdata(L, p);
		break;
	}
	case SERI_TSHORT_STRING:
		lua_pushlstring(L, (const char *)take(r, (size_t)cookie), (size_t)cookie);
		break;
	case SERI_TLONG_STRING:
		read_string(r, cookie);
		break;
	case SERI_TTABLE:
		read_table(r, cookie, depth + 1);
		break;
	default:
		invalid_stream(r, __LINE__);
	}
}

int
luaseri_unpack(lua_State *L) {
	if (lua_isnoneornil(L, 1))
		return 0;
	const void *data;
	size_t len;
	if (lua_type(L, 1) == LUA_TSTRING) {
		data = lua_tolstring(L, 1, &len);
	} else {
		luaL_checktype(L, 1, LUA_TLIGHTUSERDATA);
		data = lua_touserdata(L, 1);
		lua_Integer n = luaL_checkinteger(L, 2);
		luaL_argcheck(L, n >= 0, 2, "negative size");
		len = (size_t)n;
	}
	if (len == 0)
		return 0;
	if (data == NULL)
		return luaL_error(L, "deserialize null pointer");
	lua_settop(L, 1); // keeps a string argument, and so data, alive
	struct seri_reader r = {L, data, len};
	while (r.left > 0) {
		luaL_checkstack(L, 2, NULL);
		read_value(&r, *take(&r, 1), 0);
	}
	return lua_gettop(L) - 1;
}
