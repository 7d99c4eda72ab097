/*
 * skynet.tracing.core: trace and span ids, and the node's ring of finished spans.
 *
 * Ids. A span id is splitmix64 of a process-wide counter plus a random seed
 * (getrandom, once): a bijection, so ids never repeat in a process, and two
 * processes draw from unrelated sequences. A trace id is two such values.
 *
 * The ring. One per process (this file's statics; skynet.so is loaded once):
 * RING.cap slots, RING.head counts the spans ever kept; span number n lives in
 * slot n % cap until span n + cap replaces it. Readers ask by number and skip
 * what was replaced. RING.lock (a mutex) covers every RING field; it is held
 * for the copy of one record. The ring is made on the first span kept, with
 * trace_spans slots (config; default SPAN_RING_DEFAULT).
 *
 * Lua API (require "skynet.tracing.core"):
 *   newtrace() -> 32 hex digits       newspan() -> 16 hex digits
 *   traceof(tag) -> 32 hex digits     the trace id of a tag (lua-span.h)
 *   find(trace_hex) -> { span... }    the spans of that trace still in the
 *       ring, oldest first: { trace, span, parent (nil: root), name, address,
 *       source, start_ns, end_ns, status = "ok" | "error" }
 *   drain(from, resource[, max]) -> text, next, lost    the spans numbered
 *       from `from` on (at most max of them), each as one line of OTLP JSON
 *       (an ExportTraceServiceRequest whose resource is the JSON object
 *       `resource`); `lost`: how many of them the ring had replaced already.
 *   head() -> next span number, ring slots (0 before the first span)
 */

#include "lua-span.h"
#include "skynet.h"
#include "skynet_cond.h"

#include <lauxlib.h>
#include <lua.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define SPAN_RING_DEFAULT 4096
#define SPAN_RING_MAX     (1 << 20)

/* ---- ids ---- */

static uint64_t SEED;
static pthread_once_t SEED_ONCE = PTHREAD_ONCE_INIT;
static ATOM_U64 COUNTER;

static void
seed_init(void) {
	uint64_t s = 0;
	if (getrandom(&s, sizeof(s), 0) != (ssize_t)sizeof(s)) // no entropy: time and address
		s = skynet_monotonic_ns() ^ (uint64_t)(uintptr_t)&s;
	SEED = s;
}

