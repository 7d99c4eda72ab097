/*
 * skynet.kernel, spans: what a traced coroutine records and what its
 * messages carry.
 *
 * The records. A traced coroutine has a record (struct trace_rec) in the
 * kernel's table of traced coroutines (k->trace, made at the first trace),
 * found by the coroutine's lua_State address: its tag (skynet's trace tag:
 * for traces begun here, the 32 hex digits of the trace id, which messages
 * carry as the id alone and which is written out only when read; or false,
 * the coroutine's tracing forced off) and its open span (ids, parent, where and
 * when it began). The table is open addressing with linear probing over
 * pointers to records, at most half full, deleted by backward shift;
 * records are reused from a free list and freed with the kernel. The last
 * record found (hot) is checked before the table: one coroutine's record
 * is looked up several times in a row (its resume, each send, its end). No Lua
 * value is made per span: a tag becomes a Lua string only when Lua asks
 * (skynet.tracetag, a log line). k->traced_n is the table's count, so a
 * service with no traced coroutine pays one branch per message.
 *
 * A record goes when its coroutine ends (kernel_trace_end, from
 * coroutine.c: its span is kept in the node's ring, lua-span.c) or when Lua
 * clears the tag. A coroutine collected while traced (never finished,
 * dropped) leaves a record behind; kernel_trace_forget drops it when a new
 * coroutine gets that address (coroutine.c), so nothing is inherited.
 *
 * The trace between services. A send, call or redirect of a traced
 * coroutine carries its tag, trace id and span id in a trailer of the
 * message (skynet_trace_encode once per span, skynet_trace_append to each
 * message, skynet.h; session.c sends). The receiver's
 * dispatch finds it through skynet_message_trace (k->trace_in while the
 * callback runs) and the coroutine serving the request begins a child span
 * (dispatch.c). skynet's PTYPE_TRACE message, sent before the request by
 * skynet.tracecall and by the cluster agent, still works: its payload (the
 * tag, then a space and the sender's span id in 16 hex digits when it has
 * one) is kept for the next request from its source (UV_TRACE_SOURCE,
 * k->trace_pending).
 *
 * Pending. Most traced requests are served in one resume and never asked
 * for their tag (a leaf that answers at once). So a request whose trailer
 * carried the id alone begins its span in k->trace->pend (one per kernel,
 * counted in k->traced_n, never in the table): no record, no tag. It
 * becomes a record (pend_settle) the moment anything looks it up (rec_of:
 * a send, skynet.tracetag, a log line) or when its first resume returns
 * with the coroutine still alive (kernel_trace_settle, from dispatch.c);
 * a request that ends within that resume with tracing lines off
 * (trace_quiet) closes the span straight into the ring (pend_close).
 * Only one request starts per dispatch and it settles before any other
 * coroutine runs, hence the one slot. thread = 1, diag.trace_overhead_pct:
 * 8.2 % without it, 7.4 % with it (6 runs each, medians).
 *
 * Units: span times are monotonic nanoseconds (lua-span.h); a request's
 * span starts at its dispatch's clock reading when the node profiles,
 * which saves a clock read per span. A tag is at
 * most SKYNET_TRACE_TAG_MAX bytes: a longer one is cut there.
 *
 * Owns: k->trace, k->traced_n, k->trace_pending, k->trace_quiet and
 * k->trace_read (config trace_lines, read once, when the service first
 * traces). Reads: k->running, SERVICE_NAME. skynet.error (kernel_lerror)
 * is here too: it reads the running coroutine's tag.
 */

#include "kernel.h"
#include "../lua-span.h"

#include <lauxlib.h>

#include <string.h>

#define PAYLOAD_SUFFIX (1 + SPAN_ID_HEX) // " " and a span id
#define TAG_INLINE     40                // tag bytes kept in the record itself
#define TABLE_MIN      16

struct trace_rec {
	lua_State *co;          // the key; the record is free when not in the table
	struct trace_rec *next; // the free list
	char *tag;              // tag_inline, or owned when longer
	size_t tag_len;
	bool off;     // the tag is false: tracing forced off for this coroutine
	bool spanned; // span is open
	/* The tag is span.trace's hex (id_tag): messages carry the id alone
	 * (skynet_trace.c). A tag that came so is written out (id_text) only
	 * when something reads it as text: rec_text. */
	bool id_tag, id_text;
	char tag_inline[TAG_INLINE];
	struct skynet_span span;
	/* The trailer of the span trailer_of (skynet_trace_encode): what its
	 * messages carry when the id alone carries the tag, made at its first
	 * send. Span ids never repeat, so a trailer made for another span
	 * never matches. */
	uint64_t trailer_of;
	uint8_t trailer[SKYNET_TRACE_FIXED];
};

