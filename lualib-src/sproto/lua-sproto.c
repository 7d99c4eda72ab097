/*
 * sproto.core (luaclib/sproto.so, luaopen_sproto_core): the Lua side of the
 * sproto codec. Schemas and types are light userdata pointing into a schema
 * from sproto_create (sproto.h); a response-nil protocol's response is the
 * NULL light userdata.
 *
 * Encoder. Walks the Lua value directly (ordinary indexing, so __index and
 * __pairs are honoured) and writes into one growable buffer: a full
 * userdata anchored in a stack slot, so an error raised anywhere (a type
 * error, a metamethod) leaves nothing to free. A buffer of at most
 * ENC_CACHE_BYTES is kept as an upvalue of encode and reused by the next
 * call; a call that finds none (the first, or one nested inside a
 * metamethod of another encode) makes its own. A struct is written as its
 * word count, then its data items, while its field words gather aside (on
 * the C stack, or in a userdata for a type of many fields); at the end the
 * data moves up to make room for the words. So the buffer only ever holds
 * real output and the size limit is exact. Integer arrays start with
 * 4-byte elements and are widened in place to 8 bytes when an element needs
 * it.
 *
 * Decoder. Reads through struct sproto_reader, which checks every length
 * against the bytes left, so no input reads out of bounds: anything
 * malformed raises "decode error". Depth (nested structs, in messages and
 * in array elements) is limited to MAX_DEPTH on both sides, so hostile
 * input cannot exhaust the C stack.
 *
 * Units: sizes in bytes; the encoded output is limited to MAX_OUTPUT.
 */
#define _GNU_SOURCE // dladdr
#include "sproto.h"

#include "atomic.h"

#include <lauxlib.h>
#include <lua.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH       64
#define MAX_OUTPUT      (16 * 1024 * 1024)
#define ENC_FIRST_BYTES 1024
#define ENC_CACHE_BYTES (64 * 1024)

int luaopen_sproto_core(lua_State *L);

static void *
check_pointer(lua_State *L, int idx) {
	luaL_checktype(L, idx, LUA_TLIGHTUSERDATA);
	return lua_touserdata(L, idx);
}

/* A message buffer: a string, or a (light) userdata and a size. */
static const uint8_t *
check_buffer(lua_State *L, int idx, size_t *sz, int *next) {
	int t = lua_type(L, idx);
	if (t == LUA_TSTRING) {
		*next = idx + 1;
		return (const uint8_t *)lua_tolstring(L, idx, sz);
	}
	if (t == LUA_TUSERDATA || t == LUA_TLIGHTUSERDATA) {
		lua_Integer n = luaL_checkinteger(L, idx + 1);
		luaL_argcheck(L, n >= 0, idx + 1, "negative size");
		*sz = (size_t)n;
		*next = idx + 2;
		return lua_touserdata(L, idx);
	}
	luaL_argerror(L, idx, "Need a string or userdata");
	return NULL;
}

/* ---- Encoder ---- */

struct encoder {
	lua_State *L;
	int buf_idx; // stack slot of the buffer userdata
	uint8_t *p;  // its bytes
	size_t cap;
	size_t len;
};

static void
reserve(struct encoder *e, size_t more) {
	if (e->cap - e->len >= more)
		return;
	if (more > MAX_OUTPUT - e->len)
		luaL_error(e->L, "object is too large (>%d)", MAX_OUTPUT);
	size_t cap = e->cap;
	while (cap - e->len < more)
		cap *= 2;
	if (cap > MAX_OUTPUT)
		cap = MAX_OUTPUT;
	uint8_t *p = lua_newuserdatauv(e->L, cap, 0);
	memcpy(p, e->p, e->len);
	lua_replace(e->L, e->buf_idx);
	e->p = p;
	e->cap = cap;
}

