/*
 * bson: BSON documents (the MongoDB wire format) for Lua, `require "bson"`.
 *
 * Values. Lua numbers, booleans, strings and tables map onto BSON doubles,
 * int32/int64, booleans, strings, documents and arrays. BSON values Lua has no
 * type for (null, binary, object ids, dates, regexes, timestamps, int64,
 * min/max keys, and the legacy types a decode may meet) are Lua strings tagged
 * by a leading zero byte: "\0", the BSON element type, then a payload. Any
 * string of two or more bytes starting with a zero byte is such a value; the
 * constructors (bson.date, bson.objectid, ...) build them.
 *
 * Documents. encode returns a full userdata holding exactly the document's
 * bytes (metatable "bson"): # is its size, tostring its raw bytes. Its one
 * user value holds, after makeindex, a table from each top-level key of a
 * fixed-size element to (payload offset << 8 | element type), which lets
 * doc[key] = v rewrite that payload in place without changing the size.
 *
 * Encoder. Bytes go to a buffer inside struct bson_writer on the C stack; on
 * overflow they move to a userdata that grows geometrically and lives in a
 * stack slot reserved on entry. Only Lua's allocator is used, so an error
 * raised anywhere (bad value, a metamethod's error, out of memory) leaves
 * nothing to free. Multi-byte fields are little-endian, written byte by byte.
 * A table is an array when its metatable has __len (that many elements), or
 * when it has no __pairs and the first key next() gives is 1, or an integer k
 * with 1 < k <= rawlen (rawlen elements); otherwise it is a document, iterated
 * with __pairs when present. Document keys are strings; a number key is an
 * error, except from __pairs, where it is written in its string form (as the
 * reference does: its own test script encodes such a table). The top level is
 * always a document. At most
 * BSON_MAX_DEPTH tables nest (which also stops cycles), and a document stays
 * below 2 GiB (its length is an i32).
 *
 * Decoder. It reads outside bytes: every length is checked against the bytes
 * left in the enclosing document before anything is read, a key must end
 * inside its document, and nesting is bounded by BSON_MAX_DEPTH, so no input
 * makes it read out of bounds or recurse without limit. A full userdata is
 * bounded by its size; a light userdata is trusted to hold the length its
 * first four bytes give.
 *
 * bson.to_lightuserdata(v) gives a pointer to the bytes of a userdata (a
 * document passed between services of one process while its owner keeps it)
 * or of a string (bytes received elsewhere, for decode); v must outlive it.
 *
 * Choices where the reference has no defined behaviour (malformed input it
 * would write or read past): a key or regex part with a zero byte in it, an
 * embedded document that does not fit its userdata, a tagged binary with no
 * subtype byte, or a legacy value (jscode, symbol, dbpointer, code_w_s) whose
 * payload is not one well-formed value are encode errors, not broken output;
 * an array key that is not a number and nesting deeper than BSON_MAX_DEPTH are
 * decode errors.
 *
 * Object ids: Unix time (u32 big-endian), 3 bytes of a host-name hash, the
 * pid's low 16 bits (little-endian), and a process-wide 24-bit big-endian
 * counter (atomic, shared by every Lua state of the process) whose start is
 * derived from the time, pid and host hash.
 */
#include "atomic.h"

#include <lauxlib.h>
#include <lua.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
	BSON_REAL = 0x01,
	BSON_STRING = 0x02,
	BSON_DOCUMENT = 0x03,
	BSON_ARRAY = 0x04,
	BSON_BINARY = 0x05,
	BSON_OBJECTID = 0x07,
	BSON_BOOLEAN = 0x08,
	BSON_DATE = 0x09,
	BSON_NULL = 0x0a,
	BSON_REGEX = 0x0b,
	BSON_DBPOINTER = 0x0c,
	BSON_JSCODE = 0x0d,
	BSON_SYMBOL = 0x0e,
	BSON_CODEWS = 0x0f,
	BSON_INT32 = 0x10,
	BSON_TIMESTAMP = 0x11,
	BSON_INT64 = 0x12,
	BSON_MAXKEY = 0x7f,
	BSON_MINKEY = 0xff,
};

#define BSON_MAX_DEPTH     128       // tables nested in one document, the top one included
#define BSON_MAX_SIZE      INT32_MAX // bytes of one document
#define BSON_INLINE_BYTES  512       // encoder bytes kept on the C stack
#define BSON_OBJECTID_SIZE 12

static ATOM_INT OID_READY;   // set by the first luaopen_bson
static ATOM_U32 OID_HOST;    // 24-bit hash of the host name
static ATOM_U32 OID_COUNTER; // next object id counter (low 24 bits used)
static ATOM_U32 TS_COUNTER;  // increment of the next timestamp(sec, nil)

/* Little-endian fields. */

