/*
 * The trace trailer: how a traced coroutine's trace rides inside the
 * messages it sends, so that a traced call costs no message of its own.
 *
 * Layout. A message whose sz carries MESSAGE_TRACED (skynet_mq.h) is its
 * payload, then the trailer, in one buffer:
 *
 *   payload (len bytes) | 0 | tag (n bytes) | trace id (16) | span id (8, big-endian) | n (2, little-endian)
 *
 * The 0 after the payload keeps what a copied payload always had there (a
 * terminator), for the services that read a text payload as a C string.
 * The trailer is TRACE_FIXED + n bytes; n is at most SKYNET_TRACE_TAG_MAX,
 * so a reader finds the trailer from the buffer's end alone. n = TAG_IS_ID
 * (no tag bytes) says the tag is the trace id's hex (a NULL tag, skynet.h):
 * the usual tag, a trace begun here, so the usual trailer is 27 bytes, not
 * 59. That matters on two workers, where each traced message crosses from
 * one core's cache to the other's: 32 bytes less is one cache line less
 * for most payloads, and one malloc size class less.
 *
 * Who writes and reads it. skynet_trace_attach (the sender: any C
 * service), or skynet_trace_encode once and skynet_trace_append to each
 * message (the kernel of a traced Lua coroutine, which keeps a span's
 * trailer for all the messages the span sends), appends it; skynet_send with
 * PTYPE_TAG_TRACED sets the bit; the dispatch step (skynet_server.c) parses
 * it, hands the callback the payload alone, and keeps the parsed trailer
 * for skynet_message_trace until the callback returns. A service that
 * forwards the message (its callback keeps it) forwards the payload only:
 * the trace is the forwarder's to pass on. Freeing is unchanged: the
 * trailer is part of the one allocation.
 *
 * In place. A sender that knows it will trace asks for the room when it
 * allocates the payload (lua-seri.c packs with luaseri_room bytes to
 * spare while a traced coroutine runs): the trailer then goes after the
 * payload, with no new buffer, no copy and no free. That matters
 * beyond the copy: the request and its reply keep the same size class, so
 * the allocator's per-thread caches stay balanced when the request is
 * freed on the receiver's thread and the reply on the sender's (a traced
 * request one class above its reply left one thread's cache always empty
 * and the other's always full, each miss a trip to the shared arena).
 * Whether the room is there: the kernel passes what skynet.pack asked the
 * allocator for (skynet_trace_append's cap, luaseri_packed), so no malloc
 * header is read; other senders' buffers are measured by the allocator.
 *
 * No lock, no state: pure functions over a buffer.
 */

#include "skynet_trace.h"
#include "skynet_malloc.h"

#include <string.h>

#define TRACE_ID_LEN 16
#define SPAN_LEN     8
#define TRACE_FIXED  (1 + TRACE_ID_LEN + SPAN_LEN + 2) // the 0, the ids, n
_Static_assert(TRACE_FIXED == SKYNET_TRACE_FIXED, "skynet.h tells the trailer's size");
#define TAG_IS_ID 0xffff // n: no tag bytes, the tag is the id's hex

/* v in big-endian byte order (and back). */
static inline uint64_t
big_endian(uint64_t v) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

/* A buffer that holds the len bytes of data and total - len more after
 * them: data itself when the room is there (donated, and cap, or the
 * allocator when cap is 0, says so), else a copy (data freed when donated). */
static char *
with_room(void *data, size_t len, bool donated, size_t cap, size_t total) {
	if (donated && data != NULL && (cap != 0 ? cap : skynet_malloc_usable(data)) >= total)
		return data;
	/* A new buffer and a copy, not realloc: glibc's realloc to a larger
	 * size class skips the thread cache, and costs more than the copy of
	 * a message's few bytes. */
	char *buf = skynet_malloc(total);
	if (len > 0)
		memcpy(buf, data, len);
	if (donated)
		skynet_free(data);
	return buf;
}

/* The trailer of t (tag n bytes, n <= SKYNET_TRACE_TAG_MAX) at p. */
static void
encode(char *p, const struct skynet_trace *t, size_t n) {
	*p++ = 0;
	if (n > 0)
		memcpy(p, t->tag, n);
	p += n;
	memcpy(p, t->trace, TRACE_ID_LEN);
	p += TRACE_ID_LEN;
	uint64_t span = big_endian(t->span);
	memcpy(p, &span, SPAN_LEN);
	p += SPAN_LEN;
	unsigned field = t->tag != NULL ? (unsigned)n : TAG_IS_ID;
	*p++ = (char)(field & 0xff);
	*p = (char)(field >> 8);
}

void *
skynet_trace_attach(void *data, size_t *sz, bool donated, const struct skynet_trace *t) {
	size_t n = t->tag != NULL ? t->tag_len : 0;
	if (n > SKYNET_TRACE_TAG_MAX)
		return NULL;
	size_t len = data != NULL ? *sz : 0;
	size_t total = len + skynet_trace_size(n);
	char *buf = with_room(data, len, donated, 0, total);
	encode(buf + len, t, n);
	*sz = total;
	return buf;
}

size_t
skynet_trace_encode(const struct skynet_trace *t, void *out) {
	size_t n = t->tag != NULL ? t->tag_len : 0;
	if (n > SKYNET_TRACE_TAG_MAX)
		return 0;
	encode(out, t, n);
	return skynet_trace_size(n);
}

void *
skynet_trace_append(void *data, size_t *sz, bool donated, size_t cap, const void *trailer,
                    size_t n) {
	size_t len = data != NULL ? *sz : 0;
	char *buf = donated && data != NULL && cap >= len + n
	                ? data
	                : with_room(data, len, donated, cap, len + n);
	if (n == SKYNET_TRACE_FIXED) // the usual trailer: a copy the compiler writes out
		memcpy(buf + len, trailer, SKYNET_TRACE_FIXED);
	else
		memcpy(buf + len, trailer, n);
	*sz = len + n;
	return buf;
}

static bool
trace_zero(const uint8_t *trace) {
	uint64_t half[2];
	memcpy(half, trace, sizeof(half));
	return (half[0] | half[1]) == 0;
}

bool
skynet_trace_parse(const void *data, size_t len, struct skynet_trace *out, size_t *payload) {
	const unsigned char *b = data;
	if (b == NULL || len < TRACE_FIXED)
		return false;
	size_t n = (size_t)b[len - 2] | (size_t)b[len - 1] << 8;
	bool id = n == TAG_IS_ID;
	if (id)
		n = 0;
	if (n > SKYNET_TRACE_TAG_MAX || n > len - TRACE_FIXED)
		return false;
	size_t at = len - TRACE_FIXED - n; // the payload's length: where the 0 is
	if (b[at] != 0)
		return false;
	const uint8_t *trace = b + at + 1 + n;
	if (id && trace_zero(trace))
		return false; // a tag that is the id needs an id
	out->tag = id ? NULL : (const char *)b + at + 1;
	out->tag_len = n;
	memcpy(out->trace, trace, TRACE_ID_LEN);
	uint64_t span;
	memcpy(&span, trace + TRACE_ID_LEN, SPAN_LEN);
	out->span = big_endian(span);
	*payload = at;
	return true;
}
