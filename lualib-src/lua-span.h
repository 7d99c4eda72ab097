#ifndef SKYNET_LUA_SPAN_H
#define SKYNET_LUA_SPAN_H

/*
 * What the span ring (lua-span.c, module skynet.tracing.core) shares with
 * skynet.kernel, in the same luaclib/skynet.so: the record of one span, the
 * ids, and how a finished span is kept. The ring is one per process.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

#define SPAN_NAME_MAX  48
#define SPAN_TRACE_HEX 32 // a trace id as text: 16 bytes in lower-case hex
#define SPAN_ID_HEX    16 // a span id as text: 8 bytes

enum span_status { SPAN_OK = 1, SPAN_ERROR = 2 };

/* One span: a traced request served by one service, or a trace's first
 * coroutine. Times are CLOCK_MONOTONIC nanoseconds (skynet_monotonic_ns):
 * a clock read costs the same either way, but a request's span can start
 * at the reading its dispatch took anyway. The ring's readers (find and
 * drain, lua-span.c) turn them into wall-clock nanoseconds since the epoch
 * with the clocks' difference as they read, so the durations are the
 * monotonic clock's even when the wall clock is stepped. */
struct skynet_span {
	uint8_t trace[16];
	uint64_t span, parent; // parent 0: a root span
	uint64_t start_ns, end_ns;
	uint32_t address, source;
	uint8_t status; // enum span_status
	char name[SPAN_NAME_MAX];
};

struct skynet_context;

/* A new span id (never 0, unique in this process, random-looking). Thread-safe. */
uint64_t skynet_span_new_id(void);
/* Fill out with a new random trace id. Thread-safe. */
void skynet_span_new_trace(uint8_t out[16]);
/*
 * The trace id of a tag: a tag of 32 hex digits, alone or after a
 * "(...)" prefix (skynet's cluster prefix), is that id; any other tag maps
 * to a hash of its text. Writes out; never fails.
 */
void skynet_span_trace_of(const char *tag, size_t len, uint8_t out[16]);
/* Write 2*n lower-case hex digits of bytes to out (no terminator). */
void skynet_span_hex(const uint8_t *bytes, size_t n, char *out);
/* The 16 hex digits of span id (no terminator). */
void skynet_span_id_hex(uint64_t id, char out[SPAN_ID_HEX]);
/* The span id of 8 big-endian bytes. */
uint64_t skynet_span_id_of(const uint8_t bytes[8]);
/* Parse exactly 2*n hex digits of text into out; false when they are not. */
bool skynet_span_unhex(const char *text, size_t n, uint8_t *out);
/*
 * Keep a copy of the finished span in the node's ring (its size is the
 * config key trace_spans, read through ctx the first time). Thread-safe;
 * takes a mutex for a copy of one record.
 */
void skynet_span_keep(struct skynet_context *ctx, const struct skynet_span *s);

#pragma GCC visibility pop

#endif