/* A request's span that nothing has read yet (see "Pending" above). */
struct pending {
	lua_State *co;           // NULL: none
	struct skynet_span span; // all but its id and end
	bool named;              // span.name begins with the service's name (kept from the last one)
};

struct kernel_trace {
	struct trace_rec **slot; // cap slots, NULL: empty
	size_t cap;              // a power of two; records <= cap / 2
	struct trace_rec *free;
	struct trace_rec *hot;    // NULL or a record in the table: the last one found
	struct pending pend;      // counted in k->traced_n, never in the table
	char name[SPAN_NAME_MAX]; // the service's name (SERVICE_NAME), read at the first span
	size_t name_len;
	bool named;
	char *scratch; // owned, NULL until needed: the trailer of a text tag (kernel_trace_trailer)
};

void
kernel_trace_on(struct kernel *k) {
	if (!k->trace_read) {
		k->trace_read = true;
		const char *v = skynet_command(k->ctx, "GETENV", "trace_lines");
		k->trace_quiet = v != NULL && strcmp(v, "false") == 0;
	}
}

/* ---- the table ---- */

static struct trace_rec *pend_settle(struct kernel *k);

static size_t
home(const struct kernel_trace *t, const lua_State *co) {
	uint64_t h = (uint64_t)(uintptr_t)co * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (t->cap - 1);
}

/* The record of co, or NULL; co's pending span becomes its record. */
static struct trace_rec *
rec_of(struct kernel *k, const lua_State *co) {
	struct kernel_trace *t = k->trace;
	if (k->traced_n == 0 || co == NULL)
		return NULL;
	if (t->hot != NULL && t->hot->co == co)
		return t->hot;
	if (t->pend.co == co)
		return pend_settle(k);
	for (size_t i = home(t, co);; i = (i + 1) & (t->cap - 1)) {
		struct trace_rec *r = t->slot[i];
		if (r == NULL || r->co == co) {
			if (r != NULL)
				t->hot = r;
			return r;
		}
	}
}

static void
table_place(struct kernel_trace *t, struct trace_rec *r) {
	size_t i = home(t, r->co);
	while (t->slot[i] != NULL)
		i = (i + 1) & (t->cap - 1);
	t->slot[i] = r;
}

static void
table_grow(struct kernel *k) {
	struct kernel_trace *t = k->trace;
	struct trace_rec **old = t->slot;
	size_t old_cap = t->cap;
	t->cap = old_cap * 2;
	t->slot = skynet_malloc(t->cap * sizeof(*t->slot));
	memset(t->slot, 0, t->cap * sizeof(*t->slot));
	for (size_t i = 0; i < old_cap; i++)
		if (old[i] != NULL)
			table_place(t, old[i]);
	skynet_free(old);
}

static struct kernel_trace *
trace_of(struct kernel *k) {
	struct kernel_trace *t = k->trace;
	if (t == NULL) {
		t = k->trace = skynet_malloc(sizeof(*t));
		memset(t, 0, sizeof(*t));
		t->cap = TABLE_MIN;
		t->slot = skynet_malloc(t->cap * sizeof(*t->slot));
		memset(t->slot, 0, t->cap * sizeof(*t->slot));
	}
	return t;
}

/* A new record for co, which has none (untraced: no tag, no span). */
static struct trace_rec *
rec_new(struct kernel *k, lua_State *co) {
	struct kernel_trace *t = trace_of(k);
	if ((size_t)(k->traced_n + 1) * 2 > t->cap)
		table_grow(k);
	struct trace_rec *r = t->free;
	if (r != NULL)
		t->free = r->next;
	else
		r = skynet_malloc(sizeof(*r));
	memset(r, 0, offsetof(struct trace_rec, tag_inline));
	r->co = co;
	r->tag = r->tag_inline;
	table_place(t, r);
	t->hot = r;
	k->traced_n++;
	return r;
}

