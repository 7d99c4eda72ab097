#ifndef SKYNET_SQLITE_WIRE_H
#define SKYNET_SQLITE_WIRE_H

/*
 * The byte formats between a service and its database thread
 * (skynet.db.sqlite), and the growable buffer both sides write them with.
 * Numbers are in host order: both ends are threads of one process.
 *
 * Request body (struct sqlite_req.body), kind OPEN:
 *   u8 sync (WIRE_SYNC_*), u8 wal, u8 readonly, u8 create, u8 exclusive,
 *   i64 busy_ms, str path
 * kinds EXEC, QUERY and BATCH: u32 count, then count statements, each
 *   str sql, u32 nparams, nparams values
 * kind CLOSE: empty.
 * value: u8 WIRE_NULL | WIRE_INT i64 | WIRE_FLOAT f64 | WIRE_TEXT str | WIRE_BLOB str
 * str: u32 length, then that many bytes (any bytes; no terminator).
 *
 * Reply (the payload of one PTYPE_SQLITE message): records one after the
 * other until the end of the payload, one per request the batch held:
 *   u32 id, u8 status (WIRE_ERR, or on success the request's kind), then
 *   WIRE_ERR: str message
 *   OPEN or CLOSE: nothing
 *   EXEC or QUERY: one result (EXEC: WIRE_CHANGES; QUERY: WIRE_ROWS)
 *   BATCH: u32 count, count results
 * result: u8 WIRE_CHANGES, i64 changes, i64 last_insert_rowid
 *       | u8 WIRE_ROWS, u32 ncols, ncols str names, u32 nrows, nrows * ncols values
 */

#include "skynet_malloc.h"

#include <stdint.h>
#include <string.h>

enum wire_value {
	WIRE_NULL = 0,
	WIRE_INT = 1,
	WIRE_FLOAT = 2,
	WIRE_TEXT = 3,
	WIRE_BLOB = 4,
};

enum wire_kind {
	WIRE_OPEN = 1,
	WIRE_CLOSE,
	WIRE_EXEC,
	WIRE_QUERY,
	WIRE_BATCH,
};

enum wire_sync { WIRE_SYNC_OFF = 0, WIRE_SYNC_NORMAL, WIRE_SYNC_FULL };

/* The status byte of a failed answer (a successful one holds its kind, never 0). */
#define WIRE_ERR 0

enum wire_result { WIRE_CHANGES = 1, WIRE_ROWS = 2 };

/* A growable byte buffer: p[0..len) written, cap allocated. */
struct wire_buf {
	char *p; // owned (skynet_malloc), NULL while cap is 0
	size_t len;
	size_t cap;
};

/* Make room for n more bytes; returns where they go. */
static inline char *
wire_reserve(struct wire_buf *b, size_t n) {
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->len + n)
			cap *= 2;
		b->p = skynet_realloc(b->p, cap);
		b->cap = cap;
	}
	return b->p + b->len;
}

/* data may be NULL when n is 0 (SQLite's pointer to an empty BLOB). */
static inline void
wire_put(struct wire_buf *b, const void *data, size_t n) {
	if (n == 0)
		return;
	memcpy(wire_reserve(b, n), data, n);
	b->len += n;
}

static inline void
wire_put_u8(struct wire_buf *b, uint8_t v) {
	wire_put(b, &v, 1);
}

static inline void
wire_put_u32(struct wire_buf *b, uint32_t v) {
	wire_put(b, &v, 4);
}

static inline void
wire_put_i64(struct wire_buf *b, int64_t v) {
	wire_put(b, &v, 8);
}

static inline void
wire_put_str(struct wire_buf *b, const void *s, size_t n) {
	wire_put_u32(b, (uint32_t)n);
	wire_put(b, s, n);
}

/* A reader over bytes the other side wrote; bad is set on a short read. */
struct wire_reader {
	const char *p; // borrowed: the buffer being read
	size_t left;
	int bad;
};

static inline const char *
wire_take(struct wire_reader *r, size_t n) {
	if (r->bad || r->left < n) {
		r->bad = 1;
		return NULL;
	}
	const char *at = r->p;
	r->p += n;
	r->left -= n;
	return at;
}

static inline uint8_t
wire_get_u8(struct wire_reader *r) {
	const char *at = wire_take(r, 1);
	return at ? (uint8_t)*at : 0;
}

static inline uint32_t
wire_get_u32(struct wire_reader *r) {
	uint32_t v = 0;
	const char *at = wire_take(r, 4);
	if (at)
		memcpy(&v, at, 4);
	return v;
}

static inline int64_t
wire_get_i64(struct wire_reader *r) {
	int64_t v = 0;
	const char *at = wire_take(r, 8);
	if (at)
		memcpy(&v, at, 8);
	return v;
}

/* The bytes of a str; *n gets their length. NULL (and r->bad) on a short read. */
static inline const char *
wire_get_str(struct wire_reader *r, size_t *n) {
	*n = wire_get_u32(r);
	return wire_take(r, *n);
}

#endif
