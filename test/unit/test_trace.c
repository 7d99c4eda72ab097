/*
 * Unit tests of the trace trailer (skynet_trace.c) and of its way through
 * the core: attach and parse give back what went in, whatever the tag's
 * length and whether the payload was donated; a donated allocation with
 * room to spare gets the trailer in place, any other payload is copied;
 * a NULL tag (the trace id's hex) travels as the id alone; every cut or
 * corrupt trailer is refused; a traced message reaches its
 * callback as the payload alone (the 0 after it), with skynet_message_trace
 * giving the trace and skynet_dispatch_ns the dispatch's start during the
 * callback only; an untraced one, and a copied payload sent with the flag,
 * carry none.
 */
#include "tt.h"

#include "fixture.h"

#include "skynet.h"
#include "skynet_malloc.h"
#include "skynet_trace.h"

#include <string.h>

static struct skynet_trace
make_trace(const char *tag, size_t len) {
	struct skynet_trace t = {.tag = tag, .tag_len = len, .span = 0x0102030405060708ull};
	for (int i = 0; i < 16; i++)
		t.trace[i] = (uint8_t)(0xa0 + i);
	return t;
}

static void
round_trip(int *failed) {
	static char tag[SKYNET_TRACE_TAG_MAX + 1];
	memset(tag, 'x', sizeof(tag));
	const size_t lens[] = {0, 1, 32, 255, 256, SKYNET_TRACE_TAG_MAX};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (int donated = 0; donated < 2; donated++) {
			struct skynet_trace t = make_trace(tag, lens[i]);
			char text[] = "payload";
			void *data = text;
			if (donated) {
				data = skynet_malloc(7);
				memcpy(data, text, 7);
			}
			size_t sz = 7;
			char *buf = skynet_trace_attach(data, &sz, donated, &t);
			TT_CHECK(buf != NULL && sz > 7 + lens[i]);
			struct skynet_trace got;
			size_t len = 0;
			TT_CHECK(skynet_trace_parse(buf, sz, &got, &len));
			TT_CHECK(len == 7 && memcmp(buf, "payload", 7) == 0 && buf[7] == '\0');
			TT_CHECK(got.tag_len == lens[i] && memcmp(got.tag, tag, lens[i]) == 0);
			TT_CHECK(memcmp(got.trace, t.trace, 16) == 0 && got.span == t.span);
			skynet_free(buf);
		}
	}
	struct skynet_trace t = make_trace(tag, SKYNET_TRACE_TAG_MAX + 1);
	size_t sz = 3;
	TT_CHECK(skynet_trace_attach("abc", &sz, false, &t) == NULL && sz == 3);
	t = make_trace("tag", 3); // no payload at all
	sz = 0;
	char *buf = skynet_trace_attach(NULL, &sz, false, &t);
	struct skynet_trace got;
	size_t len = 1;
	TT_CHECK(skynet_trace_parse(buf, sz, &got, &len) && len == 0 && got.tag_len == 3);
	skynet_free(buf);
}

static void
in_place_when_there_is_room(int *failed) {
	struct skynet_trace t = make_trace("0123456789abcdef0123456789abcdef", 32);
	size_t room = skynet_trace_size(32);
	TT_CHECK(room == 32 + 1 + 16 + 8 + 2);
	char *data = skynet_malloc(7 + room); // as skynet.pack in a traced coroutine
	memcpy(data, "payload", 7);
	size_t sz = 7;
	char *buf = skynet_trace_attach(data, &sz, true, &t);
	TT_CHECK(buf == data && sz == 7 + room);
	struct skynet_trace got;
	size_t len = 0;
	TT_CHECK(skynet_trace_parse(buf, sz, &got, &len) && len == 7);
	TT_CHECK(memcmp(buf, "payload", 7) == 0 && got.tag_len == 32 && got.span == t.span);
	skynet_free(buf);
	// too small an allocation: a new buffer (the old one freed: ASan checks)
	data = skynet_malloc(7);
	memcpy(data, "payload", 7);
	TT_CHECK(skynet_malloc_usable(data) < 7 + room);
	sz = 7;
	buf = skynet_trace_attach(data, &sz, true, &t);
	TT_CHECK(buf != data && sz == 7 + room && memcmp(buf, "payload", 7) == 0);
	skynet_free(buf);
	// room, but not donated: the caller's memory is never written
	char mine[128];
	memset(mine, 'm', sizeof(mine));
	memcpy(mine, "payload", 7);
	sz = 7;
	buf = skynet_trace_attach(mine, &sz, false, &t);
	TT_CHECK(buf != mine && mine[7] == 'm' && mine[sizeof(mine) - 1] == 'm');
	TT_CHECK(skynet_trace_parse(buf, sz, &got, &len) && len == 7);
	skynet_free(buf);
}