/* The record of co, made when it has none. */
static struct trace_rec *
rec_put(struct kernel *k, lua_State *co) {
	struct trace_rec *r = rec_of(k, co);
	return r != NULL ? r : rec_new(k, co);
}

/* True when co's span is the pending one (see "Pending" above). */
static bool
is_pending(const struct kernel *k, const lua_State *co) {
	return co != NULL && k->trace != NULL && k->trace->pend.co == co;
}

/* Take co's record out of the table (backward shift) and free it. */
static void
rec_drop(struct kernel *k, const lua_State *co) {
	struct kernel_trace *t = k->trace;
	if (k->traced_n == 0 || co == NULL)
		return;
	size_t mask = t->cap - 1, i = home(t, co);
	while (t->slot[i] != NULL && t->slot[i]->co != co)
		i = (i + 1) & mask;
	struct trace_rec *r = t->slot[i];
	if (r == NULL)
		return;
	for (size_t j = (i + 1) & mask; t->slot[j] != NULL; j = (j + 1) & mask) {
		size_t h = home(t, t->slot[j]->co);
		if (((j - h) & mask) >= ((j - i) & mask)) { // its home is not in (i, j]: move it to i
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i] = NULL;
	if (t->hot == r)
		t->hot = NULL;
	if (r->tag != r->tag_inline)
		skynet_free(r->tag);
	r->next = t->free;
	t->free = r;
	k->traced_n--;
}

void
kernel_trace_forget(struct kernel *k, lua_State *co) {
	if (is_pending(k, co)) {
		k->trace->pend.co = NULL;
		k->traced_n--;
		return;
	}
	rec_drop(k, co);
}

void
kernel_trace_free(struct kernel *k) {
	struct kernel_trace *t = k->trace;
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->cap; i++) {
		struct trace_rec *r = t->slot[i];
		if (r != NULL) {
			if (r->tag != r->tag_inline)
				skynet_free(r->tag);
			skynet_free(r);
		}
	}
	while (t->free != NULL) {
		struct trace_rec *r = t->free;
		t->free = r->next;
		skynet_free(r);
	}
	skynet_free(t->slot);
	skynet_free(t->scratch);
	skynet_free(t);
	k->trace = NULL;
	k->traced_n = 0;
}

/* The record's tag becomes text (cut at SKYNET_TRACE_TAG_MAX bytes). */
static void
rec_tag(struct trace_rec *r, const char *text, size_t len) {
	if (len > SKYNET_TRACE_TAG_MAX)
		len = SKYNET_TRACE_TAG_MAX;
	if (r->tag != r->tag_inline)
		skynet_free(r->tag);
	r->tag = len > TAG_INLINE ? skynet_malloc(len) : r->tag_inline;
	memcpy(r->tag, text, len); // text is never the record's own tag
	r->tag_len = len;
	r->off = false;
	r->id_tag = false;
}

/* The record's tag becomes the hex of its span's trace id, written out later. */
static void
rec_tag_id(struct trace_rec *r) {
	if (r->tag != r->tag_inline)
		skynet_free(r->tag);
	r->tag = r->tag_inline;
	r->tag_len = SPAN_TRACE_HEX;
	r->off = false;
	r->id_tag = true;
	r->id_text = false;
}

/* The record's tag as text (tag_len bytes). */
static const char *
rec_text(struct trace_rec *r) {
	if (r->id_tag && !r->id_text) {
		skynet_span_hex(r->span.trace, 16, r->tag_inline);
		r->id_text = true;
	}
	return r->tag;
}

/* True when text (len bytes) is the hex of trace. */
static bool
is_id_hex(const char *text, size_t len, const uint8_t trace[16]) {
	if (len != SPAN_TRACE_HEX)
		return false;
	char hex[SPAN_TRACE_HEX];
	skynet_span_hex(trace, 16, hex);
	return memcmp(text, hex, SPAN_TRACE_HEX) == 0;
}

/* ---- tags ---- */

bool
kernel_push_tag(lua_State *L, struct kernel *k, lua_State *co) {
	struct trace_rec *r = rec_of(k, co);
	if (r == NULL) {
		lua_pushnil(L);
		return false;
	}
	if (r->off) {
		lua_pushboolean(L, 0);
		return false;
	}
	lua_pushlstring(L, rec_text(r), r->tag_len);
	return true;
}

