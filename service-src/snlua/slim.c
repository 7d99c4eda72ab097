/*
 * snlua's bytecode rewriter (slim bytecode).
 *
 * Loading a chunk with full debug information costs about four times as
 * much as without, and nearly all of that is the local and upvalue names
 * (one interned string each). For files whose path contains one of the
 * fragments in env `codecache_strip` (default "lualib/": the framework's own
 * libraries) the cached dump keeps line numbers but drops those names, so
 * every later service loads them about 4x faster and holds less memory;
 * tracebacks keep file:line, and only error messages about the framework's
 * own locals lose the variable name. The rewrite walks the Lua 5.4 dump
 * format (ldump.c); any surprise leaves the dump unchanged.
 *
 * The dump format is private to Lua and may change in any release, so the
 * rewriter first checks that the header is byte for byte the one it was
 * written for: signature "\x1bLua", version 0x54, format 0, the LUAC_DATA
 * bytes, sizes 4 (Instruction), 8 (lua_Integer) and 8 (lua_Number), then
 * the check values 0x5678 (as an 8-byte integer) and 370.5 (as an 8-byte
 * float) in this machine's byte order. Anything else is refused, and the
 * code cache keeps the dump as Lua wrote it.
 *
 * Data: struct slim, a cursor over the input [p, end) and the output buffer.
 * Invariants: p never passes end (every read checks the bytes left first);
 * once bad is set it stays set, nothing more is read, and the output is
 * thrown away. Nesting is bounded (SLIM_MAX_DEPTH) so a hostile dump cannot
 * exhaust the C stack. Locking: none; the functions touch only their
 * arguments. Units: bytes.
 */
#include "slim.h"

#include "skynet.h"

#include <stdint.h>
#include <string.h>

#define SLIM_MAX_DEPTH     200 // nested function prototypes
#define SLIM_CHECKED_BYTES 15  // signature 4, version, format, LUAC_DATA 6, three sizes
#define SLIM_HEADER_BYTES  (SLIM_CHECKED_BYTES + 8 + 8) // then LUAC_INT, LUAC_NUM
#define SLIM_INT_BYTES     8
#define SLIM_NUM_BYTES     8
#define SLIM_LUAC_INT      0x5678
#define SLIM_LUAC_NUM      370.5

/* Constant tags as ldump.c writes them (type | variant << 4). */
#define SLIM_TAG_NIL   0
#define SLIM_TAG_FALSE 1
#define SLIM_TAG_TRUE  17
#define SLIM_TAG_INT   3
#define SLIM_TAG_FLOAT 19
#define SLIM_TAG_SHORT 4
#define SLIM_TAG_LONG  20

/* The header bytes that are the same on every machine (no terminating NUL). */
static const char SLIM_HEADER[SLIM_CHECKED_BYTES] = "\x1bLua"            // signature
                                                    "\x54"               // version 5.4
                                                    "\x00"               // format: the official one
                                                    "\x19\x93\r\n\x1a\n" // LUAC_DATA
                                                    "\x04"               // sizeof(Instruction)
                                                    "\x08"               // sizeof(lua_Integer)
                                                    "\x08";              // sizeof(lua_Number)

struct slim {
	const unsigned char *p; // next byte to read
	const unsigned char *end;
	struct snlua_dump *out;
	bool bad;
};

int
snlua_dump_write(lua_State *L, const void *p, size_t sz, void *ud) {
	struct snlua_dump *b = ud;
	if (b->len + sz > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + sz)
			cap *= 2;
		b->data = skynet_realloc(b->data, cap);
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, sz);
	b->len += sz;
	return 0;
}

static void
slim_copy(struct slim *s, size_t n) {
	if (s->bad || (size_t)(s->end - s->p) < n) {
		s->bad = true;
		return;
	}
	snlua_dump_write(NULL, s->p, n, s->out);
	s->p += n;
}

/* Copy n items of item_bytes each, refusing a count whose size overflows. */
static void
slim_copy_items(struct slim *s, size_t n, size_t item_bytes) {
	if (n > (size_t)(s->end - s->p) / item_bytes) {
		s->bad = true;
		return;
	}
	slim_copy(s, n * item_bytes);
}

/* A dumpSize varint (7 bits a byte, the last byte has 0x80); copied when copy. */
static size_t
slim_size(struct slim *s, bool copy) {
	const unsigned char *start = s->p;
	size_t x = 0;
	for (;;) {
		if (s->bad || s->p >= s->end || x > (SIZE_MAX >> 7)) {
			s->bad = true;
			return 0;
		}
		unsigned char b = *s->p++;
		x = (x << 7) | (b & 0x7f);
		if (b & 0x80)
			break;
	}
	if (copy)
		snlua_dump_write(NULL, start, s->p - start, s->out);
	return x;
}

