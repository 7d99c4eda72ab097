#ifndef SKYNET_HANDLE_H
#define SKYNET_HANDLE_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * The handle table: 32-bit service addresses (harbor id in the top 8 bits,
 * a 24-bit index below) mapped to contexts, plus local names. See
 * skynet_handle.c for the allocation rule and locking.
 *
 * The table knows handles and names only. Contexts are opaque to it: it
 * takes and drops references through the two callbacks given to init (the
 * context layer's refcount), and it never calls the timer or any other
 * module. Retiring a service as a whole (handle, names, pending timers) is
 * skynet_context_retire's job (skynet_server.c), which calls
 * skynet_handle_retire for the table's part.
 */

#include <stdint.h>

#define HANDLE_MASK         0xffffff
#define HANDLE_REMOTE_SHIFT 24

struct skynet_context;

/* Take a reference on ctx. Runs under the table's read lock: O(1), never blocks. */
typedef void (*skynet_handle_grab_cb)(struct skynet_context *ctx);
/* Drop a reference on ctx (may free it). Runs with no table lock held. */
typedef struct skynet_context *(*skynet_handle_release_cb)(struct skynet_context *ctx);

/*
 * Set up the table for harbor id harbor (0..255), with the context layer's
 * reference counting (skynet_context_grab and skynet_context_release, both
 * required). Call once, before any other function here.
 */
void skynet_handle_init(int harbor, skynet_handle_grab_cb grab, skynet_handle_release_cb release);
/* Free the table (contexts still registered are not released). */
void skynet_handle_exit(void);

/*
 * Registration, in two steps so that no thread can grab a half-built
 * context. Reserve returns a fresh handle (never 0); its slot is taken, but
 * grab and retire find nothing there until publish. Publish makes ctx, which
 * must be complete (its handle and queue set), reachable at handle; the
 * table takes over one reference the caller holds. Every reserved handle
 * must be published. Both thread-safe.
 */
uint32_t skynet_handle_reserve(void);
void skynet_handle_publish(uint32_t handle, struct skynet_context *ctx);
/*
 * The table's part of retiring a service: remove handle and its names, then
 * drop the table's reference (the release callback, after unlocking).
 * Returns 1 if it was registered, 0 otherwise. Thread-safe. The runtime
 * retires services only through skynet_context_retire, which also drops
 * the service's timers.
 */
int skynet_handle_retire(uint32_t handle);
/*
 * Walk the published handles: the first one whose slot index is >= *cursor
 * (start at 0), or 0 when there is none; *cursor moves past its slot.
 * Thread-safe; the table may change during a walk (a handle published into
 * a slot already passed is not seen, and growth reorders the slots, so a
 * caller that must see every handle repeats the walk until it finds none).
 */
uint32_t skynet_handle_next(int *cursor);

/*
 * The context for handle with a reference taken, or NULL. Drop the reference
 * with skynet_handle_drop (or skynet_context_release) when done.
 */
struct skynet_context *skynet_handle_grab(uint32_t handle);
/*
 * Drop a reference taken by skynet_handle_grab, through the release callback
 * given to init (so that modules below the context layer can). Thread-safe.
 */
void skynet_handle_drop(struct skynet_context *ctx);

/* Handle bound to name (without the leading dot), or 0. */
uint32_t skynet_handle_findname(const char *name);
/* Bind name to handle: the stored name (borrowed, lives while bound) or NULL if taken. */
const char *skynet_handle_namehandle(uint32_t handle, const char *name);

/* Number of published handles. */
int skynet_handle_count(void);

/* Move the allocation cursor to index (1..0xffffff); lets tests reach the wrap. */
void skynet_handle_set_cursor(uint32_t index);

#endif