/* The span of r ends: it is kept in the node's ring. */
static void
span_close(struct kernel *k, struct trace_rec *r, bool failed) {
	if (!r->spanned)
		return;
	r->span.end_ns = skynet_monotonic_ns();
	r->span.status = failed ? SPAN_ERROR : SPAN_OK;
	skynet_span_keep(k->ctx, &r->span);
	r->spanned = false;
}

void
kernel_set_tag(lua_State *L, struct kernel *k, lua_State *co) {
	int t = lua_type(L, -1);
	if (co == NULL) {
		// no coroutine runs: nothing to tag
	} else if (t == LUA_TNIL) {
		struct trace_rec *r = rec_of(k, co);
		if (r != NULL) {
			span_close(k, r, false);
			rec_drop(k, co);
		}
	} else if (t == LUA_TSTRING) {
		size_t len;
		const char *text = lua_tolstring(L, -1, &len);
		rec_tag(rec_put(k, co), text, len);
	} else {
		struct trace_rec *r = rec_put(k, co);
		span_close(k, r, false);
		r->off = true;
		r->tag_len = 0;
		r->id_tag = false;
	}
	lua_pop(L, 1);
}

void
kernel_set_trace_source(lua_State *L, int K, struct kernel *k, int source) {
	source = lua_absindex(L, source);
	bool now = !lua_isnil(L, -1);
	bool was = kernel_get(L, K, UV_TRACE_SOURCE, source) != LUA_TNIL;
	lua_pop(L, 1);
	kernel_set(L, K, UV_TRACE_SOURCE, source);
	k->trace_pending += (int)now - (int)was;
}

/* ---- spans ---- */

/* The span's name: the service's name (already there when prefixed), then
 * the text at the absolute index name (when a string). */
static void
name_span(lua_State *L, struct kernel_trace *t, struct skynet_span *s, int name, bool prefixed) {
	if (!t->named) {
		t->named = true;
		if (lua_getglobal(L, "SERVICE_NAME") == LUA_TSTRING) {
			size_t len;
			const char *text = lua_tolstring(L, -1, &len);
			t->name_len = len < sizeof(t->name) - 1 ? len : sizeof(t->name) - 1;
			memcpy(t->name, text, t->name_len);
		}
		lua_pop(L, 1);
	}
	size_t at = t->name_len;
	if (!prefixed)
		memcpy(s->name, t->name, at);
	if (name != 0 && lua_type(L, name) == LUA_TSTRING && at + 1 < sizeof(s->name) - 1) {
		size_t len;
		const char *text = lua_tolstring(L, name, &len);
		if (at > 0)
			s->name[at++] = ' ';
		if (len > sizeof(s->name) - 1 - at)
			len = sizeof(s->name) - 1 - at;
		memcpy(s->name + at, text, len);
		at += len;
	}
	s->name[at] = '\0';
}

/* co's pending span becomes its record (a new one: co had none). */
static struct trace_rec *
pend_settle(struct kernel *k) {
	struct kernel_trace *t = k->trace;
	lua_State *co = t->pend.co;
	t->pend.co = NULL;
	k->traced_n--;
	struct trace_rec *r = rec_new(k, co);
	r->span = t->pend.span;
	r->span.span = skynet_span_new_id();
	rec_tag_id(r);
	r->spanned = true;
	return r;
}

/* The pending span ends: kept in the node's ring, with no record made. */
static void
pend_close(struct kernel *k, bool failed) {
	struct kernel_trace *t = k->trace;
	struct skynet_span *s = &t->pend.span;
	s->span = skynet_span_new_id();
	s->end_ns = skynet_monotonic_ns();
	s->status = failed ? SPAN_ERROR : SPAN_OK;
	skynet_span_keep(k->ctx, s);
	t->pend.co = NULL;
	k->traced_n--;
}

void
kernel_trace_settle(struct kernel *k) {
	if (k->trace != NULL && k->trace->pend.co != NULL)
		pend_settle(k);
}

/* Span s begins, as from says: all but its trace and span ids; prefixed:
 * its name already begins with the service's name. */
