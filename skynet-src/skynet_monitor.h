#ifndef SKYNET_MONITOR_H
#define SKYNET_MONITOR_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Endless-loop detection: each worker owns one monitor record. The worker
 * triggers it with (source, destination) before running a message and with
 * (0, 0) after; the monitor thread checks every record every 5 s.
 */

#include "atomic.h"

#include <stdint.h>

struct skynet_monitor;

struct skynet_monitor *skynet_monitor_new(void);
void skynet_monitor_delete(struct skynet_monitor *sm);
/* Worker thread: record the message about to run (or 0, 0 when done). */
void skynet_monitor_trigger(struct skynet_monitor *sm, uint32_t source, uint32_t destination);
/*
 * Monitor thread: if the record has not moved since the last check while a
 * message runs, log once for that message and return its destination (the
 * caller flags it endless with skynet_context_endless); else return 0. The
 * monitor calls nothing but skynet_error, so the context layer can call it.
 */
uint32_t skynet_monitor_check(struct skynet_monitor *sm);

/* The service the worker of sm runs now (0: none). Any thread; racy by nature. */
uint32_t skynet_monitor_running(struct skynet_monitor *sm);

/*
 * The worker's "owes a wake-up" flag: nonzero while the message it runs has
 * pushed a queue into the global queue without waking anyone (skynet_start.c
 * gives the rule). The worker sets and clears it through this slot
 * (skynet_mq_defer_wakeup); the timer thread reads it.
 */
ATOM_INT *skynet_monitor_owing(struct skynet_monitor *sm);

#endif