static void
slim_string(struct slim *s, bool copy) {
	size_t n = slim_size(s, copy);
	if (n == 0)
		return; // NULL string
	if (copy) {
		slim_copy(s, n - 1);
	} else if ((size_t)(s->end - s->p) < n - 1) {
		s->bad = true;
	} else {
		s->p += n - 1;
	}
}

static void
slim_constants(struct slim *s) {
	size_t n = slim_size(s, true);
	for (size_t i = 0; i < n && !s->bad; i++) {
		unsigned char tag = s->p < s->end ? *s->p : 0xff;
		slim_copy(s, 1);
		if (tag == SLIM_TAG_INT)
			slim_copy(s, SLIM_INT_BYTES);
		else if (tag == SLIM_TAG_FLOAT)
			slim_copy(s, SLIM_NUM_BYTES);
		else if (tag == SLIM_TAG_SHORT || tag == SLIM_TAG_LONG)
			slim_string(s, true);
		else if (tag != SLIM_TAG_NIL && tag != SLIM_TAG_FALSE && tag != SLIM_TAG_TRUE)
			s->bad = true;
	}
}

static void
slim_function(struct slim *s, int depth) {
	if (depth > SLIM_MAX_DEPTH) {
		s->bad = true;
		return;
	}
	slim_string(s, true); // source
	slim_size(s, true);   // linedefined
	slim_size(s, true);   // lastlinedefined
	slim_copy(s, 3);      // numparams, is_vararg, maxstacksize
	size_t n = slim_size(s, true);
	slim_copy_items(s, n, 4); // code
	slim_constants(s);
	n = slim_size(s, true);
	slim_copy_items(s, n, 3); // upvalue descriptions
	n = slim_size(s, true);
	for (size_t i = 0; i < n && !s->bad; i++)
		slim_function(s, depth + 1);
	n = slim_size(s, true);
	slim_copy(s, n); // lineinfo
	n = slim_size(s, true);
	for (size_t i = 0; i < n && !s->bad; i++) {
		slim_size(s, true); // pc
		slim_size(s, true); // line
	}
	static const unsigned char none = 0x80; // a dumpSize of 0
	n = slim_size(s, false);
	for (size_t i = 0; i < n && !s->bad; i++) {
		slim_string(s, false); // local name
		slim_size(s, false);   // startpc
		slim_size(s, false);   // endpc
	}
	snlua_dump_write(NULL, &none, 1, s->out);
	n = slim_size(s, false);
	for (size_t i = 0; i < n && !s->bad; i++)
		slim_string(s, false); // upvalue name
	snlua_dump_write(NULL, &none, 1, s->out);
}

/* Whether the dump opens with exactly the header this rewriter knows. */
static bool
is_known_header(const struct snlua_dump *dump) {
	if (dump->len < SLIM_HEADER_BYTES)
		return false;
	const unsigned char *d = (const unsigned char *)dump->data;
	if (memcmp(d, SLIM_HEADER, SLIM_CHECKED_BYTES) != 0)
		return false;
	int64_t luac_int;
	double luac_num;
	memcpy(&luac_int, d + SLIM_CHECKED_BYTES, sizeof(luac_int));
	memcpy(&luac_num, d + SLIM_CHECKED_BYTES + SLIM_INT_BYTES, sizeof(luac_num));
	return luac_int == SLIM_LUAC_INT && luac_num == SLIM_LUAC_NUM;
}

bool
snlua_slim_dump(const struct snlua_dump *dump, struct snlua_dump *out) {
	if (!is_known_header(dump))
		return false;
	const unsigned char *d = (const unsigned char *)dump->data;
	struct slim s = {.p = d, .end = d + dump->len, .out = out, .bad = false};
	slim_copy(&s, SLIM_HEADER_BYTES);
	slim_copy(&s, 1); // upvalue count of the main closure
	slim_function(&s, 0);
	if (!s.bad && s.p == s.end)
		return true;
	skynet_free(out->data);
	*out = (struct snlua_dump){NULL, 0, 0};
	return false;
}

/* A lua_Reader that hands over one buffer, then the end. */
static const char *
dump_reader(lua_State *L, void *ud, size_t *size) {
	const struct snlua_dump **pd = ud;
	if (*pd == NULL) {
		*size = 0;
		return NULL;
	}
	*size = (*pd)->len;
	const char *data = (*pd)->data;
	*pd = NULL;
	return data;
}

bool
snlua_slim_apply(lua_State *L, const char *chunkname, struct snlua_dump *dump) {
	struct snlua_dump slim = {NULL, 0, 0};
	if (!snlua_slim_dump(dump, &slim))
		return false;
	// Prove it loads before trusting it.
	const struct snlua_dump *reading = &slim;
	bool ok = lua_load(L, dump_reader, &reading, chunkname, "b") == LUA_OK;
	lua_pop(L, 1);
	if (!ok) {
		skynet_free(slim.data);
		return false;
	}
	skynet_free(dump->data);
	*dump = slim;
	return true;
}