static uint64_t
splitmix(uint64_t x) {
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t
next_random(void) {
	pthread_once(&SEED_ONCE, seed_init);
	return splitmix(SEED + ATOM_FINC(&COUNTER));
}

uint64_t
skynet_span_new_id(void) {
	uint64_t id;
	do
		id = next_random();
	while (id == 0);
	return id;
}

static void
put_u64(uint8_t *out, uint64_t v) {
	for (int i = 7; i >= 0; i--, v >>= 8)
		out[i] = (uint8_t)v;
}

void
skynet_span_new_trace(uint8_t out[16]) {
	put_u64(out, skynet_span_new_id());
	put_u64(out + 8, skynet_span_new_id());
}

void
skynet_span_hex(const uint8_t *bytes, size_t n, char *out) {
	static const char DIGITS[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = DIGITS[bytes[i] >> 4];
		out[2 * i + 1] = DIGITS[bytes[i] & 15];
	}
}

void
skynet_span_id_hex(uint64_t id, char out[SPAN_ID_HEX]) {
	uint8_t b[8];
	put_u64(b, id);
	skynet_span_hex(b, 8, out);
}

uint64_t
skynet_span_id_of(const uint8_t bytes[8]) {
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | bytes[i];
	return v;
}

static inline int
hex_value(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20; // lower case
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

bool
skynet_span_unhex(const char *text, size_t n, uint8_t *out) {
	for (size_t i = 0; i < n; i++) {
		int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/* FNV-1a over text, from basis: one half of a tag's hashed trace id. */
static uint64_t
fnv(const char *text, size_t len, uint64_t basis) {
	uint64_t h = basis;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)text[i]) * 0x100000001b3ull;
	return h;
}

void
skynet_span_trace_of(const char *tag, size_t len, uint8_t out[16]) {
	const char *id = tag;
	size_t idlen = len;
	if (len > 0 && tag[0] == '(') {
		const char *close = memchr(tag, ')', len);
		if (close != NULL) {
			id = close + 1;
			idlen = len - (size_t)(id - tag);
		}
	}
	if (idlen == SPAN_TRACE_HEX && skynet_span_unhex(id, 16, out))
		return;
	put_u64(out, fnv(tag, len, 0xcbf29ce484222325ull));
	put_u64(out + 8, fnv(tag, len, 0x84222325cbf29ce4ull));
}

uint64_t
skynet_span_wall_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the ring ---- */

static struct {
	struct skynet_cond lock;
	struct skynet_span *slot; // owned, cap records; NULL until the first span
	uint64_t *number;         // owned: the span number each slot holds
	size_t cap;
	uint64_t head; // spans ever kept
} RING = {.lock = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER}};

static size_t
ring_size(struct skynet_context *ctx) {
	const char *v = ctx != NULL ? skynet_command(ctx, "GETENV", "trace_spans") : NULL;
	long n = v != NULL ? strtol(v, NULL, 10) : 0;
	if (n <= 0)
		return SPAN_RING_DEFAULT;
	return n > SPAN_RING_MAX ? SPAN_RING_MAX : (size_t)n;
}

/* Caller holds RING.lock. */
static void
ring_make(size_t cap) {
	RING.slot = skynet_malloc(cap * sizeof(*RING.slot));
	RING.number = skynet_malloc(cap * sizeof(*RING.number));
	for (size_t i = 0; i < cap; i++)
		RING.number[i] = UINT64_MAX;
	RING.cap = cap;
}

void
skynet_span_keep(struct skynet_context *ctx, const struct skynet_span *s) {
	skynet_cond_lock(&RING.lock);
	if (RING.slot == NULL) {
		skynet_cond_unlock(&RING.lock);
		size_t cap = ring_size(ctx); // the env has a lock of its own
		skynet_cond_lock(&RING.lock);
		if (RING.slot == NULL)
			ring_make(cap);
	}
	uint64_t n = RING.head++;
	RING.slot[n % RING.cap] = *s;
	RING.number[n % RING.cap] = n;
	skynet_cond_unlock(&RING.lock);
}

/* Copy span number n into *out: false when the ring no longer (or not yet) holds it. */
static bool
ring_get(uint64_t n, struct skynet_span *out) {
	bool got = false;
	skynet_cond_lock(&RING.lock);
	if (RING.slot != NULL && RING.number[n % RING.cap] == n) {
		*out = RING.slot[n % RING.cap];
		got = true;
	}
	skynet_cond_unlock(&RING.lock);
	return got;
}

static void
ring_bounds(uint64_t *head, size_t *cap) {
	skynet_cond_lock(&RING.lock);
	*head = RING.head;
	*cap = RING.cap;
	skynet_cond_unlock(&RING.lock);
}

/* ---- Lua ---- */

static int
lnewtrace(lua_State *L) {
	uint8_t id[16];
	char hex[SPAN_TRACE_HEX];
	skynet_span_new_trace(id);
	skynet_span_hex(id, 16, hex);
	lua_pushlstring(L, hex, sizeof(hex));
	return 1;
}

static void
push_span_id(lua_State *L, uint64_t id) {
	char hex[SPAN_ID_HEX];
	skynet_span_id_hex(id, hex);
	lua_pushlstring(L, hex, sizeof(hex));
}

static int
lnewspan(lua_State *L) {
	push_span_id(L, skynet_span_new_id());
	return 1;
}

static int
ltraceof(lua_State *L) {
	size_t len;
	const char *tag = luaL_checklstring(L, 1, &len);
	uint8_t id[16];
	char hex[SPAN_TRACE_HEX];
	skynet_span_trace_of(tag, len, id);
	skynet_span_hex(id, 16, hex);
	lua_pushlstring(L, hex, sizeof(hex));
	return 1;
}

static void
push_address(lua_State *L, uint32_t a) {
	char text[16];
	snprintf(text, sizeof(text), ":%08x", (unsigned)a);
	lua_pushstring(L, text);
}

/* Push a table of the fields of s. */
static void
push_span(lua_State *L, const struct skynet_span *s) {
	char hex[SPAN_TRACE_HEX];
	lua_createtable(L, 0, 9);
	skynet_span_hex(s->trace, 16, hex);
	lua_pushlstring(L, hex, sizeof(hex));
	lua_setfield(L, -2, "trace");
	push_span_id(L, s->span);
	lua_setfield(L, -2, "span");
	if (s->parent != 0) {
		push_span_id(L, s->parent);
		lua_setfield(L, -2, "parent");
	}
	lua_pushstring(L, s->name);
	lua_setfield(L, -2, "name");
	push_address(L, s->address);
	lua_setfield(L, -2, "address");
	push_address(L, s->source);
	lua_setfield(L, -2, "source");
	lua_pushinteger(L, (lua_Integer)s->start_ns);
	lua_setfield(L, -2, "start_ns");
	lua_pushinteger(L, (lua_Integer)s->end_ns);
	lua_setfield(L, -2, "end_ns");
	lua_pushstring(L, s->status == SPAN_ERROR ? "error" : "ok");
	lua_setfield(L, -2, "status");
}

static int
lfind(lua_State *L) {
	size_t len;
	const char *text = luaL_checklstring(L, 1, &len);
	uint8_t want[16];
	if (len != SPAN_TRACE_HEX || !skynet_span_unhex(text, 16, want))
		skynet_span_trace_of(text, len, want); // a tag: the id it maps to
	uint64_t head;
	size_t cap;
	ring_bounds(&head, &cap);
	lua_newtable(L);
	lua_Integer n = 0;
	for (uint64_t i = head > cap ? head - cap : 0; i < head; i++) {
		struct skynet_span s;
		if (ring_get(i, &s) && memcmp(s.trace, want, 16) == 0) {
			push_span(L, &s);
			lua_rawseti(L, -2, ++n);
		}
	}
	return 1;
}

/* Append s to b as a JSON string (quotes included). */
static void
add_json_string(luaL_Buffer *b, const char *s) {
	luaL_addchar(b, '"');
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			luaL_addchar(b, '\\');
			luaL_addchar(b, (char)c);
		} else if (c < 0x20) {
			char esc[8];
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			luaL_addstring(b, esc);
		} else {
			luaL_addchar(b, (char)c);
		}
	}
	luaL_addchar(b, '"');
}