static void
span_fill(lua_State *L, struct kernel *k, struct skynet_span *s,
          const struct kernel_span_from *from, bool prefixed) {
	s->parent = from->parent;
	s->source = from->source;
	s->address = kernel_self(k);
	uint64_t at = from->at_dispatch ? skynet_dispatch_ns() : 0;
	s->start_ns = at != 0 ? at : skynet_monotonic_ns();
	s->end_ns = 0;
	s->status = 0;
	name_span(L, k->trace, s, from->name, prefixed);
}

/* A span from a trailer that carried the id alone, for a coroutine with no
 * record: pending (what it needs from the request is read now). */
static void
pend_begin(lua_State *L, struct kernel *k, lua_State *co, const struct kernel_span_from *from) {
	struct kernel_trace *t = trace_of(k);
	if (t->pend.co != NULL) // another one's: one request per dispatch, so not seen
		pend_settle(k);
	memcpy(t->pend.span.trace, from->trace, 16);
	span_fill(L, k, &t->pend.span, from, t->pend.named);
	t->pend.named = true;
	t->pend.co = co;
	k->traced_n++;
}

void
kernel_span_begin(lua_State *L, struct kernel *k, lua_State *co,
                  const struct kernel_span_from *from) {
	kernel_trace_on(k);
	if (from->tag == NULL && from->at_dispatch && rec_of(k, co) == NULL) {
		pend_begin(L, k, co, from);
		return;
	}
	struct trace_rec *r = rec_put(k, co);
	span_close(k, r, false);
	struct skynet_span *s = &r->span;
	static const uint8_t NO_TRACE[16];
	if (from->tag == NULL) { // the tag is the id (a trailer carried the id alone)
		memcpy(s->trace, from->trace, 16);
		rec_tag_id(r);
	} else {
		rec_tag(r, from->tag, from->tag_len);
		if (from->trace != NULL && memcmp(from->trace, NO_TRACE, 16) != 0)
			memcpy(s->trace, from->trace, 16);
		else
			skynet_span_trace_of(r->tag, r->tag_len, s->trace);
		r->id_tag = r->id_text = is_id_hex(r->tag, r->tag_len, s->trace);
	}
	s->span = skynet_span_new_id();
	span_fill(L, k, s, from, false);
	r->spanned = true;
}

void
kernel_trace_end(lua_State *L, struct kernel *k, lua_State *co, bool failed) {
	if (k->trace_quiet && is_pending(k, co)) {
		pend_close(k, failed);
		return;
	}
	struct trace_rec *r = rec_of(k, co);
	if (r == NULL)
		return;
	span_close(k, r, failed);
	if (!r->off && !k->trace_quiet) {
		lua_pushlstring(L, rec_text(r), r->tag_len);
		rec_drop(k, co);
		kernel_trace(L, -1, "end");
		lua_pop(L, 1);
		return;
	}
	rec_drop(k, co);
}

size_t
kernel_trace_room(struct kernel *k, const lua_State *co) {
	if (is_pending(k, co))
		return skynet_trace_size(0); // its messages will carry the id alone
	const struct trace_rec *r = rec_of(k, co);
	if (r == NULL || r->off)
		return 0;
	return skynet_trace_size(r->spanned && r->id_tag ? 0 : r->tag_len);
}

const void *
kernel_trace_trailer(struct kernel *k, size_t *n) {
	struct trace_rec *r = rec_of(k, k->running);
	if (r == NULL || r->off)
		return NULL;
	if (r->spanned && r->id_tag) { // the id alone carries the tag: the span's own trailer
		if (r->trailer_of != r->span.span) {
			struct skynet_trace t = {.span = r->span.span};
			memcpy(t.trace, r->span.trace, 16);
			skynet_trace_encode(&t, r->trailer);
			r->trailer_of = r->span.span;
		}
		*n = sizeof(r->trailer);
		return r->trailer;
	}
	struct skynet_trace t = {.tag = rec_text(r), .tag_len = r->tag_len};
	if (r->spanned) {
		memcpy(t.trace, r->span.trace, 16);
		t.span = r->span.span;
	}
	struct kernel_trace *kt = k->trace;
	if (kt->scratch == NULL) // tags are kept within the limit, so this holds any trailer
		kt->scratch = skynet_malloc(SKYNET_TRACE_FIXED + SKYNET_TRACE_TAG_MAX);
	*n = skynet_trace_encode(&t, kt->scratch);
	return *n != 0 ? kt->scratch : NULL;
}