static void
put16(uint8_t *p, uint32_t v) {
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put32(uint8_t *p, uint32_t v) {
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void
put64(uint8_t *p, uint64_t v) {
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static void
append(struct encoder *e, const void *s, size_t n) {
	reserve(e, n);
	memcpy(e->p + e->len, s, n);
	e->len += n;
}

/* Opens a data item: room for its length; returns where the length goes. */
static size_t
item_open(struct encoder *e) {
	reserve(e, 4);
	e->len += 4;
	return e->len - 4;
}

static void
item_close(struct encoder *e, size_t at) {
	put32(e->p + at, (uint32_t)(e->len - at - 4));
}

static bool
fits_i32(int64_t v) {
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void
put_int(struct encoder *e, int64_t v, int width) {
	reserve(e, (size_t)width);
	if (width == 4)
		put32(e->p + e->len, (uint32_t)(int32_t)v);
	else
		put64(e->p + e->len, (uint64_t)v);
	e->len += (size_t)width;
}

static void
put_double(struct encoder *e, double d) {
	uint64_t bits;
	memcpy(&bits, &d, sizeof(bits));
	put_int(e, (int64_t)bits, 8);
}

/* C round(): halves away from zero, without libm. */
static double
round_half_away(double v) {
	if (!(v > -4503599627370496.0 && v < 4503599627370496.0)) // 2^52: already whole, or NaN
		return v;
	double t = (double)(int64_t)v;
	double frac = v - t;
	if (frac >= 0.5)
		t += 1.0;
	else if (frac <= -0.5)
		t -= 1.0;
	return t;
}

/* The integer to encode for the value on top (index: 0, or 1-based in an array). */
static int64_t
get_integer(struct encoder *e, const struct sproto_type *st, const struct sproto_field *f,
            int index) {
	lua_State *L = e->L;
	if (f->decimal >= 0) {
		double v = round_half_away(lua_tonumber(L, -1) * f->scale);
		if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
			luaL_error(L, "%s.%s[%d] is out of the decimal range (%f)", st->name, f->name, index,
			           lua_tonumber(L, -1));
		return (int64_t)v;
	}
	int isnum;
	lua_Integer v = lua_tointegerx(L, -1, &isnum);
	if (!isnum)
		luaL_error(L, "%s.%s[%d] is not an integer (Is a %s)", st->name, f->name, index,
		           luaL_typename(L, -1));
	return v;
}

static bool
get_boolean(struct encoder *e, const struct sproto_type *st, const struct sproto_field *f,
            int index) {
	if (!lua_isboolean(e->L, -1))
		luaL_error(e->L, "%s.%s[%d] is not a boolean (Is a %s)", st->name, f->name, index,
		           luaL_typename(e->L, -1));
	return lua_toboolean(e->L, -1);
}

static void
put_string(struct encoder *e, const struct sproto_type *st, const struct sproto_field *f,
           int index) {
	if (lua_type(e->L, -1) != LUA_TSTRING)
		luaL_error(e->L, "%s.%s[%d] is not a string (Is a %s)", st->name, f->name, index,
		           luaL_typename(e->L, -1));
	size_t n;
	const char *s = lua_tolstring(e->L, -1, &n);
	if (n > MAX_OUTPUT)
		luaL_error(e->L, "object is too large (>%d)", MAX_OUTPUT);
	size_t at = item_open(e);
	append(e, s, n);
	item_close(e, at);
}

static void encode_struct(struct encoder *e, const struct sproto_type *st, int idx, int depth);

/* A struct as a data item, from the value on top. */
static void
put_struct(struct encoder *e, const struct sproto_type *st, int depth) {
	size_t at = item_open(e);
	encode_struct(e, st, lua_gettop(e->L), depth);
	item_close(e, at);
}

/* Widens the n 4-byte integers after the width byte at `at` to 8 bytes. */
static void
widen(struct encoder *e, size_t at, size_t n) {
	reserve(e, n * 4);
	uint8_t *base = e->p + at + 1;
	for (size_t j = n; j-- > 0;) {
		const uint8_t *q = base + j * 4;
		uint32_t u =
		    (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
		put64(base + j * 8, (uint64_t)(int64_t)(int32_t)u);
	}
	e->p[at] = 8;
	e->len += n * 4;
}

/* Elements 1, 2, ... of the plain array on top, up to the first nil. */
static void
encode_sequence(struct encoder *e, const struct sproto_type *st, const struct sproto_field *f,
                int depth) {
	lua_State *L = e->L;
	int t = lua_gettop(L);
	size_t width_at = 0;
	int width = 0; // integer arrays: 0 until the first element, then 4 or 8
	for (lua_Integer i = 1;; i++) {
		if (lua_geti(L, t, i) == LUA_TNIL) {
			lua_pop(L, 1);
			break;
		}
		int index = i > INT32_MAX ? INT32_MAX : (int)i;
		switch (f->kind) {
		case SPROTO_TINTEGER: {
			int64_t v = get_integer(e, st, f, index);
			if (width == 0) {
				width_at = e->len;
				append(e, "\4", 1);
				width = 4;
			}
			if (width == 4 && !fits_i32(v)) {
				widen(e, width_at, (e->len - width_at - 1) / 4);
				width = 8;
			}
			put_int(e, v, width);
			break;
		}
		case SPROTO_TDOUBLE:
			if (i == 1)
				append(e, "\10", 1);
			put_double(e, lua_tonumber(L, -1));
			break;
		case SPROTO_TBOOLEAN: {
			uint8_t b = get_boolean(e, st, f, index) ? 1 : 0;
			append(e, &b, 1);
			break;
		}
		case SPROTO_TSTRING:
			put_string(e, st, f, index);
			break;
		case SPROTO_TSTRUCT:
			put_struct(e, f->st, depth + 1);
			break;
		}
		lua_pop(L, 1);
	}
}

/* One entry (key at -2, value at -1) of a keyed array or map. */
static void
encode_entry(struct encoder *e, const struct sproto_field *f, int depth) {
	lua_State *L = e->L;
	if (f->value == NULL) {
		put_struct(e, f->st, depth + 1);
		return;
	}
	lua_createtable(L, 0, 2);
	lua_pushvalue(L, -3);
	lua_setfield(L, -2, f->key->name);
	lua_pushvalue(L, -2);
	lua_setfield(L, -2, f->value->name);
	put_struct(e, f->st, depth + 1);
	lua_pop(L, 1);
}

/* Every value of the table on top, as pairs() would visit them. */
static void
encode_pairs(struct encoder *e, const struct sproto_field *f, int depth) {
	lua_State *L = e->L;
	int t = lua_gettop(L);
	if (luaL_getmetafield(L, t, "__pairs") != LUA_TNIL) {
		lua_pushvalue(L, t);
		lua_call(L, 1, 3);
		int it = t + 1; // iterator, state, control
		for (;;) {
			lua_pushvalue(L, it);
			lua_pushvalue(L, it + 1);
			lua_pushvalue(L, it + 2);
			lua_call(L, 2, 2);
			if (lua_isnil(L, -2)) {
				lua_pop(L, 2);
				break;
			}
			lua_pushvalue(L, -2);
			lua_replace(L, it + 2);
			encode_entry(e, f, depth);
			lua_pop(L, 2);
		}
		lua_pop(L, 3);
		return;
	}
	lua_pushnil(L);
	while (lua_next(L, t) != 0) {
		encode_entry(e, f, depth);
		lua_pop(L, 1);
	}
}

/* The array value on top, as a data item. */
static void
encode_array(struct encoder *e, const struct sproto_type *st, const struct sproto_field *f,
             int depth) {
	lua_State *L = e->L;
	int t = lua_type(L, -1);
	if (t != LUA_TTABLE) {
		bool has_pairs = luaL_getmetafield(L, -1, "__pairs") != LUA_TNIL;
		if (has_pairs)
			lua_pop(L, 1);
		else
			luaL_error(L, "%s.%s(1) should be a table or an userdata with metamethods (Is a %s)",
			           st->name, f->name, lua_typename(L, t));
	}
	size_t at = item_open(e);
	if (f->key != NULL)
		encode_pairs(e, f, depth);
	else
		encode_sequence(e, st, f, depth);
	item_close(e, at);
}

#define LOCAL_WORDS 64 // field words kept on the C stack; more go to a userdata

/* The struct st from the value at idx, written at the end of the buffer. */
static void
encode_struct(struct encoder *e, const struct sproto_type *st, int idx, int depth) {
	lua_State *L = e->L;
	if (depth >= MAX_DEPTH)
		luaL_error(L, "The table is too deep");
	luaL_checkstack(L, 12, NULL);
	uint8_t local_words[LOCAL_WORDS * 2];
	uint8_t *words = local_words; // at most 2 per field: a skip and the field's own
	bool boxed = 2 * (size_t)st->n > LOCAL_WORDS;
	if (boxed)
		words = lua_newuserdatauv(L, 4 * (size_t)st->n, 0);
	size_t header = e->len;
	reserve(e, 2);
	e->len += 2;
	size_t nwords = 0;
	int64_t last_tag = -1;
	for (int i = 0; i < st->n; i++) {
		const struct sproto_field *f = &st->f[i];
		if (lua_getfield(L, idx, f->name) == LUA_TNIL) {
			lua_pop(L, 1);
			continue;
		}
		uint32_t word = 0; // a data item unless set
		if (f->array) {
			encode_array(e, st, f, depth);
		} else {
			switch (f->kind) {
			case SPROTO_TINTEGER: {
				int64_t v = get_integer(e, st, f, 0);
				if (v >= 0 && v <= 0x7ffe) {
					word = (uint32_t)(v + 1) * 2;
				} else {
					int width = fits_i32(v) ? 4 : 8;
					uint8_t len[4] = {(uint8_t)width, 0, 0, 0};
					append(e, len, 4);
					put_int(e, v, width);
				}
				break;
			}
			case SPROTO_TBOOLEAN:
				word = get_boolean(e, st, f, 0) ? 4 : 2;
				break;
			case SPROTO_TDOUBLE:
				append(e, "\10\0\0\0", 4);
				put_double(e, lua_tonumber(L, -1));
				break;
			case SPROTO_TSTRING:
				put_string(e, st, f, 0);
				break;
			case SPROTO_TSTRUCT:
				put_struct(e, f->st, depth + 1);
				break;
			}
		}
		lua_pop(L, 1);
		int64_t gap = f->tag - last_tag - 1;
		if (gap > 0)
			put16(words + 2 * nwords++, (uint32_t)(gap * 2 - 1));
		put16(words + 2 * nwords++, word);
		last_tag = f->tag;
	}
	/* The words go between the count and the data written after it. */
	size_t data = header + 2;
	reserve(e, 2 * nwords);
	memmove(e->p + data + 2 * nwords, e->p + data, e->len - data);
	memcpy(e->p + data, words, 2 * nwords);
	put16(e->p + header, (uint32_t)nwords);
	e->len += 2 * nwords;
	if (boxed)
		lua_pop(L, 1);
}

/* encode(type, table): upvalue 1 is the cached buffer (or nil). */
static int
lencode(lua_State *L) {
	const struct sproto_type *st = check_pointer(L, 1);
	if (st == NULL) {
		if (!lua_isnoneornil(L, 2))
			luaL_checktype(L, 2, LUA_TNIL);
		lua_pushliteral(L, "");
		return 1;
	}
	luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	struct encoder e = {.L = L, .buf_idx = 3};
	if (lua_type(L, lua_upvalueindex(1)) == LUA_TUSERDATA) {
		lua_pushvalue(L, lua_upvalueindex(1));
		lua_pushnil(L);
		lua_replace(L, lua_upvalueindex(1)); // in use: a nested encode makes its own
		e.cap = lua_rawlen(L, 3);
	} else {
		lua_newuserdatauv(L, ENC_FIRST_BYTES, 0);
		e.cap = ENC_FIRST_BYTES;
	}
	e.p = lua_touserdata(L, 3);
	encode_struct(&e, st, 2, 0);
	lua_pushlstring(L, (const char *)e.p, e.len);
	if (e.cap <= ENC_CACHE_BYTES) {
		lua_pushvalue(L, 3);
		lua_replace(L, lua_upvalueindex(1));
	}
	return 1;
}

/* ---- Decoder ---- */

static int
decode_error(lua_State *L) {
	return luaL_error(L, "decode error");
}

static uint32_t
get32(const uint8_t *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int64_t
get64(const uint8_t *p) {
	return (int64_t)((uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32);
}

static void
push_integer(lua_State *L, const struct sproto_field *f, int64_t v) {
	if (f->decimal >= 0)
		lua_pushnumber(L, (lua_Number)v / f->scale);
	else
		lua_pushinteger(L, v);
}

static size_t decode_struct(lua_State *L, const struct sproto_type *st, const uint8_t *p,
                            size_t size, int t, int depth);

/* The struct element on top (just decoded) goes into the table at t by its key. */
static void
store_keyed(lua_State *L, const struct sproto_field *f, int t) {
	int elem = lua_gettop(L);
	if (lua_getfield(L, elem, f->key->name) == LUA_TNIL) {
		if (f->value == NULL)
			luaL_error(L, "Can't find main index (tag=%d) in [%s]", f->key->tag, f->name);
		luaL_error(L, "Can't find key field in [%s]", f->name);
	}
	if (lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) != lua_tonumber(L, -1))
		decode_error(L); // a NaN key
	if (f->value == NULL) {
		lua_pushvalue(L, elem);
	} else if (lua_getfield(L, elem, f->value->name) == LUA_TNIL) {
		luaL_error(L, "Can't find value field in [%s]", f->name);
	}
	lua_rawset(L, t);
	lua_pop(L, 1);
}

/* Items (u32 length, bytes) filling p[0, len) exactly, into the table on top. */
static void
decode_items(lua_State *L, const struct sproto_field *f, const uint8_t *p, size_t len, int depth) {
	int t = lua_gettop(L);
	lua_Integer n = 0;
	while (len > 0) {
		if (len < 4)
			decode_error(L);
		uint32_t sz = get32(p);
		if (sz > len - 4)
			decode_error(L);
		const uint8_t *item = p + 4;
		p += 4 + (size_t)sz;
		len -= 4 + (size_t)sz;
		if (f->kind == SPROTO_TSTRING) {
			lua_pushlstring(L, (const char *)item, sz);
			lua_rawseti(L, t, ++n);
			continue;
		}
		lua_createtable(L, 0, f->st->n);
		decode_struct(L, f->st, item, sz, t + 1, depth + 1);
		if (f->key != NULL)
			store_keyed(L, f, t);
		else
			lua_rawseti(L, t, ++n);
	}
}

/* An array field's data item, as a new table on top. */
static void
decode_array(lua_State *L, const struct sproto_field *f, const uint8_t *p, size_t len, int depth) {
	if (len == 0 || f->kind == SPROTO_TSTRING || f->kind == SPROTO_TSTRUCT) {
		lua_newtable(L);
		if (len > 0)
			decode_items(L, f, p, len, depth);
		return;
	}
	if (f->kind == SPROTO_TBOOLEAN) {
		lua_createtable(L, (int)(len < INT32_MAX ? len : 0), 0);
		for (size_t i = 0; i < len; i++) {
			lua_pushboolean(L, p[i] != 0);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		return;
	}
	size_t width = p[0];
	if ((width != 4 && width != 8) || (f->kind == SPROTO_TDOUBLE && width != 8) ||
	    (len - 1) % width != 0)
		decode_error(L);
	size_t n = (len - 1) / width;
	lua_createtable(L, (int)(n < INT32_MAX ? n : 0), 0);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *q = p + 1 + i * width;
		if (f->kind == SPROTO_TDOUBLE) {
			uint64_t bits = (uint64_t)get64(q);
			double d;
			memcpy(&d, &bits, sizeof(d));
			lua_pushnumber(L, d);
		} else {
			push_integer(L, f, width == 4 ? (int32_t)get32(q) : get64(q));
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* A non-array field's data item, pushed as its Lua value. */
static void
decode_item(lua_State *L, const struct sproto_field *f, const uint8_t *p, size_t len, int depth) {
	switch (f->kind) {
	case SPROTO_TINTEGER:
		if (len == 4)
			push_integer(L, f, (int32_t)get32(p));
		else if (len == 8)
			push_integer(L, f, get64(p));
		else
			decode_error(L);
		break;
	case SPROTO_TDOUBLE: {
		if (len != 8)
			decode_error(L);
		uint64_t bits = (uint64_t)get64(p);
		double d;
		memcpy(&d, &bits, sizeof(d));
		lua_pushnumber(L, d);
		break;
	}
	case SPROTO_TSTRING:
		lua_pushlstring(L, (const char *)p, len);
		break;
	case SPROTO_TSTRUCT:
		lua_createtable(L, 0, f->st->n);
		decode_struct(L, f->st, p, len, lua_gettop(L), depth + 1);
		break;
	case SPROTO_TBOOLEAN:
		decode_error(L);
		break;
	}
}

/* Fills the table at t from the struct st in p[0, size); returns the bytes used. */
static size_t
decode_struct(lua_State *L, const struct sproto_type *st, const uint8_t *p, size_t size, int t,
              int depth) {
	if (depth >= MAX_DEPTH)
		luaL_error(L, "The table is too deep");
	luaL_checkstack(L, 8, NULL);
	struct sproto_reader r;
	struct sproto_value v;
	if (!sproto_reader_init(&r, p, size))
		decode_error(L);
	int rc;
	while ((rc = sproto_reader_next(&r, &v)) == 1) {
		const struct sproto_field *f = sproto_field_bytag(st, v.tag);
		if (f == NULL)
			continue;
		if (!v.is_inline) {
			if (f->array)
				decode_array(L, f, v.data, v.len, depth);
			else
				decode_item(L, f, v.data, v.len, depth);
		} else if (f->array) {
			decode_error(L);
		} else if (f->kind == SPROTO_TINTEGER) {
			push_integer(L, f, v.inline_value);
		} else if (f->kind == SPROTO_TBOOLEAN) {
			lua_pushboolean(L, v.inline_value != 0);
		} else {
			decode_error(L);
		}
		lua_setfield(L, t, f->name);
	}
	if (rc < 0)
		decode_error(L);
	return sproto_reader_used(&r);
}

/* decode(type, str [, into]) or decode(type, ptr, sz [, into]) -> table, bytes used */
static int
ldecode(lua_State *L) {
	const struct sproto_type *st = check_pointer(L, 1);
	if (st == NULL)
		return 0;
	size_t sz;
	int next;
	const uint8_t *p = check_buffer(L, 2, &sz, &next);
	if (lua_istable(L, next))
		lua_pushvalue(L, next);
	else if (lua_type(L, 2) == LUA_TSTRING && lua_istable(L, next + 1))
		lua_pushvalue(L, next + 1); // decode(type, str, sz, into)
	else
		lua_createtable(L, 0, st->n);
	size_t used = decode_struct(L, st, p, sz, lua_gettop(L), 0);
	lua_pushinteger(L, (lua_Integer)used);
	return 2;
}

/* ---- Packing ---- */

static int
lpack(lua_State *L) {
	size_t sz;
	int next;
	const uint8_t *src = check_buffer(L, 1, &sz, &next);
	luaL_Buffer b;
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &b, sproto_pack_bound(sz));
	luaL_pushresultsize(&b, sproto_pack(src, sz, out));
	return 1;
}

static int
lunpack(lua_State *L) {
	size_t sz;
	int next;
	const uint8_t *src = check_buffer(L, 1, &sz, &next);
	ptrdiff_t n = sproto_unpack(src, sz, NULL);
	if (n < 0)
		return luaL_error(L, "Invalid unpack stream");
	luaL_Buffer b;
	uint8_t *out = (uint8_t *)luaL_buffinitsize(L, &b, (size_t)n);
	sproto_unpack(src, sz, out);
	luaL_pushresultsize(&b, (size_t)n);
	return 1;
}

/* ---- Schemas ---- */

static int
lnewproto(lua_State *L) {
	size_t sz;
	const char *bin = luaL_checklstring(L, 1, &sz);
	struct sproto *sp = sproto_create(bin, sz);
	if (sp == NULL)
		return 0;
	lua_pushlightuserdata(L, sp);
	return 1;
}

static int
ldeleteproto(lua_State *L) {
	sproto_release(check_pointer(L, 1));
	return 0;
}

static int
lquerytype(lua_State *L) {
	struct sproto *sp = check_pointer(L, 1);
	size_t len;
	const char *name = luaL_checklstring(L, 2, &len);
	luaL_argcheck(L, sp != NULL, 1, "NULL sproto");
	struct sproto_type *st = sproto_type_find(sp, name, len);
	if (st == NULL)
		return 0;
	lua_pushlightuserdata(L, st);
	return 1;
}

/* protocol(sp, name) -> tag, request, response; protocol(sp, tag) -> name, request, response */
static int
lprotocol(lua_State *L) {
	struct sproto *sp = check_pointer(L, 1);
	luaL_argcheck(L, sp != NULL, 1, "NULL sproto");
	const struct sproto_protocol *pr;
	if (lua_type(L, 2) == LUA_TNUMBER) {
		pr = sproto_protocol_bytag(sp, luaL_checkinteger(L, 2));
		if (pr == NULL)
			return 0;
		lua_pushlstring(L, pr->name, pr->name_len);
	} else {
		size_t len;
		const char *name = luaL_checklstring(L, 2, &len);
		pr = sproto_protocol_byname(sp, name, len);
		if (pr == NULL)
			return 0;
		lua_pushinteger(L, pr->tag);
	}
	if (pr->request != NULL)
		lua_pushlightuserdata(L, pr->request);
	else
		lua_pushnil(L);
	if (pr->response != NULL)
		lua_pushlightuserdata(L, pr->response);
	else if (pr->confirm)
		lua_pushlightuserdata(L, NULL);
	else
		lua_pushnil(L);
	return 3;
}

/* The default of one value of field f (element: of one element of its array). */
static void
push_default(lua_State *L, const struct sproto_field *f, bool element) {
	switch (f->kind) {
	case SPROTO_TINTEGER:
		if (f->decimal >= 0)
			lua_pushnumber(L, 0.0);
		else
			lua_pushinteger(L, 0);
		break;
	case SPROTO_TBOOLEAN:
		lua_pushboolean(L, 0);
		break;
	case SPROTO_TSTRING:
		lua_pushliteral(L, "");
		break;
	case SPROTO_TDOUBLE:
		lua_pushnumber(L, 0.0);
		break;
	case SPROTO_TSTRUCT:
		if (element) {
			lua_pushlstring(L, f->st->name, f->st->name_len);
		} else {
			lua_createtable(L, 0, 1);
			lua_pushlstring(L, f->st->name, f->st->name_len);
			lua_setfield(L, -2, "__type");
		}
		break;
	}
}

static int
ldefault(lua_State *L) {
	const struct sproto_type *st = check_pointer(L, 1);
	if (st == NULL)
		return 0;
	lua_createtable(L, 0, st->n);
	for (int i = 0; i < st->n; i++) {
		const struct sproto_field *f = &st->f[i];
		if (f->array) {
			lua_createtable(L, 0, 1);
			push_default(L, f, true);
			lua_setfield(L, -2, "__array");
		} else {
			push_default(L, f, false);
		}
		lua_setfield(L, -2, f->name);
	}
	return 1;
}

static const char *
kind_name(const struct sproto_field *f) {
	switch (f->kind) {
	case SPROTO_TINTEGER:
		return "integer";
	case SPROTO_TBOOLEAN:
		return "boolean";
	case SPROTO_TSTRING:
		return f->binary ? "binary" : "string";
	case SPROTO_TDOUBLE:
		return "double";
	case SPROTO_TSTRUCT:
		return f->st->name;
	}
	return "?";
}

/* Prints the schema in the schema language (types by full name). */
static int
ldumpproto(lua_State *L) {
	struct sproto *sp = check_pointer(L, 1);
	luaL_argcheck(L, sp != NULL, 1, "NULL sproto");
	for (int i = 0; i < sp->type_n; i++) {
		const struct sproto_type *st = &sp->types[i];
		printf(".%s {\n", st->name);
		for (int j = 0; j < st->n; j++) {
			const struct sproto_field *f = &st->f[j];
			printf("\t%s %d : %s%s", f->name, f->tag, f->array ? "*" : "", kind_name(f));
			if (f->decimal >= 0)
				printf("(%d)", f->decimal);
			else if (f->value != NULL)
				printf("()");
			else if (f->key != NULL)
				printf("(%s)", f->key->name);
			printf("\n");
		}
		printf("}\n");
	}
	for (int i = 0; i < sp->protocol_n; i++) {
		const struct sproto_protocol *pr = &sp->protocols[i];
		printf("%s %d {\n", pr->name, pr->tag);
		if (pr->request != NULL)
			printf("\trequest %s\n", pr->request->name);
		if (pr->response != NULL)
			printf("\tresponse %s\n", pr->response->name);
		else if (pr->confirm)
			printf("\tresponse nil\n");
		printf("}\n");
	}
	fflush(stdout);
	return 0;
}

static int
check_slot(lua_State *L, int idx) {
	lua_Integer slot = luaL_optinteger(L, idx, 0);
	if (slot < 0 || slot >= SPROTO_SLOTS)
		luaL_error(L, "Invalid global slot index %d", (int)slot);
	return (int)slot;
}

static int
lsaveproto(lua_State *L) {
	struct sproto *sp = check_pointer(L, 1);
	int slot = check_slot(L, 2);
	luaL_argcheck(L, sp != NULL, 1, "NULL sproto");
	sproto_slot_save(slot, sp);
	return 0;
}

static int
lloadproto(lua_State *L) {
	int slot = check_slot(L, 1);
	struct sproto *sp = sproto_slot_load(slot);
	if (sp == NULL)
		return luaL_error(L, "nil sproto at index %d", slot);
	lua_pushlightuserdata(L, sp);
	return 1;
}

/*
 * The slots live in this library's static data, which must outlast every
 * Lua state: each state that requires sproto.core would otherwise unload the
 * library when it closes, and with the last one the slots would go. So the
 * library marks itself never to be unloaded (once per process).
 */
static ATOM_INT PINNED;

static void
pin_library(void) {
	if (!ATOM_CAS(&PINNED, 0, 1))
		return;
	Dl_info info;
	if (dladdr((void *)luaopen_sproto_core, &info) != 0 && info.dli_fname != NULL) {
		void *self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
		(void)self; // kept: this handle is never closed
	}
}

int
luaopen_sproto_core(lua_State *L) {
	luaL_checkversion(L);
	pin_library();
	static const luaL_Reg funcs[] = {
	    {"newproto", lnewproto},   {"deleteproto", ldeleteproto}, {"dumpproto", ldumpproto},
	    {"querytype", lquerytype}, {"decode", ldecode},           {"protocol", lprotocol},
	    {"loadproto", lloadproto}, {"saveproto", lsaveproto},     {"default", ldefault},
	    {"pack", lpack},           {"unpack", lunpack},           {NULL, NULL},
	};
	luaL_newlib(L, funcs);
	lua_pushnil(L); // encode's cached buffer
	lua_pushcclosure(L, lencode, 1);
	lua_setfield(L, -2, "encode");
	return 1;
}