/* Append the decimal digits of v. */
static void
add_u64(luaL_Buffer *b, uint64_t v) {
	char digits[24];
	int n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	while (n > 0)
		luaL_addchar(b, digits[--n]);
}

static void
add_hex_id(luaL_Buffer *b, uint64_t id) {
	char hex[SPAN_ID_HEX];
	skynet_span_id_hex(id, hex);
	luaL_addlstring(b, hex, sizeof(hex));
}

static void
add_attribute(luaL_Buffer *b, const char *key, uint32_t address) {
	char hex[9];
	snprintf(hex, sizeof(hex), "%08x", (unsigned)address);
	luaL_addstring(b, "{\"key\":\"");
	luaL_addstring(b, key);
	luaL_addstring(b, "\",\"value\":{\"stringValue\":\":");
	luaL_addlstring(b, hex, 8);
	luaL_addstring(b, "\"}}");
}

/* Append the OTLP JSON object of span s (hand-formatted: the tracer writes
 * one per traced request, and snprintf cost more than the rest together). */
static void
add_span_json(luaL_Buffer *b, const struct skynet_span *s) {
	char hex[SPAN_TRACE_HEX];
	skynet_span_hex(s->trace, 16, hex);
	luaL_addstring(b, "{\"traceId\":\"");
	luaL_addlstring(b, hex, sizeof(hex));
	luaL_addstring(b, "\",\"spanId\":\"");
	add_hex_id(b, s->span);
	if (s->parent != 0) {
		luaL_addstring(b, "\",\"parentSpanId\":\"");
		add_hex_id(b, s->parent);
	}
	luaL_addstring(b, "\",\"name\":");
	add_json_string(b, s->name);
	luaL_addstring(b, s->source != 0 ? ",\"kind\":2" : ",\"kind\":1");
	luaL_addstring(b, ",\"startTimeUnixNano\":\"");
	add_u64(b, s->start_ns);
	luaL_addstring(b, "\",\"endTimeUnixNano\":\"");
	add_u64(b, s->end_ns);
	if (s->status == SPAN_ERROR)
		luaL_addstring(b, "\",\"status\":{\"code\":2,\"message\":\"error\"},");
	else
		luaL_addstring(b, "\",\"status\":{\"code\":1},");
	luaL_addstring(b, "\"attributes\":[");
	add_attribute(b, "skynet.address", s->address);
	luaL_addchar(b, ',');
	add_attribute(b, "skynet.source", s->source);
	luaL_addstring(b, "]}");
}

static int
ldrain(lua_State *L) {
	enum { ARG_FROM = 1, ARG_RESOURCE, ARG_MAX };
	lua_Integer from = luaL_checkinteger(L, ARG_FROM);
	const char *resource = luaL_checkstring(L, ARG_RESOURCE);
	lua_Integer max = luaL_optinteger(L, ARG_MAX, LUA_MAXINTEGER);
	uint64_t head;
	size_t cap;
	ring_bounds(&head, &cap);
	uint64_t first = from < 0 ? 0 : (uint64_t)from;
	if (first > head)
		first = head;
	if (max > 0 && head - first > (uint64_t)max)
		head = first + (uint64_t)max;
	uint64_t lost = 0;
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	for (uint64_t i = first; i < head; i++) {
		struct skynet_span s;
		if (!ring_get(i, &s)) {
			lost++;
			continue;
		}
		luaL_addstring(&b, "{\"resourceSpans\":[{\"resource\":");
		luaL_addstring(&b, resource);
		luaL_addstring(&b, ",\"scopeSpans\":[{\"scope\":{\"name\":\"skywheel\"},\"spans\":[");
		add_span_json(&b, &s);
		luaL_addstring(&b, "]}]}]}\n");
	}
	luaL_pushresult(&b);
	lua_pushinteger(L, (lua_Integer)head);
	lua_pushinteger(L, (lua_Integer)lost);
	return 3;
}

static int
lhead(lua_State *L) {
	uint64_t head;
	size_t cap;
	ring_bounds(&head, &cap);
	lua_pushinteger(L, (lua_Integer)head);
	lua_pushinteger(L, (lua_Integer)cap);
	return 2;
}

LUAMOD_API int luaopen_skynet_tracing_core(lua_State *L);

LUAMOD_API int
luaopen_skynet_tracing_core(lua_State *L) {
	luaL_checkversion(L);
	static const luaL_Reg FUNCS[] = {
	    {"newtrace", lnewtrace}, {"newspan", lnewspan}, {"traceof", ltraceof}, {"find", lfind},
	    {"drain", ldrain},       {"head", lhead},       {NULL, NULL},
	};
	luaL_newlib(L, FUNCS);
	return 1;
}
