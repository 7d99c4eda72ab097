#ifndef SKYNET_SQLITE_DBTHREAD_H
#define SKYNET_SQLITE_DBTHREAD_H

/*
 * A database thread of skynet.db.sqlite: one thread and one request queue
 * per database, the only code that calls into SQLite. dbthread.c's top
 * comment has the design (group commit, replies, lifetime).
 */

#include <stddef.h>
#include <stdint.h>

struct sqlite_db;

/* One request: kind (enum wire_kind) and body in wire.h's request format. */
struct sqlite_req {
	struct sqlite_req *next; // the queue's link
	uint32_t id;             // chosen by the service, echoed in the reply
	int kind;
	size_t len;
	char body[]; // len bytes
};

/* A request with room for a body of len bytes (skynet_malloc; never NULL). */
struct sqlite_req *sqlite_req_create(int kind, uint32_t id, size_t len);

/*
 * Start a database thread that answers the service owner with PTYPE_SQLITE
 * messages. Its first request must be an OPEN. Returns NULL when the thread
 * cannot be started. The caller holds one reference (release it with
 * sqlite_db_release), the thread another.
 */
struct sqlite_db *sqlite_db_create(uint32_t owner);

/*
 * Queue req for the thread. Takes ownership of req on every path. Returns
 * 0, or SKYNET_EDEAD when the thread has stopped (a CLOSE was handled or
 * the db was abandoned): req is freed and gets no answer. Thread-safe; the
 * lock is held for O(1) work.
 */
int sqlite_db_submit(struct sqlite_db *db, struct sqlite_req *req);

/*
 * Wait for the thread to end. Call only after the answer to a CLOSE
 * arrived: the thread has no disk work left, so this returns at once.
 * Not with sqlite_db_abandon; at most once.
 */
void sqlite_db_join(struct sqlite_db *db);

/*
 * Let the thread end by itself: it answers what is queued, closes the
 * database and exits, without anyone joining it. For a db whose owner goes
 * away without closing it (its userdata is collected). Not after
 * sqlite_db_join; at most once.
 */
void sqlite_db_abandon(struct sqlite_db *db);

/* Drop a reference; the last one frees db. NULL does nothing. Thread-safe. */
void sqlite_db_release(struct sqlite_db *db);

/* Counters since start: transactions committed, requests answered. Thread-safe. */
void sqlite_db_stats(struct sqlite_db *db, uint64_t *commits, uint64_t *requests);

#endif
