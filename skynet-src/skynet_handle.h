#ifndef SKYNET_HANDLE_H
#define SKYNET_HANDLE_H

/*
 * The handle table: 32-bit service addresses (harbor id in the top 8 bits,
 * a 24-bit index below) mapped to contexts, plus local names. See
 * skynet_handle.c for the allocation rule and locking.
 */

#include <stdint.h>

#define HANDLE_MASK         0xffffff
#define HANDLE_REMOTE_SHIFT 24

struct skynet_context;

/* Set up the table for harbor id harbor (0..255). Call once. */
void skynet_handle_init(int harbor);
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
 * Remove handle and its names and drop the table's reference. Returns 1 if
 * it was registered, 0 otherwise. Thread-safe.
 */
int skynet_handle_retire(uint32_t handle);
/* Retire every handle (ABORT). */
void skynet_handle_retireall(void);

/* The context for handle with a reference taken, or NULL. Release it when done. */
struct skynet_context *skynet_handle_grab(uint32_t handle);

/* Handle bound to name (without the leading dot), or 0. */
uint32_t skynet_handle_findname(const char *name);
/* Bind name to handle: the stored name (borrowed, lives while bound) or NULL if taken. */
const char *skynet_handle_namehandle(uint32_t handle, const char *name);

/* Number of published handles. */
int skynet_handle_count(void);

/* Move the allocation cursor to index (1..0xffffff); lets tests reach the wrap. */
void skynet_handle_set_cursor(uint32_t index);

#endif
