#ifndef SKYNET_SQLITE_WALSYNC_H
#define SKYNET_SQLITE_WALSYNC_H

/*
 * The WAL syncer of a database thread (skynet.db.sqlite with sync "full"
 * on a WAL database): it makes committed groups durable with fdatasync of
 * the WAL file and only then posts their answers, while the database
 * thread goes on with the next groups. Design: walsync.c's top comment.
 */

#include "wire.h"

#include "atomic.h"

#include <stdbool.h>
#include <stdint.h>

struct walsync;

/* Posts one batch of answers (n requests) to the owner; takes out's buffer. */
typedef void (*walsync_post)(void *ud, struct wire_buf *out, int n);

/*
 * Start the syncer of the WAL file at wal_path; it adds 1 to *syncs at each
 * fdatasync. NULL when no thread can be started.
 */
struct walsync *walsync_start(const char *wal_path, walsync_post post, void *ud, ATOM_U64 *syncs);

/*
 * Queue the answers of a group of n requests (ids[i] is the i-th one's id)
 * for posting, after an fdatasync of the WAL when sync (the group committed
 * a transaction). Takes out's buffer and ids. Batches are posted in the
 * order they were queued.
 */
void walsync_push(struct walsync *s, struct wire_buf *out, int n, uint32_t *ids, bool sync);

/*
 * Sync the WAL once more, post every queued batch, end the thread and free
 * s. Call before the database is closed. NULL does nothing.
 */
void walsync_stop(struct walsync *s);

#endif
