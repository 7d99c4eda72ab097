/*
 * skynet.tracing.core: trace and span ids, and the node's ring of finished spans.
 *
 * Ids. A span id is splitmix64 of a process-wide counter plus a random seed
 * (getrandom, once): a bijection, so ids never repeat in a process, and two
 * processes draw from unrelated sequences. A trace id is two such values.
 * Each thread takes the counter's values in blocks of ID_BLOCK (one atomic
 * add per block, not per id: the workers making spans at once would
 * otherwise pass the counter's cache line between them on every span).
 *
 * The ring. One per process (this file's statics; skynet.so is loaded
 * once), made of one shard per thread that keeps spans (the workers): a
 * span is written to its own thread's shard, so that two workers keeping
 * spans at once share no lock and no cache line. A shard has cap slots
 * (config trace_spans, read at the shard's first span; default
 * SPAN_RING_DEFAULT) and counts the spans it ever kept (head): its span
 * number n lives in slot n % cap until span n + cap replaces it. Readers
 * ask by shard and number and skip what was replaced. A shard's lock (a
 * spin lock) covers its fields and is held for the copy of one record by
 * its writer, of DRAIN_COPY records at most by a reader: the two only meet
 * there. SHARDS (a mutex and a list, never
 * shrinking: a thread's shard stays for the process) is taken to add a
 * shard and to list them.
 *
 * Past the caches. A ring that holds a flush period of spans is megabytes
 * per worker: written through the caches, each span evicted two lines of
 * what the worker's services use, and a node keeping hundreds of thousands
 * of spans a second ran its services from a cold cache. So a slot is two
 * whole cache lines (the span and its number), written with non-temporal
 * stores on x86-64, which need a store fence before the unlock for a reader
 * that takes the lock to see the whole slot; and a fence waits for the
 * stores to reach memory. So a span goes first to the shard's stage
 * (STAGE spans, plain stores: it stays in the writer's cache), and a full
 * stage goes to the ring at once, streamed, under one fence. Spans
 * [flushed, head) are in the stage, the ones before in the ring.
 * diag.trace_overhead_pct with trace_spans = 131072, 2 workers: 12.1 %
 * through the caches, 9.1 % past them (8 runs each, medians); thread = 1:
 * 7.9 % with a fence per span, 5.9 % with the stage (6 runs each, medians).
 *
 * Lua API (require "skynet.tracing.core"):
 *   newtrace() -> 32 hex digits       newspan() -> 16 hex digits
 *   traceof(tag) -> 32 hex digits     the trace id of a tag (lua-span.h)
 *   find(trace_hex) -> { span... }    the spans of that trace still in the
 *       ring, in the order they ended: { trace, span, parent (nil: root),
 *       name, address, source, start_ns, end_ns, status = "ok" | "error" }
 *   cursor() -> cursor    a table of where each shard is now: drain from it
 *       reads the spans kept after this call ({}: every span ever kept)
 *   drain(cursor, resource[, max]) -> text, written, lost    the spans kept
 *       since the cursor (at most max of them; the cursor moves past them)
 *       as lines of OTLP JSON, each an ExportTraceServiceRequest of up to
 *       DRAIN_COPY spans whose resource is the JSON object `resource`;
 *       `lost`: how many of them the ring had replaced already.
 *   drain(cursor, resource, max, file) -> "", written, lost[, err]    the
 *       same lines written to the Lua file as they are made, with no
 *       string in between; err: why the file refused one (the drain stops)
 *   head() -> spans kept, slots per shard (0 before the first span)
 */

#include "lua-span.h"
#include "skynet.h"
#include "skynet_cond.h"

#include <lauxlib.h>
#include <lua.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define SPAN_RING_DEFAULT 4096
#define SPAN_RING_MAX     (1 << 20)
#define SLOT_BYTES        128 // a slot of the ring: two cache lines
#define STAGE             32  // spans staged before they go to the ring together

/* ---- ids ---- */

#define ID_BLOCK 4096

/* initial-exec: read on every span, so no __tls_get_addr call (as snlua's trap.c). */
#define SPAN_TLS __attribute__((tls_model("initial-exec")))