uint64_t
kernel_trace_split(lua_State *L, int payload) {
	size_t len;
	const char *p = lua_tolstring(L, payload, &len);
	uint8_t id[8];
	if (len > PAYLOAD_SUFFIX && p[len - PAYLOAD_SUFFIX] == ' ' &&
	    skynet_span_unhex(p + len - SPAN_ID_HEX, 8, id)) {
		lua_pushlstring(L, p, len - PAYLOAD_SUFFIX);
		return skynet_span_id_of(id);
	}
	lua_pushvalue(L, payload);
	return 0;
}

/* Push the 16 hex digits of the open span of co, or nil. */
static void
push_span_hex(lua_State *L, struct kernel *k, const lua_State *co) {
	const struct trace_rec *r = rec_of(k, co);
	if (r == NULL || !r->spanned) {
		lua_pushnil(L);
		return;
	}
	char hex[SPAN_ID_HEX];
	skynet_span_id_hex(r->span.span, hex);
	lua_pushlstring(L, hex, sizeof(hex));
}

/* The running coroutine, or a raised error (what: the API's name). */
static lua_State *
running(lua_State *L, const struct kernel *k, const char *what) {
	if (k->running == NULL)
		luaL_error(L, "%s: no running coroutine", what);
	return k->running;
}

/*
 * S.trace_begin(tag[, parent[, name]]) -> span: the running coroutine begins
 * a span of the trace tag (ending the one it had), child of the span whose 16
 * hex digits are parent (nil: a root), named by the service and name.
 * Returns the new span's id. Raises on a tag that is not a non-empty string.
 */
int
kernel_ltrace_begin(lua_State *L) {
	enum { ARG_TAG = 1, ARG_PARENT, ARG_NAME };
	lua_settop(L, ARG_NAME);
	size_t len;
	if (lua_type(L, ARG_TAG) != LUA_TSTRING || (lua_tolstring(L, ARG_TAG, &len), len == 0))
		return luaL_error(L, "skynet.trace: bad tag (%s)", luaL_typename(L, ARG_TAG));
	struct kernel *k = kernel_push(L);
	lua_State *co = running(L, k, "skynet.trace");
	struct kernel_span_from from = {.name = ARG_NAME};
	from.tag = lua_tolstring(L, ARG_TAG, &from.tag_len);
	uint8_t id[8];
	const char *parent = lua_tolstring(L, ARG_PARENT, &len);
	if (parent != NULL && len == SPAN_ID_HEX && skynet_span_unhex(parent, 8, id))
		from.parent = skynet_span_id_of(id);
	kernel_span_begin(L, k, co, &from);
	push_span_hex(L, k, co);
	return 1;
}

/* S.trace_end([failed]): the running coroutine's span ends; it is traced no more. */
int
kernel_ltrace_end(lua_State *L) {
	enum { ARG_FAILED = 1 };
	lua_settop(L, ARG_FAILED);
	struct kernel *k = kernel_push(L);
	struct trace_rec *r = rec_of(k, k->running);
	if (r != NULL) {
		span_close(k, r, lua_toboolean(L, ARG_FAILED));
		rec_drop(k, k->running);
	}
	return 0;
}

/* S.trace_context() -> tag, span of the running coroutine (nil when untraced). */
int
kernel_ltrace_context(lua_State *L) {
	lua_settop(L, 0);
	struct kernel *k = kernel_push(L);
	lua_pop(L, 1);
	if (!kernel_push_tag(L, k, k->running)) {
		lua_settop(L, 0);
		lua_pushnil(L);
		return 1;
	}
	push_span_hex(L, k, k->running);
	return 2;
}

/*
 * skynet.error(...): skynet.core's error; in a traced coroutine the line
 * begins with "[trace <tag>]". Upvalue 1: skynet.core's error.
 */
int
kernel_lerror(lua_State *L) {
	struct kernel *k = kernel_push(L);
	lua_pop(L, 1);
	int n = lua_gettop(L);
	if (k->traced_n > 0) {
		if (kernel_push_tag(L, k, k->running)) {
			lua_pushfstring(L, "[trace %s]", lua_tostring(L, -1));
			lua_replace(L, -2);
			lua_rotate(L, 1, 1);
			n++;
		}
		lua_settop(L, n);
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, n, 0);
	return 0;
}
