#ifndef SKYNET_START_H
#define SKYNET_START_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Node boot and the thread model: set up every subsystem,
 * launch the logger and the bootstrap service, run the worker, timer and
 * monitor threads until the last service exits, then tear everything down.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct skynet_config {
	int thread;              // worker count, 1..1024
	int harbor;              // node id, 0..255
	bool profile;            // per-service CPU accounting
	bool virtual_time;       // config timer = "virtual"
	bool malloc_trim;        // return freed heap pages to the system (default on)
	const char *daemon;      // pid file, or NULL
	const char *module_path; // cpath
	const char *bootstrap;   // command line of the first service
	const char *logger;      // logger parameter (file), or NULL for stdout
	const char *logservice;  // module of the log service
	int flow_high_msgs;      // socket flow control: mailbox messages (0: off)
	size_t flow_high_bytes;  // socket flow control: mailbox bytes (0: off)
	size_t output_limit;     // bytes queued on a connection before it is closed (0: none)
	int listen_backlog;      // backlog of a listen that gives none (0: the default, 511)
	const char *budget;      // the per-service budget rules (skynet_budget.h), or NULL
};

/*
 * Run the node. Returns the process's exit status once it stopped: 0, or the
 * status a service gave to "ABORT status" (a failed start script aborts with 1).
 * Exits the process with 1 on a boot failure.
 */
int skynet_start(struct skynet_config *config);

/* How many times a sleeping worker was signalled since the process started. */
uint64_t skynet_worker_wakeups(void);
/* How many of those the timer thread made for a message's owed wake-up. */
uint64_t skynet_worker_nudges(void);

#endif
