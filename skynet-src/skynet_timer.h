#ifndef SKYNET_TIMER_H
#define SKYNET_TIMER_H

/*
 * The node's timer service: one wheel (skynet_wheel.h) driven by the timer
 * thread from CLOCK_MONOTONIC in centiseconds, or, in virtual time, by the
 * scheduler whenever the node is idle. Expired timers become PTYPE_RESPONSE
 * messages (source 0, the timer's session, no data) in the owner's queue.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set up the clock and the wheel. virtual_time: never read the clock. Call once. */
void skynet_timer_init(bool virtual_time);
/* Free everything (pending timers are dropped). Call after every thread stopped. */
void skynet_timer_exit(void);
/* True when the node runs on virtual time. */
bool skynet_timer_is_virtual(void);

/*
 * Deliver a response to handle with session after time_cs centiseconds:
 * time_cs <= 0 queues it at once; otherwise it arrives at the first tick
 * >= now + time_cs. Returns session, or SKYNET_EDEAD when time_cs <= 0 and
 * handle is dead. Thread-safe.
 */
int skynet_timeout(uint32_t handle, int time_cs, int session);

/* Remove the pending timer (handle, session): 0, or SKYNET_ENOENT. Thread-safe, O(1). */
int skynet_timer_cancel(uint32_t handle, int session);

/* Drop every pending timer of handle (it retired). Thread-safe. */
void skynet_timer_remove_service(uint32_t handle);

/* Timer thread: read the clock and advance the wheel one tick per elapsed cs. */
void skynet_updatetime(void);

/*
 * Virtual time: jump the clock to the next pending deadline and fire what
 * is due. Returns false (and does nothing) when no timer is pending.
 * Called by the scheduler only while every worker is idle.
 */
bool skynet_timer_advance_idle(void);

/* A monotonic clock reading in centiseconds. */
typedef uint64_t (*skynet_timer_clock_cb)(void);

/*
 * Replace the monotonic clock the timer reads (NULL restores
 * CLOCK_MONOTONIC), for tests that drive a fake clock. Call before
 * skynet_timer_init, while no other thread uses the timer.
 */
void skynet_timer_set_clock(skynet_timer_clock_cb clock);

/* Node start, UTC seconds. */
uint32_t skynet_starttime(void);

/* CPU time used by the calling thread, in microseconds. */
uint64_t skynet_thread_time(void);

/* Pending timers owned by handle, or in total when handle is 0. */
size_t skynet_timer_pending(uint32_t handle);

#endif
