#ifndef SKYNET_FINE_H
#define SKYNET_FINE_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Precise timers as a pure data structure: deadlines in microseconds of
 * the caller's clock, kept in a min-heap with an index from (handle,
 * session) to the heap, so that add, cancel and pop cost O(log n). No
 * clock, no thread, no lock: the caller (skynet_timer.c) serialises every
 * call. Design notes in skynet_fine.c.
 */

#include "skynet_wheel.h"

#include <stddef.h>
#include <stdint.h>

struct skynet_fine;

struct skynet_fine *skynet_fine_create(void);
void skynet_fine_release(struct skynet_fine *f);

/* Add the timer (handle, session) due at due_us. */
void skynet_fine_add(struct skynet_fine *f, uint32_t handle, int session, uint64_t due_us);

/*
 * Remove the pending timer (handle, session); of several, the one added
 * last. Returns 0, or SKYNET_ENOENT when none is pending.
 */
int skynet_fine_cancel(struct skynet_fine *f, uint32_t handle, int session);

/* The earliest deadline, or UINT64_MAX when nothing is pending. */
uint64_t skynet_fine_next(const struct skynet_fine *f);

/*
 * Take out at most cap timers due at or before now_us, in deadline order
 * (timers with the same deadline in the order they were added); due[i]
 * (when due is not NULL) receives out[i]'s deadline. Returns how many.
 */
size_t skynet_fine_pop(struct skynet_fine *f, uint64_t now_us, struct skynet_wheel_expired *out,
                       uint64_t *due, size_t cap);

/* Drop every timer of handle, in time proportional to all pending timers. Returns how many. */
size_t skynet_fine_remove_service(struct skynet_fine *f, uint32_t handle);

/* Pending timers of handle, or all of them when handle is 0. O(n) for a handle. */
size_t skynet_fine_pending(const struct skynet_fine *f, uint32_t handle);

#endif