static uint64_t SEED;
static pthread_once_t SEED_ONCE = PTHREAD_ONCE_INIT;
static ATOM_U64 COUNTER;
static __thread uint64_t ID_NEXT SPAN_TLS, ID_END SPAN_TLS; // this thread's block

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
	if (ID_NEXT == ID_END) {
		pthread_once(&SEED_ONCE, seed_init); // before this thread's first id
		ID_NEXT = ATOM_FADD(&COUNTER, ID_BLOCK);
		ID_END = ID_NEXT + ID_BLOCK;
	}
	return splitmix(SEED + ID_NEXT++);
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

/* "00" to "ff": a byte's two hex digits. */
static const char HEX_PAIRS[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e"
    "2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d"
    "5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c"
    "8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babb"
    "bcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9ea"
    "ebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

void
skynet_span_hex(const uint8_t *bytes, size_t n, char *out) {
	for (size_t i = 0; i < n; i++)
		memcpy(out + 2 * i, HEX_PAIRS + 2 * bytes[i], 2);
}

void
skynet_span_id_hex(uint64_t id, char out[SPAN_ID_HEX]) {
	for (int i = 0; i < 8; i++)
		memcpy(out + 2 * i, HEX_PAIRS + 2 * ((id >> (56 - 8 * i)) & 0xff), 2);
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

/* What to add to a span's monotonic time to make it wall-clock ns since the
 * epoch: the two clocks' difference now. */
static uint64_t
wall_offset(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t wall = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return wall - skynet_monotonic_ns(); // wraps when negative; adding it back unwraps
}

/* ---- the ring ---- */

/* A slot of the ring: a span and its number, two whole cache lines. */
struct slot {
	struct skynet_span span;
	uint64_t number; // the span number the slot holds; UINT64_MAX: none yet
} __attribute__((aligned(SLOT_BYTES)));
_Static_assert(sizeof(struct slot) == SLOT_BYTES, "a slot is two cache lines");

struct shard {
	int lock;          // a spin lock (shard_lock): held for a few record copies at most
	struct slot *slot; // cap slots, aligned in memory (owned through memory)
	void *memory;      // owned
	size_t cap;
	uint64_t head;                   // spans ever kept here
	uint64_t flushed;                // spans moved to the ring; the rest, < STAGE, are staged
	struct skynet_span stage[STAGE]; // span flushed + i in stage[i]
	struct shard *next;              // SHARDS' list
	size_t index;                    // 1 for the first shard made, then 2...
};

static struct {
	struct skynet_cond lock;
	struct shard *first, *last;
	size_t n;
} SHARDS = {.lock = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER}};

static __thread struct shard *MINE SPAN_TLS; // this thread's shard, once it kept a span

/* A spin lock, not a mutex: its writer takes it once per span, and a mutex's
 * unlock costs an atomic exchange where a release store will do; a reader
 * holds it for DRAIN_COPY record copies at most. */
static void
shard_lock(struct shard *sh) {
	while (__atomic_exchange_n(&sh->lock, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&sh->lock, __ATOMIC_RELAXED)) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		}
	}
}

static void
shard_unlock(struct shard *sh) {
	__atomic_store_n(&sh->lock, 0, __ATOMIC_RELEASE);
}

static size_t
ring_size(struct skynet_context *ctx) {
	const char *v = ctx != NULL ? skynet_command(ctx, "GETENV", "trace_spans") : NULL;
	long n = v != NULL ? strtol(v, NULL, 10) : 0;
	if (n <= 0)
		return SPAN_RING_DEFAULT;
	return n > SPAN_RING_MAX ? SPAN_RING_MAX : (size_t)n;
}

static struct shard *
shard_make(struct skynet_context *ctx) {
	struct shard *sh = skynet_malloc(sizeof(*sh));
	memset(sh, 0, sizeof(*sh));
	sh->cap = ring_size(ctx);
	sh->memory = skynet_malloc(sh->cap * sizeof(*sh->slot) + SLOT_BYTES);
	uintptr_t at = ((uintptr_t)sh->memory + SLOT_BYTES - 1) & ~(uintptr_t)(SLOT_BYTES - 1);
	sh->slot = (struct slot *)at;
	for (size_t i = 0; i < sh->cap; i++)
		sh->slot[i].number = UINT64_MAX;
	skynet_cond_lock(&SHARDS.lock);
	sh->index = ++SHARDS.n;
	if (SHARDS.last != NULL)
		SHARDS.last->next = sh;
	else
		SHARDS.first = sh;
	SHARDS.last = sh;
	skynet_cond_unlock(&SHARDS.lock);
	return sh;
}

/* The stage of sh (full) to the ring: past the caches where the machine
 * can (the ring's design comment), ordered before the shard's unlock. */
