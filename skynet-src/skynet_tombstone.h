#ifndef SKYNET_TOMBSTONE_H
#define SKYNET_TOMBSTONE_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Crash tombstones: on SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT the node
 * writes one text file (docs/tombstones.md) and then dies of the same
 * signal. The workers feed it: each message a worker dispatches is noted
 * in that worker's ring of recent messages. The public half (a service's
 * stack writer, skynet_tombstone_set_stack) is in skynet.h.
 */

#include <stddef.h>
#include <stdint.h>

/* Bytes of a service's label ("module param") kept for the tombstone, with its NUL. */
#define SKYNET_TOMBSTONE_LABEL 48

/* Readers of the node's counters; each must be async-signal-safe (an atomic load). */
struct skynet_tombstone_counters {
	int (*services)(void);    // live services
	size_t (*released)(void); // services freed since the start
};

/*
 * Install the fatal-signal handlers. dir is the folder the file goes to
 * (config tombstone_dir; NULL or "" for the working folder), logfile the
 * logger's file or NULL (the handler appends its one line there as well as
 * to stderr); both are copied. counters is copied. Prints the reason to
 * stderr and returns SKYNET_EINVAL when the path is too long, else 0. In a
 * sanitizer build it installs nothing (the sanitizer's own report is the
 * better record there) and returns 0. Main thread, once, before the
 * workers start.
 */
int skynet_tombstone_init(const char *dir, const char *logfile,
                          const struct skynet_tombstone_counters *counters);

/*
 * Worker: a message from source (type, session, sz bytes) starts on the
 * service handle, whose label is label (borrowed, read only while the
 * call runs: the caller holds the service). Records it in the calling
 * thread's ring. Cheap: no lock, no system call after the thread's first.
 */
void skynet_tombstone_enter(uint32_t handle, const char *label, uint32_t source, int type,
                            int session, size_t sz);
/* Worker: the message started by the last skynet_tombstone_enter is done. */
void skynet_tombstone_leave(void);

/*
 * For the sampling profiler (skynet_profiler.c): how many dispatching
 * threads have a record (indexes 0 to that - 1), and what record i says now:
 * the handle it runs (0: none) and, in *tid, its kernel thread id (0 while
 * the record is being claimed). Any thread; relaxed loads, so the answer
 * may be one message old.
 */
int skynet_tombstone_threads(void);
uint32_t skynet_tombstone_running(int i, long *tid);

#endif