/* append judges the room by the size it is told, not by the allocator:
 * told enough, in place; told too little, a new buffer (ASan checks the
 * old one is freed); told 0, it asks the allocator as attach does. The
 * trailer it appends is the one encode made, the one attach appends. */
static void
in_place_by_the_size_told(int *failed) {
	struct skynet_trace t = make_trace(NULL, 0);
	size_t room = skynet_trace_size(0);
	char trailer[SKYNET_TRACE_FIXED];
	TT_CHECK(skynet_trace_encode(&t, trailer) == room);
	char *data = skynet_malloc(7 + room);
	memcpy(data, "payload", 7);
	size_t sz = 7;
	char *buf = skynet_trace_append(data, &sz, true, 7 + room, trailer, room);
	TT_CHECK(buf == data && sz == 7 + room);
	struct skynet_trace got;
	size_t len = 0;
	TT_CHECK(skynet_trace_parse(buf, sz, &got, &len) && len == 7 && got.span == t.span);
	char plain[7 + SKYNET_TRACE_FIXED];
	size_t plain_sz = 7;
	char *attached = skynet_trace_attach(memcpy(plain, "payload", 7), &plain_sz, false, &t);
	TT_CHECK(plain_sz == sz && memcmp(attached, buf, sz) == 0);
	skynet_free(attached);
	// told less than the trailer needs, though the allocation has it: copied
	sz = 7;
	char *copy = skynet_trace_append(buf, &sz, true, 7 + room - 1, trailer, room);
	TT_CHECK(copy != buf && sz == 7 + room && memcmp(copy, "payload", 7) == 0);
	TT_CHECK(skynet_trace_parse(copy, sz, &got, &len) && len == 7);
	// told nothing: the allocator's size decides
	sz = 7;
	buf = skynet_trace_append(copy, &sz, true, 0, trailer, room);
	TT_CHECK(buf == copy && sz == 7 + room);
	// not donated: copied, the caller's bytes untouched
	char mine[8] = "payload";
	sz = 7;
	char *other = skynet_trace_append(mine, &sz, false, sizeof(mine) + 100, trailer, room);
	TT_CHECK(other != mine && sz == 7 + room && mine[7] == 0);
	TT_CHECK(skynet_trace_parse(other, sz, &got, &len) && len == 7);
	skynet_free(other);
	skynet_free(buf);
	// no payload at all, however much room it is told of: a buffer of its own
	sz = 0;
	char *alone = skynet_trace_append(NULL, &sz, true, 7 + room, trailer, room);
	TT_CHECK(alone != NULL && sz == room && skynet_trace_parse(alone, sz, &got, &len) && len == 0);
	skynet_free(alone);
	// a tag too long encodes nothing
	struct skynet_trace long_tag = make_trace("x", SKYNET_TRACE_TAG_MAX + 1);
	TT_CHECK(skynet_trace_encode(&long_tag, trailer) == 0);
}

/* A NULL tag (the trace id's hex) travels as the id alone: 27 bytes, the
 * id and span back, the tag NULL again; with an all-zero id it is refused. */
static void
id_tag_travels_as_the_id(int *failed) {
	struct skynet_trace t = make_trace(NULL, 0);
	size_t sz = 7;
	char *buf = skynet_trace_attach("payload", &sz, false, &t);
	TT_CHECK(buf != NULL && sz == 7 + skynet_trace_size(0) && skynet_trace_size(0) == 27);
	struct skynet_trace got = {.tag = "x", .tag_len = 9};
	size_t len = 0;
	TT_CHECK(skynet_trace_parse(buf, sz, &got, &len) && len == 7 && buf[7] == '\0');
	TT_CHECK(got.tag == NULL && got.tag_len == 0);
	TT_CHECK(memcmp(got.trace, t.trace, 16) == 0 && got.span == t.span);
	memset(buf + 8, 0, 16); // the id zeroed: no tag at all
	TT_CHECK(!skynet_trace_parse(buf, sz, &got, &len));
	skynet_free(buf);
	// a tag of the longest length is still a tag, not the id
	static char tag[SKYNET_TRACE_TAG_MAX];
	memset(tag, 'y', sizeof(tag));
	t = make_trace(tag, sizeof(tag));
	sz = 0;
	buf = skynet_trace_attach(NULL, &sz, false, &t);
	TT_CHECK(skynet_trace_parse(buf, sz, &got, &len) && got.tag != NULL);
	TT_CHECK(got.tag_len == sizeof(tag));
	skynet_free(buf);
}