static void
stage_flush(struct shard *sh) {
	for (size_t i = 0; i < STAGE; i++) {
		uint64_t n = sh->flushed + i;
		struct slot *to = &sh->slot[n % sh->cap];
#if defined(__x86_64__)
		_Static_assert(sizeof(struct skynet_span) == SLOT_BYTES - 16,
		               "the span, then the number's 16 bytes");
		const __m128i *from = (const __m128i *)&sh->stage[i];
		__m128i *t = (__m128i *)to;
		for (size_t j = 0; j < sizeof(struct skynet_span) / sizeof(*t); j++)
			_mm_stream_si128(t + j, _mm_loadu_si128(from + j));
		_mm_stream_si128(t + sizeof(struct skynet_span) / sizeof(*t),
		                 _mm_set_epi64x(0, (long long)n));
#else
		to->span = sh->stage[i];
		to->number = n;
#endif
	}
#if defined(__x86_64__)
	_mm_sfence();
#endif
	sh->flushed += STAGE;
}

void
skynet_span_keep(struct skynet_context *ctx, const struct skynet_span *s) {
	struct shard *sh = MINE;
	if (sh == NULL)
		sh = MINE = shard_make(ctx);
	shard_lock(sh);
	sh->stage[sh->head++ - sh->flushed] = *s;
	if (sh->head - sh->flushed == STAGE)
		stage_flush(sh);
	shard_unlock(sh);
}

/* Span number n of sh, or NULL when it no longer (or not yet) holds it; sh locked. */
static const struct skynet_span *
shard_at(const struct shard *sh, uint64_t n) {
	if (n >= sh->head)
		return NULL;
	if (n >= sh->flushed)
		return &sh->stage[n - sh->flushed];
	const struct slot *at = &sh->slot[n % sh->cap];
	return at->number == n ? &at->span : NULL;
}

/* Copy span number n of sh into *out: false when it no longer (or not yet) holds it. */
static bool
shard_get(struct shard *sh, uint64_t n, struct skynet_span *out) {
	shard_lock(sh);
	const struct skynet_span *at = shard_at(sh, n);
	if (at != NULL)
		*out = *at;
	shard_unlock(sh);
	return at != NULL;
}

static uint64_t
shard_head(struct shard *sh) {
	shard_lock(sh);
	uint64_t head = sh->head;
	shard_unlock(sh);
	return head;
}

/* The first shard (NULL: none yet); the list only grows, so a reader walks it unlocked after. */
static struct shard *
shards(void) {
	skynet_cond_lock(&SHARDS.lock);
	struct shard *first = SHARDS.first;
	skynet_cond_unlock(&SHARDS.lock);
	return first;
}