static inline uint32_t
get_u32(const uint8_t *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline int32_t
get_i32(const uint8_t *p) {
	return (int32_t)get_u32(p);
}

static inline uint64_t
get_u64(const uint8_t *p) {
	return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static inline void
put_u32(uint8_t *p, uint32_t v) {
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void
put_u64(uint8_t *p, uint64_t v) {
	put_u32(p, (uint32_t)v);
	put_u32(p + 4, (uint32_t)(v >> 32));
}

/*
 * UTF-8 as the encoder accepts it: 1 to 4 byte forms, no overlong form, code
 * points up to U+10FFFF. Surrogates and zero bytes pass.
 */
static bool
is_utf8(const uint8_t *s, size_t len) {
	size_t i = 0;
	while (i < len) {
		uint32_t c = s[i++];
		if (c < 0x80)
			continue;
		size_t more;
		uint32_t min;
		if ((c & 0xe0) == 0xc0) {
			more = 1, c &= 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			more = 2, c &= 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			more = 3, c &= 0x07, min = 0x10000;
		} else {
			return false;
		}
		if (len - i < more)
			return false;
		for (size_t k = 0; k < more; k++) {
			uint8_t b = s[i++];
			if ((b & 0xc0) != 0x80)
				return false;
			c = c << 6 | (b & 0x3f);
		}
		if (c < min || c > 0x10ffff)
			return false;
	}
	return true;
}

/* Raises prefix .. bytes; the bytes may hold zeros. */
static int
error_with_bytes(lua_State *L, const char *prefix, const void *bytes, size_t len) {
	luaL_where(L, 1);
	lua_pushstring(L, prefix);
	lua_pushlstring(L, bytes, len);
	lua_concat(L, 3);
	return lua_error(L);
}

/* Pushes a tagged string: zero, type, payload. */
static void
push_tagged(lua_State *L, int type, const void *payload, size_t len) {
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addchar(&b, 0);
	luaL_addchar(&b, (char)type);
	luaL_addlstring(&b, payload, len);
	luaL_pushresult(&b);
}

/*
 * Reader: sizes of element payloads. Each returns the payload size, which is
 * never more than avail, or raises an error.
 */

static size_t
need(lua_State *L, size_t avail, size_t n) {
	if (avail < n)
		luaL_error(L, "Invalid bson block (%I:%I)", (lua_Integer)avail, (lua_Integer)n);
	return n;
}

/* A block that starts with its own i32 length (documents, code_w_s). */
static size_t
block_size(lua_State *L, const uint8_t *p, size_t avail) {
	need(L, avail, 4);
	int32_t len = get_i32(p);
	if (len < 5 || (size_t)len > avail)
		luaL_error(L, "Invalid bson block (%I:%I)", (lua_Integer)avail, (lua_Integer)len);
	return (size_t)len;
}

/* A zero-terminated string: its size with the zero. */
static size_t
cstring_size(lua_State *L, const uint8_t *p, size_t avail) {
	const uint8_t *zero = memchr(p, 0, avail);
	if (zero == NULL)
		luaL_error(L, "Invalid bson block : cstring");
	return (size_t)(zero - p) + 1;
}

/* An i32 length (counting the final zero), then the bytes. */
static size_t
string_size(lua_State *L, const uint8_t *p, size_t avail) {
	need(L, avail, 4);
	int32_t len = get_i32(p);
	if (len <= 0)
		luaL_error(L, "Invalid bson string , length = %d", (int)len);
	return need(L, avail, 4 + (size_t)len);
}

static size_t
payload_size(lua_State *L, int type, const uint8_t *p, size_t avail) {
	switch (type) {
	case BSON_REAL:
	case BSON_DATE:
	case BSON_TIMESTAMP:
	case BSON_INT64:
		return need(L, avail, 8);
	case BSON_INT32:
		return need(L, avail, 4);
	case BSON_BOOLEAN:
		return need(L, avail, 1);
	case BSON_OBJECTID:
		return need(L, avail, BSON_OBJECTID_SIZE);
	case BSON_NULL:
	case BSON_MINKEY:
	case BSON_MAXKEY:
		return 0;
	case BSON_STRING:
	case BSON_JSCODE:
	case BSON_SYMBOL:
		return string_size(L, p, avail);
	case BSON_DBPOINTER: {
		size_t s = string_size(L, p, avail);
		return s + need(L, avail - s, BSON_OBJECTID_SIZE);
	}
	case BSON_DOCUMENT:
	case BSON_ARRAY:
	case BSON_CODEWS:
		return block_size(L, p, avail);
	case BSON_BINARY: {
		need(L, avail, 5);
		int32_t len = get_i32(p);
		if (len < 0)
			luaL_error(L, "Invalid bson block (%I:%I)", (lua_Integer)avail, (lua_Integer)len);
		return need(L, avail, 5 + (size_t)len);
	}
	case BSON_REGEX: {
		size_t pattern = cstring_size(L, p, avail);
		return pattern + cstring_size(L, p + pattern, avail - pattern);
	}
	default:
		return (size_t)luaL_error(L, "Invalid bson type : %d", type);
	}
}

/* Decoder. */

static void decode_document(lua_State *L, const uint8_t *p, size_t avail, bool array, int depth);

/* An array key "n" becomes n + 1 (tonumber, so "1.5" gives 2.5). */
static void
push_array_key(lua_State *L, const char *key) {
	if (lua_stringtonumber(L, key) == 0)
		luaL_error(L, "Invalid bson array key : %s", key);
	if (lua_isinteger(L, -1)) {
		lua_Integer k = lua_tointeger(L, -1);
		lua_pop(L, 1);
		lua_pushinteger(L, (lua_Integer)((lua_Unsigned)k + 1));
	} else {
		lua_Number k = lua_tonumber(L, -1);
		lua_pop(L, 1);
		lua_pushnumber(L, k + 1);
	}
}

/* Pushes the value of a payload whose size payload_size has checked. */
static void
push_value(lua_State *L, int type, const uint8_t *p, size_t size, int depth) {
	switch (type) {
	case BSON_REAL: {
		uint64_t bits = get_u64(p);
		double d;
		memcpy(&d, &bits, sizeof(d));
		lua_pushnumber(L, d);
		break;
	}
	case BSON_STRING:
		lua_pushlstring(L, (const char *)p + 4, size - 5);
		break;
	case BSON_DOCUMENT:
		decode_document(L, p, size, false, depth + 1);
		break;
	case BSON_ARRAY:
		decode_document(L, p, size, true, depth + 1);
		break;
	case BSON_BOOLEAN:
		lua_pushboolean(L, p[0] != 0);
		break;
	case BSON_INT32:
		lua_pushinteger(L, get_i32(p));
		break;
	case BSON_INT64:
		lua_pushinteger(L, (lua_Integer)get_u64(p));
		break;
	case BSON_DATE: {
		int64_t ms = (int64_t)get_u64(p);
		uint8_t sec[4];
		put_u32(sec, (uint32_t)(ms / 1000));
		push_tagged(L, type, sec, 4);
		break;
	}
	case BSON_BINARY: // subtype and data; the length is the string's
		push_tagged(L, type, p + 4, size - 4);
		break;
	default: // null, min/max keys, object id, regex, timestamp, legacy types
		push_tagged(L, type, p, size);
		break;
	}
}

/* Pushes a table with the elements of the document at p (at most avail bytes). */
static void
decode_document(lua_State *L, const uint8_t *p, size_t avail, bool array, int depth) {
	if (depth > BSON_MAX_DEPTH)
		luaL_error(L, "Too depth while decoding bson");
	luaL_checkstack(L, 8, NULL);
	size_t len = block_size(L, p, avail);
	if (p[len - 1] != 0)
		luaL_error(L, "Invalid document end");
	lua_newtable(L);
	size_t pos = 4;
	size_t end = len - 1;
	while (pos < end) {
		int type = p[pos++];
		if (type == 0)
			luaL_error(L, "Invalid document end");
		const char *key = (const char *)p + pos;
		size_t key_size = cstring_size(L, p + pos, end - pos);
		pos += key_size;
		size_t size = payload_size(L, type, p + pos, end - pos);
		if (array)
			push_array_key(L, key);
		else
			lua_pushlstring(L, key, key_size - 1);
		push_value(L, type, p + pos, size, depth);
		lua_rawset(L, -3);
		pos += size;
	}
}

/* bson.decode(doc): doc is a bson userdata or a pointer to a document. */
static int
ldecode(lua_State *L) {
	const uint8_t *p = lua_touserdata(L, 1);
	size_t avail;
	switch (lua_type(L, 1)) {
	case LUA_TUSERDATA:
		avail = lua_rawlen(L, 1);
		break;
	case LUA_TLIGHTUSERDATA:
		if (p == NULL)
			return luaL_error(L, "Invalid bson block (0:4)");
		avail = get_i32(p) < 0 ? 0 : (size_t)get_i32(p);
		break;
	default:
		return 0;
	}
	lua_settop(L, 1);
	decode_document(L, p, avail, false, 1);
	return 1;
}

/* Encoder. */

struct bson_writer {
	lua_State *L; // borrowed: the encoding state
	uint8_t *ptr; // borrowed: inline_buf or the userdata in slot box
	size_t size;  // bytes written
	size_t cap;   // bytes available at ptr
	int box;      // stack slot reserved for the heap buffer
	uint8_t inline_buf[BSON_INLINE_BYTES];
};

static void
writer_init(struct bson_writer *w, lua_State *L) {
	w->L = L;
	w->ptr = w->inline_buf;
	w->size = 0;
	w->cap = sizeof(w->inline_buf);
	lua_pushnil(L);
	w->box = lua_gettop(L);
}

/* Room for n more bytes; returns where they go. */
static uint8_t *
reserve(struct bson_writer *w, size_t n) {
	if (n > BSON_MAX_SIZE - w->size)
		luaL_error(w->L, "Too large bson document");
	if (w->size + n > w->cap) {
		size_t cap = w->cap;
		while (cap < w->size + n)
			cap *= 2;
		luaL_checkstack(w->L, 1, NULL);
		uint8_t *ptr = lua_newuserdatauv(w->L, cap, 0);
		memcpy(ptr, w->ptr, w->size);
		lua_replace(w->L, w->box);
		w->ptr = ptr;
		w->cap = cap;
	}
	return w->ptr + w->size;
}

static void
append(struct bson_writer *w, const void *bytes, size_t len) {
	memcpy(reserve(w, len), bytes, len);
	w->size += len;
}

static void
append_u32(struct bson_writer *w, uint32_t v) {
	put_u32(reserve(w, 4), v);
	w->size += 4;
}

static void
append_u64(struct bson_writer *w, uint64_t v) {
	put_u64(reserve(w, 8), v);
	w->size += 8;
}

/* Element header: type, key, zero. */
static void
append_key(struct bson_writer *w, int type, const char *key, size_t len) {
	uint8_t *p = reserve(w, len + 2);
	p[0] = (uint8_t)type;
	memcpy(p + 1, key, len);
	p[len + 1] = 0;
	w->size += len + 2;
}

/* Reserves the length of a document and returns where it starts. */
static size_t
begin_document(struct bson_writer *w) {
	size_t start = w->size;
	append_u32(w, 0);
	return start;
}

static void
end_document(struct bson_writer *w, size_t start) {
	uint8_t zero = 0;
	append(w, &zero, 1);
	put_u32(w->ptr + start, (uint32_t)(w->size - start));
}

static void
check_key(lua_State *L, const char *key, size_t len) {
	if (memchr(key, 0, len) != NULL)
		luaL_error(L, "Bson key can't contain a zero byte");
	if (!is_utf8((const uint8_t *)key, len))
		luaL_error(L, "Invalid utf8 string");
}

static void write_value(struct bson_writer *w, const char *key, size_t klen, int idx, int depth);

static void
write_number(struct bson_writer *w, const char *key, size_t klen, int idx) {
	lua_State *L = w->L;
	if (lua_isinteger(L, idx)) {
		lua_Integer v = lua_tointeger(L, idx);
		if (v >= INT32_MIN && v <= INT32_MAX) {
			append_key(w, BSON_INT32, key, klen);
			append_u32(w, (uint32_t)v);
		} else {
			append_key(w, BSON_INT64, key, klen);
			append_u64(w, (uint64_t)v);
		}
	} else {
		double d = (double)lua_tonumber(L, idx);
		uint64_t bits;
		memcpy(&bits, &d, sizeof(bits));
		append_key(w, BSON_REAL, key, klen);
		append_u64(w, bits);
	}
}

/* A regex payload is exactly pattern, zero, options, zero; both UTF-8. */
static void
check_regex(lua_State *L, const uint8_t *p, size_t len) {
	const uint8_t *zero = memchr(p, 0, len);
	if (zero == NULL)
		luaL_error(L, "Invalid regex");
	size_t pattern = (size_t)(zero - p);
	const uint8_t *options = zero + 1;
	size_t rest = len - pattern - 1;
	zero = memchr(options, 0, rest);
	if (zero == NULL || (size_t)(zero - options) + 1 != rest)
		luaL_error(L, "Invalid regex");
	if (!is_utf8(p, pattern) || !is_utf8(options, rest - 1))
		luaL_error(L, "Invalid utf8 string");
}

/* A tagged string s (len >= 2, s[0] == 0) as the element key. */
static void
write_tagged(struct bson_writer *w, const char *key, size_t klen, const uint8_t *s, size_t len) {
	lua_State *L = w->L;
	int type = s[1];
	const uint8_t *payload = s + 2;
	size_t plen = len - 2;
	switch (type) {
	case BSON_NULL:
	case BSON_MINKEY:
	case BSON_MAXKEY:
		append_key(w, type, key, klen);
		break;
	case BSON_BINARY:
		if (plen < 1)
			luaL_error(L, "Invalid binary");
		append_key(w, type, key, klen);
		append_u32(w, (uint32_t)(plen - 1));
		append(w, payload, plen);
		break;
	case BSON_OBJECTID:
		if (plen != BSON_OBJECTID_SIZE)
			error_with_bytes(L, "Invalid object id ", payload, plen);
		append_key(w, type, key, klen);
		append(w, payload, plen);
		break;
	case BSON_DATE:
		if (plen != 4)
			luaL_error(L, "Invalid date");
		append_key(w, type, key, klen);
		append_u64(w, (uint64_t)get_u32(payload) * 1000);
		break;
	case BSON_TIMESTAMP:
	case BSON_INT64:
		if (plen != 8)
			luaL_error(L, type == BSON_INT64 ? "Invalid int64" : "Invalid timestamp");
		append_key(w, type, key, klen);
		append(w, payload, plen);
		break;
	case BSON_REGEX:
		check_regex(L, payload, plen);
		append_key(w, type, key, klen);
		append(w, payload, plen);
		break;
	case BSON_JSCODE:
	case BSON_SYMBOL:
	case BSON_DBPOINTER:
	case BSON_CODEWS: {
		/* Copied as decoded, once it is checked to be one whole value. */
		size_t size = payload_size(L, type, payload, plen);
		if (size != plen)
			luaL_error(L, "Invalid bson value of type %d (%I:%I)", type, (lua_Integer)plen,
			           (lua_Integer)size);
		append_key(w, type, key, klen);
		append(w, payload, plen);
		break;
	}
	default:
		luaL_error(L, "Invalid subtype %d", type);
	}
}

static void
write_string(struct bson_writer *w, const char *key, size_t klen, int idx) {
	size_t len;
	const uint8_t *s = (const uint8_t *)lua_tolstring(w->L, idx, &len);
	if (len >= 2 && s[0] == 0) {
		write_tagged(w, key, klen, s, len);
		return;
	}
	if (!is_utf8(s, len))
		luaL_error(w->L, "Invalid utf8 string");
	append_key(w, BSON_STRING, key, klen);
	append_u32(w, (uint32_t)(len + 1));
	uint8_t *p = reserve(w, len + 1);
	memcpy(p, s, len);
	p[len] = 0;
	w->size += len + 1;
}

/* A full userdata or a pointer holding an encoded document: its bytes, copied. */
static void
write_embedded(struct bson_writer *w, const char *key, size_t klen, int idx) {
	lua_State *L = w->L;
	const uint8_t *p = lua_touserdata(L, idx);
	if (p == NULL)
		luaL_error(L, "Invalid bson block (0:4)");
	size_t len;
	if (lua_type(L, idx) == LUA_TUSERDATA) {
		len = block_size(L, p, lua_rawlen(L, idx));
	} else {
		int32_t claimed = get_i32(p);
		len = block_size(L, p, claimed < 0 ? 0 : (size_t)claimed);
	}
	if (p[len - 1] != 0)
		luaL_error(L, "Invalid document end");
	append_key(w, BSON_DOCUMENT, key, klen);
	append(w, p, len);
}

/*
 * Writes the pair at stack slots kidx, vidx of a document. The key must be a
 * string; with number_keys (pairs from __pairs) a number key is written in
 * its string form, converted on a copy: the key itself is the iterator's next
 * control value.
 */
static void
write_pair(struct bson_writer *w, int kidx, int vidx, int depth, bool number_keys) {
	lua_State *L = w->L;
	switch (lua_type(L, kidx)) {
	case LUA_TSTRING: {
		size_t klen;
		const char *key = lua_tolstring(L, kidx, &klen);
		check_key(L, key, klen);
		write_value(w, key, klen, vidx, depth);
		break;
	}
	case LUA_TNUMBER: {
		if (!number_keys)
			luaL_error(L, "Bson dictionary's key can't be number");
		lua_pushvalue(L, kidx);
		size_t klen;
		const char *key = lua_tolstring(L, -1, &klen);
		write_value(w, key, klen, vidx, depth);
		lua_pop(L, 1);
		break;
	}
	default:
		luaL_error(L, "Invalid key type : %s", luaL_typename(L, kidx));
	}
}

/* The table at idx as the elements of a document, from __pairs or next. */
static void
write_document(struct bson_writer *w, int idx, int depth) {
	lua_State *L = w->L;
	luaL_checkstack(L, 10, NULL);
	size_t start = begin_document(w);
	if (luaL_getmetafield(L, idx, "__pairs") != LUA_TNIL) {
		lua_pushvalue(L, idx);
		lua_call(L, 1, 3); // iterator, state, control
		int base = lua_gettop(L) - 2;
		for (;;) {
			lua_pushvalue(L, base);
			lua_pushvalue(L, base + 1);
			lua_pushvalue(L, base + 2);
			lua_call(L, 2, 2);
			if (lua_isnil(L, -2)) {
				lua_pop(L, 2);
				break;
			}
			write_pair(w, base + 3, base + 4, depth, true);
			lua_pop(L, 1);
			lua_replace(L, base + 2); // the key is the next control value
		}
		lua_pop(L, 3);
	} else {
		lua_pushnil(L);
		while (lua_next(L, idx) != 0) {
			int top = lua_gettop(L);
			write_pair(w, top - 1, top, depth, false);
			lua_pop(L, 1);
		}
	}
	end_document(w, start);
}

/* Elements 1..n of the table at idx (ordinary indexing), keyed "0", "1", ... */
static void
write_array(struct bson_writer *w, int idx, lua_Integer n, int depth) {
	lua_State *L = w->L;
	luaL_checkstack(L, 4, NULL);
	size_t start = begin_document(w);
	for (lua_Integer i = 0; i < n; i++) {
		char key[24];
		int klen = snprintf(key, sizeof(key), "%lld", (long long)i);
		lua_geti(L, idx, i + 1);
		write_value(w, key, (size_t)klen, lua_gettop(L), depth);
		lua_pop(L, 1);
	}
	end_document(w, start);
}

/* Whether the table at idx encodes as an array, and then its length. */
static bool
array_length(lua_State *L, int idx, lua_Integer *n) {
	if (luaL_getmetafield(L, idx, "__len") != LUA_TNIL) {
		lua_pushvalue(L, idx);
		lua_call(L, 1, 1);
		if (!lua_isinteger(L, -1))
			luaL_error(L, "__len should return integer");
		*n = lua_tointeger(L, -1);
		lua_pop(L, 1);
		return true;
	}
	if (luaL_getmetafield(L, idx, "__pairs") != LUA_TNIL) {
		lua_pop(L, 1);
		return false;
	}
	lua_pushnil(L);
	if (lua_next(L, idx) == 0)
		return false;
	bool array = false;
	if (lua_isinteger(L, -2)) {
		lua_Integer first = lua_tointeger(L, -2);
		lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
		if (first == 1 || (first > 1 && first <= len)) {
			array = true;
			*n = len;
		}
	}
	lua_pop(L, 2);
	return array;
}

/* A table nested at depth (the top-level document is at depth 1). */
static void
write_table(struct bson_writer *w, const char *key, size_t klen, int idx, int depth) {
	lua_State *L = w->L;
	if (depth > BSON_MAX_DEPTH)
		luaL_error(L, "Too depth while encoding bson");
	luaL_checkstack(L, 4, NULL);
	lua_Integer n;
	if (array_length(L, idx, &n)) {
		append_key(w, BSON_ARRAY, key, klen);
		write_array(w, idx, n, depth);
	} else {
		append_key(w, BSON_DOCUMENT, key, klen);
		write_document(w, idx, depth);
	}
}

/* The value at stack slot idx as an element named key, inside a table at depth. */
static void
write_value(struct bson_writer *w, const char *key, size_t klen, int idx, int depth) {
	lua_State *L = w->L;
	switch (lua_type(L, idx)) {
	case LUA_TNUMBER:
		write_number(w, key, klen, idx);
		break;
	case LUA_TBOOLEAN: {
		uint8_t b = (uint8_t)lua_toboolean(L, idx);
		append_key(w, BSON_BOOLEAN, key, klen);
		append(w, &b, 1);
		break;
	}
	case LUA_TSTRING:
		write_string(w, key, klen, idx);
		break;
	case LUA_TTABLE:
		write_table(w, key, klen, idx, depth + 1);
		break;
	case LUA_TUSERDATA:
	case LUA_TLIGHTUSERDATA:
		write_embedded(w, key, klen, idx);
		break;
	case LUA_TNIL:
		luaL_error(L, "Bson array has a hole (nil), Use bson.null instead");
		break;
	default:
		luaL_error(L, "Invalid value type : %s", luaL_typename(L, idx));
	}
}

/* Pushes the encoded document as a bson userdata. */
static int
writer_result(struct bson_writer *w) {
	uint8_t *doc = lua_newuserdatauv(w->L, w->size, 1);
	memcpy(doc, w->ptr, w->size);
	luaL_setmetatable(w->L, "bson");
	return 1;
}

/* bson.encode(t) */
static int
lencode(lua_State *L) {
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	struct bson_writer w;
	writer_init(&w, L);
	write_document(&w, 1, 1);
	return writer_result(&w);
}

/* bson.encode_order(k1, v1, k2, v2, ...) */
static int
lencode_order(lua_State *L) {
	int n = lua_gettop(L);
	if (n % 2 != 0)
		return luaL_error(L, "Invalid ordered dict");
	luaL_checkstack(L, 8, NULL);
	struct bson_writer w;
	writer_init(&w, L);
	size_t start = begin_document(&w);
	for (int i = 1; i <= n; i += 2) {
		int type = lua_type(L, i);
		if (type != LUA_TSTRING && type != LUA_TNUMBER)
			return luaL_error(L, "Argument %d need a string", i);
		size_t klen;
		const char *key = lua_tolstring(L, i, &klen); // a number becomes its string form
		check_key(L, key, klen);
		write_value(&w, key, klen, i + 1, 1);
	}
	end_document(&w, start);
	return writer_result(&w);
}

/* In-place update. */

/* Size of the payload of the element types makeindex records; 0 for others. */
static size_t
fixed_size(int type) {
	switch (type) {
	case BSON_REAL:
	case BSON_DATE:
	case BSON_TIMESTAMP:
	case BSON_INT64:
		return 8;
	case BSON_INT32:
		return 4;
	case BSON_BOOLEAN:
		return 1;
	case BSON_OBJECTID:
		return BSON_OBJECTID_SIZE;
	default:
		return 0;
	}
}

/* doc:makeindex(): records where the top-level fixed-size payloads are. */
static int
lmakeindex(lua_State *L) {
	const uint8_t *p = luaL_checkudata(L, 1, "bson");
	lua_settop(L, 1);
	size_t len = block_size(L, p, lua_rawlen(L, 1));
	if (p[len - 1] != 0)
		luaL_error(L, "Invalid document end");
	lua_newtable(L);
	size_t pos = 4;
	size_t end = len - 1;
	while (pos < end) {
		int type = p[pos++];
		if (type == 0)
			luaL_error(L, "Invalid document end");
		const char *key = (const char *)p + pos;
		size_t key_size = cstring_size(L, p + pos, end - pos);
		pos += key_size;
		size_t size = payload_size(L, type, p + pos, end - pos);
		if (fixed_size(type) != 0) {
			lua_pushlstring(L, key, key_size - 1);
			lua_pushinteger(L, (lua_Integer)pos << 8 | type);
			lua_rawset(L, -3);
		}
		pos += size;
	}
	lua_setiuservalue(L, 1, 1);
	return 1;
}

/* The tagged string at idx, of the given type: its payload. */
static const uint8_t *
tagged_payload(lua_State *L, int idx, int type, size_t *plen) {
	size_t len = 0;
	const uint8_t *s = NULL;
	if (lua_type(L, idx) == LUA_TSTRING) // lua_tolstring would turn a number into a string
		s = (const uint8_t *)lua_tolstring(L, idx, &len);
	if (len < 2 || s[0] != 0 || s[1] != type)
		luaL_error(L, "Type mismatch, need bson type %d", type);
	*plen = len - 2;
	return s + 2;
}

/* Raises "<value> what"; the value's text may hold zero bytes. */
static int
raise_value_error(lua_State *L, int idx, const char *what) {
	luaL_where(L, 1);
	luaL_tolstring(L, idx, NULL);
	lua_pushstring(L, what);
	lua_concat(L, 3);
	return lua_error(L);
}

/* doc[key] = v: rewrites the payload of a recorded element, keeping its type. */
static int
lnewindex(lua_State *L) {
	uint8_t *doc = luaL_checkudata(L, 1, "bson");
	size_t doc_size = lua_rawlen(L, 1);
	lua_settop(L, 3);
	if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE)
		return luaL_error(L, "call makeindex first");
	lua_pushvalue(L, 2);
	lua_rawget(L, -2);
	if (!lua_isinteger(L, -1)) {
		size_t klen;
		const char *key = luaL_tolstring(L, 2, &klen);
		return error_with_bytes(L, "Can't replace key : ", key, klen);
	}
	lua_Integer entry = lua_tointeger(L, -1);
	int type = (int)(entry & 0xff);
	size_t off = (size_t)(entry >> 8);
	size_t size = fixed_size(type);
	if (size == 0 || off > doc_size || doc_size - off < size)
		return luaL_error(L, "Can't replace type %d", type);
	uint8_t *p = doc + off;
	switch (type) {
	case BSON_REAL: {
		double d = (double)luaL_checknumber(L, 3);
		uint64_t bits;
		memcpy(&bits, &d, sizeof(bits));
		put_u64(p, bits);
		break;
	}
	case BSON_BOOLEAN:
		p[0] = (uint8_t)lua_toboolean(L, 3);
		break;
	case BSON_INT32: {
		lua_Integer v = lua_tointeger(L, 3);
		if (!lua_isinteger(L, 3) || v < INT32_MIN || v > INT32_MAX)
			return raise_value_error(L, 3, " must be a 32bit integer ");
		put_u32(p, (uint32_t)v);
		break;
	}
	case BSON_INT64:
		if (!lua_isinteger(L, 3))
			return raise_value_error(L, 3, " must be a 64bit integer ");
		put_u64(p, (uint64_t)lua_tointeger(L, 3));
		break;
	default: { // object id, date, timestamp: from a tagged string of the same type
		size_t plen;
		const uint8_t *payload = tagged_payload(L, 3, type, &plen);
		if (type == BSON_OBJECTID) {
			if (plen != BSON_OBJECTID_SIZE)
				return luaL_error(L, "Invalid object id");
			memcpy(p, payload, plen);
		} else if (type == BSON_DATE) {
			if (plen != 4)
				return luaL_error(L, "Invalid date");
			put_u64(p, (uint64_t)get_u32(payload) * 1000);
		} else {
			if (plen != 8)
				return luaL_error(L, "Invalid timestamp");
			memcpy(p, payload, plen);
		}
		break;
	}
	}
	return 0;
}

static int
llen(lua_State *L) {
	luaL_checkudata(L, 1, "bson");
	lua_pushinteger(L, (lua_Integer)lua_rawlen(L, 1));
	return 1;
}

static int
ltostring(lua_State *L) {
	const char *doc = luaL_checkudata(L, 1, "bson");
	lua_pushlstring(L, doc, lua_rawlen(L, 1));
	return 1;
}

/* Constructors. */

static int
ldate(lua_State *L) {
	uint8_t payload[4];
	put_u32(payload, (uint32_t)luaL_checkinteger(L, 1));
	push_tagged(L, BSON_DATE, payload, sizeof(payload));
	return 1;
}

/*
 * bson.timestamp(sec[, inc]): with one argument the increment is 0; with an
 * explicit nil it comes from a process-wide counter (0, 1, 2, ...).
 */
static int
ltimestamp(lua_State *L) {
	uint32_t sec = (uint32_t)luaL_checkinteger(L, 1);
	uint32_t inc;
	if (lua_gettop(L) < 2)
		inc = 0;
	else if (lua_isnil(L, 2))
		inc = ATOM_FINC(&TS_COUNTER);
	else
		inc = (uint32_t)luaL_checkinteger(L, 2);
	uint8_t payload[8];
	put_u32(payload, inc);
	put_u32(payload + 4, sec);
	push_tagged(L, BSON_TIMESTAMP, payload, sizeof(payload));
	return 1;
}

static int
lregex(lua_State *L) {
	size_t plen, olen;
	const char *pattern = luaL_checklstring(L, 1, &plen);
	const char *options = luaL_optlstring(L, 2, "", &olen);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addchar(&b, 0);
	luaL_addchar(&b, BSON_REGEX);
	luaL_addlstring(&b, pattern, plen);
	luaL_addchar(&b, 0);
	luaL_addlstring(&b, options, olen);
	luaL_addchar(&b, 0);
	luaL_pushresult(&b);
	return 1;
}

static int
lbinary(lua_State *L) {
	size_t len;
	const char *data = luaL_checklstring(L, 1, &len);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addchar(&b, 0);
	luaL_addchar(&b, BSON_BINARY);
	luaL_addchar(&b, 0); // subtype: generic binary
	luaL_addlstring(&b, data, len);
	luaL_pushresult(&b);
	return 1;
}

static int
lint64(lua_State *L) {
	uint8_t payload[8];
	put_u64(payload, (uint64_t)luaL_checkinteger(L, 1));
	push_tagged(L, BSON_INT64, payload, sizeof(payload));
	return 1;
}

/* Digit value of an object id character: 0-9, then a-z / A-Z as 10-35, else 0. */
static int
hex_digit(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 0;
}

static uint32_t
hash_bytes(const char *s) {
	uint32_t h = 2166136261u; // FNV-1a
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static void
objectid_init(void) {
	if (ATOM_LOAD(&OID_READY) || !ATOM_CAS(&OID_READY, 0, 1))
		return;
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = 0;
	host[sizeof(host) - 1] = 0;
	uint32_t h = hash_bytes(host);
	ATOM_STORE(&OID_HOST, h & 0xffffff);
	/* Added, not stored: a counter another state already took stays unique. */
	ATOM_FADD(&OID_COUNTER, h ^ (uint32_t)time(NULL) ^ (uint32_t)getpid() * 2654435761u);
}

static void
objectid_new(uint8_t id[BSON_OBJECTID_SIZE]) {
	uint32_t now = (uint32_t)time(NULL);
	uint32_t host = ATOM_LOAD(&OID_HOST);
	uint32_t pid = (uint32_t)getpid();
	uint32_t n = ATOM_FINC(&OID_COUNTER);
	id[0] = (uint8_t)(now >> 24);
	id[1] = (uint8_t)(now >> 16);
	id[2] = (uint8_t)(now >> 8);
	id[3] = (uint8_t)now;
	id[4] = (uint8_t)host;
	id[5] = (uint8_t)(host >> 8);
	id[6] = (uint8_t)(host >> 16);
	id[7] = (uint8_t)pid;
	id[8] = (uint8_t)(pid >> 8);
	id[9] = (uint8_t)(n >> 16);
	id[10] = (uint8_t)(n >> 8);
	id[11] = (uint8_t)n;
}

/* bson.objectid([hex24]): from 24 characters, or a new id. */
static int
lobjectid(lua_State *L) {
	uint8_t id[BSON_OBJECTID_SIZE];
	if (lua_isstring(L, 1)) {
		size_t len;
		const char *s = lua_tolstring(L, 1, &len);
		if (len != 2 * BSON_OBJECTID_SIZE)
			return error_with_bytes(L, "Invalid objectid ", s, len);
		for (int i = 0; i < BSON_OBJECTID_SIZE; i++)
			id[i] = (uint8_t)(hex_digit(s[2 * i]) << 4 | hex_digit(s[2 * i + 1]));
	} else {
		objectid_new(id);
	}
	push_tagged(L, BSON_OBJECTID, id, sizeof(id));
	return 1;
}

/* bson.to_lightuserdata(v): a pointer to the bytes of a userdata or a string. */
static int
lto_lightuserdata(lua_State *L) {
	switch (lua_type(L, 1)) {
	case LUA_TUSERDATA:
	case LUA_TLIGHTUSERDATA:
		lua_pushlightuserdata(L, lua_touserdata(L, 1));
		return 1;
	case LUA_TSTRING:
		lua_pushlightuserdata(L, (void *)lua_tostring(L, 1));
		return 1;
	default:
		return luaL_typeerror(L, 1, "userdata or string");
	}
}

/* bson.type(v) for a tagged string (len >= 2, s[0] == 0). */
static int
type_tagged(lua_State *L, const uint8_t *s, size_t len) {
	int type = s[1];
	const uint8_t *p = s + 2;
	size_t plen = len - 2;
	switch (type) {
	case BSON_NULL:
		lua_pushliteral(L, "nil");
		return 1;
	case BSON_MINKEY:
		lua_pushliteral(L, "minkey");
		return 1;
	case BSON_MAXKEY:
		lua_pushliteral(L, "maxkey");
		return 1;
	case BSON_BINARY:
		if (plen < 1)
			return luaL_error(L, "Invalid binary");
		lua_pushliteral(L, "binary");
		lua_pushlstring(L, (const char *)p + 1, plen - 1);
		lua_pushinteger(L, p[0]);
		return 3;
	case BSON_OBJECTID: {
		if (plen != BSON_OBJECTID_SIZE)
			return error_with_bytes(L, "Invalid object id ", p, plen);
		char hex[2 * BSON_OBJECTID_SIZE];
		for (int i = 0; i < BSON_OBJECTID_SIZE; i++) {
			hex[2 * i] = "0123456789abcdef"[p[i] >> 4];
			hex[2 * i + 1] = "0123456789abcdef"[p[i] & 15];
		}
		lua_pushliteral(L, "objectid");
		lua_pushlstring(L, hex, sizeof(hex));
		return 2;
	}
	case BSON_DATE:
		if (plen != 4)
			return luaL_error(L, "Invalid date");
		lua_pushliteral(L, "date");
		lua_pushinteger(L, get_i32(p));
		return 2;
	case BSON_TIMESTAMP:
		if (plen != 8)
			return luaL_error(L, "Invalid timestamp");
		lua_pushliteral(L, "timestamp");
		lua_pushinteger(L, get_u32(p + 4));
		lua_pushinteger(L, get_u32(p));
		return 3;
	case BSON_REGEX: {
		const uint8_t *zero = memchr(p, 0, plen);
		if (zero == NULL)
			return luaL_error(L, "Invalid regex");
		const char *options = (const char *)zero + 1;
		size_t olen = plen - (size_t)(zero - p) - 1;
		const char *end = memchr(options, 0, olen);
		lua_pushliteral(L, "regex");
		lua_pushlstring(L, (const char *)p, (size_t)(zero - p));
		lua_pushlstring(L, options, end ? (size_t)(end - options) : olen);
		return 3;
	}
	case BSON_INT64:
		if (plen != 8)
			return luaL_error(L, "Invalid int64");
		lua_pushliteral(L, "int64");
		lua_pushinteger(L, (lua_Integer)get_u64(p));
		return 2;
	case BSON_JSCODE:
	case BSON_SYMBOL:
	case BSON_DBPOINTER:
	case BSON_CODEWS:
		lua_pushliteral(L, "unsupported");
		lua_pushlstring(L, (const char *)p, plen);
		return 2;
	default:
		return luaL_error(L, "Invalid subtype %d", type);
	}
}

/* bson.type(v): a type name and, for some types, their values. */
static int
ltype(lua_State *L) {
	switch (lua_type(L, 1)) {
	case LUA_TNONE:
	case LUA_TNIL:
		lua_pushliteral(L, "nil");
		return 1;
	case LUA_TSTRING: {
		size_t len;
		const uint8_t *s = (const uint8_t *)lua_tolstring(L, 1, &len);
		if (len >= 2 && s[0] == 0)
			return type_tagged(L, s, len);
		lua_pushliteral(L, "string");
		lua_pushvalue(L, 1);
		return 2;
	}
	case LUA_TNUMBER:
	case LUA_TBOOLEAN:
	case LUA_TTABLE:
		lua_pushstring(L, luaL_typename(L, 1));
		lua_pushvalue(L, 1);
		return 2;
	default:
		return luaL_error(L, "Invalid type %s", luaL_typename(L, 1));
	}
}

static void
push_constant(lua_State *L, const char *name, int type) {
	push_tagged(L, type, "", 0);
	lua_setfield(L, -2, name);
}

int
luaopen_bson(lua_State *L) {
	luaL_checkversion(L);
	objectid_init();
	luaL_Reg lib[] = {
	    {"encode", lencode},       {"encode_order", lencode_order},
	    {"decode", ldecode},       {"date", ldate},
	    {"timestamp", ltimestamp}, {"regex", lregex},
	    {"binary", lbinary},       {"objectid", lobjectid},
	    {"int64", lint64},         {"to_lightuserdata", lto_lightuserdata},
	    {"type", ltype},           {NULL, NULL},
	};
	luaL_newlib(L, lib);
	push_constant(L, "null", BSON_NULL);
	push_constant(L, "minkey", BSON_MINKEY);
	push_constant(L, "maxkey", BSON_MAXKEY);
	if (luaL_newmetatable(L, "bson")) {
		luaL_Reg meta[] = {
		    {"__len", llen},
		    {"__tostring", ltostring},
		    {"__newindex", lnewindex},
		    {NULL, NULL},
		};
		luaL_setfuncs(L, meta, 0);
		luaL_Reg methods[] = {
		    {"decode", ldecode},
		    {"makeindex", lmakeindex},
		    {NULL, NULL},
		};
		luaL_newlib(L, methods);
		lua_setfield(L, -2, "__index");
	}
	lua_pop(L, 1);
	return 1;
}
