#ifndef SKYNET_TIMER_H
#define SKYNET_TIMER_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * The node's timer service: one wheel (skynet_wheel.h) driven by the timer
 * thread from CLOCK_MONOTONIC in centiseconds, or, in virtual time, by the
 * scheduler whenever the node is idle; beside it a heap of precise timers
 * (skynet_fine.h) in microseconds. Expired timers become PTYPE_RESPONSE
 * messages (source 0, the timer's session, no data) in the owner's queue;
 * one for a service that is gone is dropped. Messages are pushed without
 * holding the timer's lock. Locking and time rules: skynet_timer.c.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set up the clock and the wheel. virtual_time: never read the clock. Call once. */
void skynet_timer_init(bool virtual_time);
/* Free everything (pending timers are dropped). Call after every thread stopped. */
void skynet_timer_exit(void);

/*
 * Deliver a response to handle with session after time_cs centiseconds:
 * time_cs <= 0 queues it at once; otherwise it arrives at the first tick
 * >= now + time_cs (now counting the centiseconds elapsed since the last
 * update, so it never arrives a whole tick early). Returns session, or
 * SKYNET_EDEAD when time_cs <= 0 and handle is dead (a later timer for a
 * dead handle is dropped when it fires). Timers due on the same tick arrive
 * in the order they were set. Thread-safe; O(1), never waits for dispatch.
 */
int skynet_timeout(uint32_t handle, int time_cs, int session);

/*
 * A precise timer: deliver the response to handle with session once
 * delay_us microseconds of the monotonic clock have passed, never earlier,
 * and within the timer thread's wake-up latency after (not at the next
 * centisecond tick). delay_us <= 0 queues it at once (SKYNET_EDEAD when
 * handle is dead). In virtual time it is a skynet_timeout of the whole
 * centiseconds that cover delay_us. Cancel and retirement treat both kinds
 * alike. Thread-safe; O(log n) in the precise timers pending.
 */
int skynet_timeout_us(uint32_t handle, int64_t delay_us, int session);

/*
 * Remove the pending timer (handle, session); of several, the one set last.
 * Returns 0 (no message will be sent), or SKYNET_ENOENT when none is pending
 * (it never existed, or it fired: its message may still be on its way).
 * Thread-safe, O(1).
 */
int skynet_timer_cancel(uint32_t handle, int session);

/*
 * Drop every pending timer of handle (it retired), in time proportional to
 * its own timers. Timers set for handle afterwards stay (and are dropped when
 * they fire). Thread-safe.
 */
void skynet_timer_remove_service(uint32_t handle);

/*
 * Timer thread: read the clock, advance now and the wheel one tick per
 * elapsed cs (catching up a jump in time proportional to the timers due)
 * and queue what fired. A clock going backwards is logged once and never
 * moves now back. Does nothing in virtual time. Serialised internally.
 */
void skynet_updatetime(void);

/*
 * Timer thread, after skynet_updatetime: microseconds until the tick of the
 * next pending deadline begins, or until the next precise deadline if that
 * comes first (0 when something is due), at most max_us. Records that
 * instant as the thread's wake-up point: a skynet_timeout or
 * skynet_timeout_us whose deadline comes earlier calls the kick callback.
 * Real time only.
 */
uint64_t skynet_timer_wait_us(uint64_t max_us);

typedef void (*skynet_timer_kick_cb)(void);

/*
 * Install the callback that wakes the timer thread early (see
 * skynet_timer_wait_us); NULL removes it. It runs on the adding thread,
 * outside the timer's lock. Call while no other thread uses the timer.
 */
void skynet_timer_set_kick(skynet_timer_kick_cb kick);

/*
 * Virtual time: jump the clock to the next pending deadline and fire what
 * is due (now is set before the messages are queued). Returns false (and
 * does nothing) when no timer is pending, or in real time. Called by the
 * scheduler only while every worker is idle. Serialised internally.
 */
bool skynet_timer_advance_idle(void);

/* A monotonic clock reading in microseconds. */
typedef uint64_t (*skynet_timer_clock_cb)(void);

/*
 * Replace the monotonic clock the timer reads (NULL restores
 * CLOCK_MONOTONIC), for tests that drive a fake clock. Call before
 * skynet_timer_init, while no other thread uses the timer.
 */
void skynet_timer_set_clock(skynet_timer_clock_cb clock);

/* Node start, UTC seconds (the wall clock at init, in virtual time too). Thread-safe. */
uint32_t skynet_starttime(void);

/* Called by the timer for a wake timer (skynet_timer_wake); runs on the advancing thread. */
typedef void (*skynet_timer_wake_cb)(uint32_t handle);

/*
 * Install the wake callback (NULL removes it). Call while no other thread
 * uses the timer.
 */
void skynet_timer_set_wake(skynet_timer_wake_cb wake);

/*
 * A wake timer: after time_cs (at least one tick) the wake callback is
 * called with handle instead of a message being sent (the budget's
 * throttle resumes a deferred queue with it). It is a timer of handle
 * like any other: skynet_timer_remove_service drops it, and
 * skynet_timer_pending counts it. It uses session 0, which no message
 * timer uses. Thread-safe.
 */
void skynet_timer_wake(uint32_t handle, int time_cs);

/* Pending timers owned by handle, or in total when handle is 0. Thread-safe. */
size_t skynet_timer_pending(uint32_t handle);

#endif
