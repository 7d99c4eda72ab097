#ifndef SKYNET_WHEEL_H
#define SKYNET_WHEEL_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * The timer wheel as a pure data structure: no clock, no thread, no lock.
 * Time is a 32-bit tick counter that wraps; the caller (skynet_timer.c, or
 * a test driving a fake clock) moves it forward with skynet_wheel_advance.
 * A timer is (handle, session, expiry tick). Design notes in skynet_wheel.c.
 *
 * Threads: nothing here is thread-safe. The caller serialises every call on
 * one wheel (skynet_timer.c holds a spinlock around each; every call does
 * O(1) work, or O(cap) for the batched ones).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Largest delay in ticks (2^32 - 2^26): a longer one could wrap into the
 * top-level slot the counter is in now and fire a whole lap early.
 */
#define WHEEL_MAX_DELAY 0xfc000000u

struct skynet_wheel;

/* A timer that fell due, as handed out by skynet_wheel_advance. */
struct skynet_wheel_expired {
	uint32_t handle;
	int session;
};

/* Work counters since creation, for tests and benchmarks. */
struct skynet_wheel_stats {
	uint64_t steps;    // ticks at which the wheel stopped (a slot fired or cascaded)
	uint64_t cascaded; // timers moved down a level
	uint64_t fired;    // timers handed out by skynet_wheel_advance
	uint64_t chunks;   // node chunks allocated (pool growth)
	uint64_t unlinked; // timers visited by skynet_wheel_remove_service
};

/* An empty wheel whose counter reads time. Free with skynet_wheel_release. */
struct skynet_wheel *skynet_wheel_create(uint32_t time);
/* Free w and every pending timer (no timer fires). NULL does nothing. */
void skynet_wheel_release(struct skynet_wheel *w);

/* The current tick. */
uint32_t skynet_wheel_time(const struct skynet_wheel *w);

/*
 * Add a timer for (handle, session) due delay ticks after the current
 * tick. delay is clamped to 1..WHEEL_MAX_DELAY. Timers due on the same tick
 * fire in the order they were added. O(1); allocates only when the node
 * pool is empty (one chunk for many timers).
 */
void skynet_wheel_add(struct skynet_wheel *w, uint32_t handle, int session, uint32_t delay);

/*
 * Remove the pending timer (handle, session); when several share the pair,
 * the one added last. Its node is reused by the next add. Returns 0, or
 * SKYNET_ENOENT when no such timer is pending. O(1) expected.
 */
int skynet_wheel_cancel(struct skynet_wheel *w, uint32_t handle, int session);

/*
 * Remove at most max pending timers of handle. Returns the number removed;
 * a return of max means some may remain (call again). Costs O(removed),
 * whatever the number of other timers.
 */
size_t skynet_wheel_remove_service(struct skynet_wheel *w, uint32_t handle, size_t max);

/*
 * Fire what is due and move the wheel forward by up to *ticks ticks,
 * writing each expired timer into out (cap > 0 entries, borrowed) in firing
 * order. Returns the number written and lowers *ticks by the ticks covered.
 * First fires the timers still due at the current tick (from an earlier
 * call that stopped early), then steps tick by tick, skipping empty
 * stretches: the cost is proportional to the timers fired and cascaded,
 * not to *ticks. Stops early, with work left, once out is full or about
 * cap units of work are done: call again while *ticks > 0 or
 * skynet_wheel_has_due(w).
 */
size_t skynet_wheel_advance(struct skynet_wheel *w, uint64_t *ticks,
                            struct skynet_wheel_expired *out, size_t cap);

/* True when work is due at the current tick (a timer to fire or a cascade to finish). */
bool skynet_wheel_has_due(const struct skynet_wheel *w);

/*
 * Ticks from the current tick to the next one at which the wheel has work:
 * 0 when skynet_wheel_has_due, UINT64_MAX when no timer is pending. Never
 * beyond the earliest pending expiry, so advancing by it repeatedly until
 * something fires lands exactly on that expiry. O(1).
 */
uint64_t skynet_wheel_next_event(const struct skynet_wheel *w);

/* Pending timers of handle. O(1) expected. */
size_t skynet_wheel_pending(const struct skynet_wheel *w, uint32_t handle);
/* Pending timers in total. O(1). */
size_t skynet_wheel_count(const struct skynet_wheel *w);
/* Bytes of memory the wheel holds (its struct, node pool and indexes). */
size_t skynet_wheel_bytes(const struct skynet_wheel *w);
/* Copy the work counters into *stats. */
void skynet_wheel_stats(const struct skynet_wheel *w, struct skynet_wheel_stats *stats);

#endif