/* The shard after sh, read under SHARDS' lock (a new shard may be linked meanwhile). */
static struct shard *
shard_next(struct shard *sh) {
	skynet_cond_lock(&SHARDS.lock);
	struct shard *next = sh->next;
	skynet_cond_unlock(&SHARDS.lock);
	return next;
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

/* Push a table of the fields of s (times: wall clock, monotonic + offset). */
static void
push_span(lua_State *L, const struct skynet_span *s, uint64_t offset) {
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
	lua_pushinteger(L, (lua_Integer)(s->start_ns + offset));
	lua_setfield(L, -2, "start_ns");
	lua_pushinteger(L, (lua_Integer)(s->end_ns + offset));
	lua_setfield(L, -2, "end_ns");
	lua_pushstring(L, s->status == SPAN_ERROR ? "error" : "ok");
	lua_setfield(L, -2, "status");
}

/* Order of spans in find's answer: when they ended, then began. */
static int
by_end(const void *a, const void *b) {
	const struct skynet_span *x = a, *y = b;
	if (x->end_ns != y->end_ns)
		return x->end_ns < y->end_ns ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return 0;
}

static int
lfind(lua_State *L) {
	size_t len;
	const char *text = luaL_checklstring(L, 1, &len);
	uint8_t want[16];
	if (len != SPAN_TRACE_HEX || !skynet_span_unhex(text, 16, want))
		skynet_span_trace_of(text, len, want); // a tag: the id it maps to
	struct skynet_span *found = NULL;
	size_t n = 0, room = 0;
	for (struct shard *sh = shards(); sh != NULL; sh = shard_next(sh)) {
		uint64_t head = shard_head(sh);
		for (uint64_t i = head > sh->cap ? head - sh->cap : 0; i < head; i++) {
			struct skynet_span s;
			if (!shard_get(sh, i, &s) || memcmp(s.trace, want, 16) != 0)
				continue;
			if (n == room) {
				room = room ? room * 2 : 16;
				found = skynet_realloc(found, room * sizeof(*found));
			}
			found[n++] = s;
		}
	}
	if (n > 1)
		qsort(found, n, sizeof(*found), by_end);
	lua_createtable(L, (int)n, 0);
	uint64_t offset = wall_offset();
	for (size_t i = 0; i < n; i++) {
		push_span(L, &found[i], offset);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	skynet_free(found);
	return 1;
}

/*
 * The OTLP JSON writer: spans become text in a plain growing buffer (the
 * tracer writes one line per span, for every traced request: this is its
 * hot loop). A span's text has a bound (SPAN_TEXT_MAX), so room is made
 * once per span and the pieces are written through a pointer: no
 * snprintf, no per-piece room check, literals copied by the compiler.
 */
struct text {
	char *p; // owned
	size_t len, cap;
};

/* The longest span text: the literals and ids (under 512 bytes), two
 * 20-digit times, and the name with every byte escaped (6 bytes each). */
#define SPAN_TEXT_MAX (512 + 2 * 20 + 6 * SPAN_NAME_MAX)

static char *
text_room(struct text *t, size_t n) {
	if (t->len + n > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		while (cap < t->len + n)
			cap *= 2;
		t->p = skynet_realloc(t->p, cap);
		t->cap = cap;
	}
	return t->p + t->len;
}

static void
text_add(struct text *t, const char *s, size_t n) {
	memcpy(text_room(t, n), s, n);
	t->len += n;
}

#define TEXT_LIT(t, lit) text_add((t), (lit), sizeof(lit) - 1)
#define PUT_LIT(o, lit)  (memcpy((o), (lit), sizeof(lit) - 1), (o) + sizeof(lit) - 1)

/* s as a JSON string (quotes included) at o; returns the end. */
static char *
put_json_string(char *o, const char *s, size_t max) {
	*o++ = '"';
	const unsigned char *c = (const unsigned char *)s, *end = c + max;
	for (; c < end && *c != '\0'; c++) {
		if (*c == '"' || *c == '\\') {
			*o++ = '\\';
			*o++ = (char)*c;
		} else if (*c < 0x20) {
			o = PUT_LIT(o, "\\u00");
			memcpy(o, HEX_PAIRS + 2 * *c, 2);
			o += 2;
		} else {
			*o++ = (char)*c;
		}
	}
	*o++ = '"';
	return o;
}

/* "00" to "99": decimal digits two at a time. */
static const char DIGIT_PAIRS[201] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546"
    "4748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293"
    "949596979899";

/* The 8 decimal digits of v < 10^8, zeros in front, at out. */
static inline void
digits8(char *out, uint32_t v) {
	for (int i = 6; i >= 0; i -= 2) {
		memcpy(out + i, DIGIT_PAIRS + 2 * (v % 100), 2);
		v /= 100;
	}
}

/* The decimal digits of v at o (20 at most); returns the end. In blocks of
 * 8 (independent 32-bit work once split), two digits per step: a span's
 * two times are 19 digits each. */
static char *
put_decimal(char *o, uint64_t v) {
	char digits[24];
	int n = sizeof(digits);
	while (v >= 100000000u) {
		n -= 8;
		digits8(digits + n, (uint32_t)(v % 100000000u));
		v /= 100000000u;
	}
	uint32_t w = (uint32_t)v;
	while (w >= 100) {
		n -= 2;
		memcpy(digits + n, DIGIT_PAIRS + 2 * (w % 100), 2);
		w /= 100;
	}
	if (w >= 10) {
		n -= 2;
		memcpy(digits + n, DIGIT_PAIRS + 2 * w, 2);
	} else {
		digits[--n] = (char)('0' + w);
	}
	memcpy(o, digits + n, sizeof(digits) - (size_t)n);
	return o + sizeof(digits) - n;
}

/* ":%08x" of an address at o; returns the end. */
static char *
put_address(char *o, uint32_t a) {
	uint8_t b[4] = {(uint8_t)(a >> 24), (uint8_t)(a >> 16), (uint8_t)(a >> 8), (uint8_t)a};
	*o = ':';
	skynet_span_hex(b, 4, o + 1);
	return o + 9;
}

/* One drain's last trace id and name as text: the spans of a batch are
 * mostly of a few traces and services, so most are copied, not made. */
struct text_memo {
	uint8_t trace[16];
	char trace_hex[SPAN_TRACE_HEX];
	bool has_trace;
	char name[SPAN_NAME_MAX];
	size_t name_len;                       // SIZE_MAX: none yet
	char name_json[6 * SPAN_NAME_MAX + 2]; // the name as a JSON string
	size_t name_json_len;
};

/* The OTLP JSON object of span s (times: monotonic + offset, lua-span.h). */
static void
text_span(struct text *t, struct text_memo *m, const struct skynet_span *s, uint64_t offset) {
	char *o = text_room(t, SPAN_TEXT_MAX), *start = o;
	o = PUT_LIT(o, "{\"traceId\":\"");
	if (!m->has_trace || memcmp(m->trace, s->trace, 16) != 0) {
		memcpy(m->trace, s->trace, 16);
		skynet_span_hex(s->trace, 16, m->trace_hex);
		m->has_trace = true;
	}
	memcpy(o, m->trace_hex, SPAN_TRACE_HEX);
	o += SPAN_TRACE_HEX;
	o = PUT_LIT(o, "\",\"spanId\":\"");
	skynet_span_id_hex(s->span, o);
	o += SPAN_ID_HEX;
	if (s->parent != 0) {
		o = PUT_LIT(o, "\",\"parentSpanId\":\"");
		skynet_span_id_hex(s->parent, o);
		o += SPAN_ID_HEX;
	}
	o = PUT_LIT(o, "\",\"name\":");
	size_t name_len = strnlen(s->name, sizeof(s->name));
	if (name_len != m->name_len || memcmp(m->name, s->name, name_len) != 0) {
		memcpy(m->name, s->name, name_len);
		m->name_len = name_len;
		m->name_json_len =
		    (size_t)(put_json_string(m->name_json, s->name, name_len) - m->name_json);
	}
	memcpy(o, m->name_json, m->name_json_len);
	o += m->name_json_len;
	if (s->source != 0)
		o = PUT_LIT(o, ",\"kind\":2,\"startTimeUnixNano\":\"");
	else
		o = PUT_LIT(o, ",\"kind\":1,\"startTimeUnixNano\":\"");
	o = put_decimal(o, s->start_ns + offset);
	o = PUT_LIT(o, "\",\"endTimeUnixNano\":\"");
	o = put_decimal(o, s->end_ns + offset);
	if (s->status == SPAN_ERROR)
		o = PUT_LIT(o, "\",\"status\":{\"code\":2,\"message\":\"error\"},");
	else
		o = PUT_LIT(o, "\",\"status\":{\"code\":1},");
	o = PUT_LIT(o, "\"attributes\":[{\"key\":\"skynet.address\",\"value\":{\"stringValue\":\"");
	o = put_address(o, s->address);
	o = PUT_LIT(o, "\"}},{\"key\":\"skynet.source\",\"value\":{\"stringValue\":\"");
	o = put_address(o, s->source);
	o = PUT_LIT(o, "\"}}]}");
	t->len += (size_t)(o - start);
}

static int
lcursor(lua_State *L) {
	lua_newtable(L);
	for (struct shard *sh = shards(); sh != NULL; sh = shard_next(sh)) {
		lua_pushinteger(L, (lua_Integer)shard_head(sh));
		lua_rawseti(L, -2, (lua_Integer)sh->index);
	}
	return 1;
}

#define DRAIN_COPY 64 // spans copied out of a shard under one hold of its lock

/* Copy up to max spans of sh from number *at on into out; *at moves past
 * them; *lost counts those replaced already. Returns how many were copied. */
static size_t
shard_copy(struct shard *sh, uint64_t *at, uint64_t head, size_t max, struct skynet_span *out,
           uint64_t *lost) {
	size_t n = 0;
	shard_lock(sh);
	for (; *at < head && n + *lost < max; (*at)++) {
		const struct skynet_span *s = shard_at(sh, *at);
		if (s != NULL)
			out[n++] = *s;
		else
			(*lost)++;
	}
	shard_unlock(sh);
	return n;
}

/* Write what out holds to f and empty it; false when f refused it. */
static bool
text_write(struct text *out, FILE *f) {
	bool ok = out->len == 0 || fwrite(out->p, 1, out->len, f) == out->len;
	out->len = 0;
	return ok;
}

static int
ldrain(lua_State *L) {
	enum { ARG_CURSOR = 1, ARG_RESOURCE, ARG_MAX, ARG_FILE };
	luaL_checktype(L, ARG_CURSOR, LUA_TTABLE);
	size_t rlen;
	const char *resource = luaL_checklstring(L, ARG_RESOURCE, &rlen);
	lua_Integer max = luaL_optinteger(L, ARG_MAX, LUA_MAXINTEGER);
	FILE *file = NULL;
	if (!lua_isnoneornil(L, ARG_FILE)) {
		luaL_Stream *stream = luaL_checkudata(L, ARG_FILE, LUA_FILEHANDLE);
		if (stream->closef == NULL)
			return luaL_argerror(L, ARG_FILE, "the file is closed");
		file = stream->f;
	}
	/* Every line begins the same way: the request's head up to its span. */
	struct text head_text = {0};
	TEXT_LIT(&head_text, "{\"resourceSpans\":[{\"resource\":");
	text_add(&head_text, resource, rlen);
	TEXT_LIT(&head_text, ",\"scopeSpans\":[{\"scope\":{\"name\":\"skywheel\"},\"spans\":[");
	/* With a file, each line is written as it is made, from one buffer. */
	struct text out = {0};
	if (file != NULL)
		text_room(&out, head_text.len + DRAIN_COPY * (SPAN_TEXT_MAX + 1) + 16);
	bool wrote = true;
	lua_Integer written = 0, lost = 0;
	struct skynet_span batch[DRAIN_COPY];
	struct text_memo memo = {.name_len = SIZE_MAX};
	uint64_t offset = wall_offset();
	for (struct shard *sh = shards(); sh != NULL && written + lost < max; sh = shard_next(sh)) {
		lua_rawgeti(L, ARG_CURSOR, (lua_Integer)sh->index);
		lua_Integer from = lua_tointeger(L, -1); // nil: 0
		lua_pop(L, 1);
		uint64_t head = shard_head(sh);
		uint64_t at = from < 0 ? 0 : (uint64_t)from;
		if (at > head)
			at = head;
		while (at < head && written + lost < max && wrote) {
			uint64_t gone = 0;
			size_t want = (size_t)(max - written - lost) < DRAIN_COPY
			                  ? (size_t)(max - written - lost)
			                  : DRAIN_COPY;
			size_t n = shard_copy(sh, &at, head, want, batch, &gone);
			lost += (lua_Integer)gone;
			if (n == 0)
				continue;
			text_add(&out, head_text.p, head_text.len);
			for (size_t i = 0; i < n; i++) {
				if (i > 0)
					TEXT_LIT(&out, ",");
				text_span(&out, &memo, &batch[i], offset);
			}
			TEXT_LIT(&out, "]}]}]}\n");
			written += (lua_Integer)n;
			if (file != NULL)
				wrote = text_write(&out, file);
		}
		lua_pushinteger(L, (lua_Integer)at);
		lua_rawseti(L, ARG_CURSOR, (lua_Integer)sh->index);
	}
	lua_pushlstring(L, out.p != NULL ? out.p : "", out.len); // "" after a file's writes
	skynet_free(out.p);
	skynet_free(head_text.p);
	lua_pushinteger(L, written);
	lua_pushinteger(L, lost);
	if (wrote)
		return 3;
	lua_pushstring(L, strerror(errno));
	return 4;
}

static int
lhead(lua_State *L) {
	uint64_t kept = 0;
	size_t cap = 0;
	for (struct shard *sh = shards(); sh != NULL; sh = shard_next(sh)) {
		kept += shard_head(sh);
		cap = sh->cap;
	}
	lua_pushinteger(L, (lua_Integer)kept);
	lua_pushinteger(L, (lua_Integer)cap);
	return 2;
}

LUAMOD_API int luaopen_skynet_tracing_core(lua_State *L);

LUAMOD_API int
luaopen_skynet_tracing_core(lua_State *L) {
	luaL_checkversion(L);
	static const luaL_Reg FUNCS[] = {
	    {"newtrace", lnewtrace}, {"newspan", lnewspan}, {"traceof", ltraceof}, {"find", lfind},
	    {"cursor", lcursor},     {"drain", ldrain},     {"head", lhead},       {NULL, NULL},
	};
	luaL_newlib(L, FUNCS);
	return 1;
}