static void
malformed_is_refused(int *failed) {
	struct skynet_trace t = make_trace("0123456789abcdef", 16);
	size_t sz = 5;
	char *buf = skynet_trace_attach("hello", &sz, false, &t);
	struct skynet_trace got = {.tag_len = 77};
	size_t len = 99;
	for (size_t cut = 1; cut < sz; cut++) // the buffer cut short at its end
		TT_CHECK(!skynet_trace_parse(buf, sz - cut, &got, &len));
	for (size_t n = 0; n < sz - 5; n++) // the trailer's tail without its start
		TT_CHECK(!skynet_trace_parse(buf + sz - n, n, &got, &len));
	buf[5] = 'z'; // the 0 after the payload
	TT_CHECK(!skynet_trace_parse(buf, sz, &got, &len));
	buf[5] = 0;
	buf[sz - 1] = 0x7f; // a tag length past the buffer
	TT_CHECK(!skynet_trace_parse(buf, sz, &got, &len));
	TT_CHECK(!skynet_trace_parse(NULL, 100, &got, &len));
	TT_CHECK(got.tag_len == 77 && len == 99); // untouched
	skynet_free(buf);
}

static struct {
	int n;
	size_t sz;
	char text[16];
	bool traced, terminated;
	struct skynet_trace trace;
	char tag[32];
	uint64_t dispatch_ns, cb_ns;
} SEEN;

static int
seen_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
        const void *msg, size_t sz) {
	SEEN.n++;
	SEEN.sz = sz;
	SEEN.dispatch_ns = skynet_dispatch_ns();
	SEEN.cb_ns = skynet_monotonic_ns();
	memcpy(SEEN.text, msg, sz < sizeof(SEEN.text) ? sz : sizeof(SEEN.text));
	SEEN.terminated = ((const char *)msg)[sz] == '\0';
	const struct skynet_trace *t = skynet_message_trace();
	SEEN.traced = t != NULL;
	if (t != NULL) {
		SEEN.trace = *t;
		memcpy(SEEN.tag, t->tag, t->tag_len < sizeof(SEEN.tag) ? t->tag_len : sizeof(SEEN.tag));
	}
	return 0;
}

static int
seen_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, seen_cb);
	return 0;
}

static void
dispatch_strips_the_trailer(int *failed) {
	const struct skynet_module mod = {.name = "seen", .init = seen_init};
	fixture_setup(0, &mod, 1, true);
	struct skynet_context *ctx = fixture_service("seen", "");
	TT_CHECK(ctx != NULL);
	uint32_t h = skynet_context_handle(ctx);
	struct skynet_trace t = make_trace("the-tag", 7);
	size_t sz = 5;
	char *buf = skynet_trace_attach("hello", &sz, false, &t);
	int r = skynet_send(ctx, 0, h, PTYPE_TEXT | PTYPE_TAG_DONTCOPY | PTYPE_TAG_TRACED, 0, buf, sz);
	TT_CHECK(r == 0);
	skynet_context_dispatchall(ctx);
	TT_CHECK(SEEN.n == 1 && SEEN.sz == 5 && memcmp(SEEN.text, "hello", 5) == 0);
	TT_CHECK(SEEN.terminated);
	TT_CHECK(SEEN.traced && SEEN.trace.tag_len == 7 && memcmp(SEEN.tag, "the-tag", 7) == 0);
	TT_CHECK(SEEN.trace.span == t.span && memcmp(SEEN.trace.trace, t.trace, 16) == 0);
	TT_CHECK(skynet_message_trace() == NULL); // only during the callback
	// the dispatch's clock reading, taken before the callback (the node profiles)
	TT_CHECK(SEEN.dispatch_ns != 0 && SEEN.dispatch_ns <= SEEN.cb_ns);
	TT_CHECK(skynet_dispatch_ns() == 0);
	skynet_send(ctx, 0, h, PTYPE_TEXT, 0, "plain", 5);
	skynet_context_dispatchall(ctx);
	TT_CHECK(SEEN.n == 2 && SEEN.sz == 5 && !SEEN.traced);
	// the flag means nothing on a payload the core copies: no trailer was made
	skynet_send(ctx, 0, h, PTYPE_TEXT | PTYPE_TAG_TRACED, 0, "copied", 6);
	skynet_context_dispatchall(ctx);
	TT_CHECK(SEEN.n == 3 && SEEN.sz == 6 && !SEEN.traced);
	fixture_teardown();
}

int
main(void) {
	skynet_globalinit();
	TT_RUN(round_trip);
	TT_RUN(in_place_when_there_is_room);
	TT_RUN(in_place_by_the_size_told);
	TT_RUN(id_tag_travels_as_the_id);
	TT_RUN(malformed_is_refused);
	TT_RUN(dispatch_strips_the_trailer);
	skynet_globalexit();
	return tt_summary();
}
