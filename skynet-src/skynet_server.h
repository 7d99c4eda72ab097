#ifndef SKYNET_SERVER_H
#define SKYNET_SERVER_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Service contexts: creation, reference counting, message delivery and the
 * dispatch loop the worker threads run.
 */

#include "skynet.h"
#include "skynet_mq.h"
#include "skynet_post.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct skynet_monitor;

/* Thread ids for skynet_initthread: off-worker threads use -THREAD_xxx. */
#define THREAD_WORKER  0
#define THREAD_MAIN    1
#define THREAD_SOCKET  2
#define THREAD_TIMER   3
#define THREAD_MONITOR 4

/*
 * Create a service from module name + parameter; init runs in the calling
 * thread, and the service is scheduled once init returned 0. Returns the new
 * handle, or 0 when the module is missing, init failed (logged), or the
 * service was already gone when init returned (it exited, or another thread
 * killed it, during init). No context pointer is returned: once created, the
 * service may be freed by another thread at any moment, so a caller that
 * needs the context grabs it with skynet_handle_grab. Thread-safe.
 */
uint32_t skynet_context_new(const char *name, const char *param);
/* Take a reference on ctx. */
void skynet_context_grab(struct skynet_context *ctx);
/*
 * Keep the caller's reference (from skynet_handle_grab) for the process
 * lifetime, and stop counting ctx as a live service (the logger). Call before
 * the workers start.
 */
void skynet_context_reserve(struct skynet_context *ctx);
/* Drop a reference; frees ctx on the last one. Returns NULL if freed, else ctx. */
struct skynet_context *skynet_context_release(struct skynet_context *ctx);

/*
 * Retire handle's service, every part of it: its handle and names go from
 * the table (which drops its reference), and its pending timers are
 * dropped. Every path that ends a service (KILL, EXIT, ABORT, a failed
 * launch, shutdown) comes through here. Returns 1 if handle was
 * registered, 0 otherwise. Thread-safe.
 */
int skynet_context_retire(uint32_t handle);
/* Retire every service, including any published while it runs (ABORT, shutdown). */
void skynet_context_retireall(void);

/*
 * Free the payload of a message that will never be dispatched (its service
 * is gone, or the node stops): a socket event with the buffer it owns
 * (skynet_socket_message_free), any other type by its installed release
 * function (skynet_payload_set_release) or skynet_free. Thread-safe.
 */
void skynet_message_discard(struct skynet_message *msg);

/*
 * Worker step: run a batch from q (or from a queue popped from the global
 * queue when q is NULL) with the given weight. Returns the queue to run next
 * or NULL when the global queue was empty.
 */
struct message_queue *skynet_context_message_dispatch(struct skynet_monitor *sm,
                                                      struct message_queue *q, int weight);
/* Flag handle's service as stuck in an endless loop (read by STAT endless). */
void skynet_context_endless(uint32_t handle);
/* Call the module's signal hook of handle's service, from the calling thread. */
void skynet_context_signal(uint32_t handle, int sig);
/*
 * Run every queued message of ctx now, on the calling thread (flushes the
 * logger). Only while no worker runs: at boot failure and after shutdown.
 */
void skynet_context_dispatchall(struct skynet_context *ctx);
/* Number of live contexts. */
int skynet_context_total(void);
/* How many contexts were freed since the start (only grows). */
size_t skynet_context_released(void);

/*
 * For the text commands (skynet_command.c). ctx's result buffer,
 * SKYNET_RESULT_SIZE bytes: borrowed, valid while ctx lives; only the
 * thread running ctx writes it.
 */
#define SKYNET_RESULT_SIZE 32
char *skynet_context_result(struct skynet_context *ctx);
/* ctx's figures as STAT and skynet_service_stats report them. Thread-safe. */
void skynet_context_stat(struct skynet_context *ctx, struct skynet_service_stat *st);
/*
 * Microseconds the message running on ctx has taken so far; 0 when none
 * runs or profiling is off for ctx. Any thread (top reads it for the workers).
 */
uint64_t skynet_context_running_us(struct skynet_context *ctx);
/*
 * ctx's priority lane (skynet_mq.c): whether it is on, and turning it on or
 * off (returns the previous setting). Thread-safe.
 */
bool skynet_context_priority(struct skynet_context *ctx);
bool skynet_context_set_priority(struct skynet_context *ctx, bool on);
/* ctx's label, "module param" (truncated): borrowed, valid while ctx lives. */
const char *skynet_context_label(struct skynet_context *ctx);
struct skynet_budget;
/*
 * Change ctx's budget with "key=value ..." (skynet_budget_parse: the keys
 * given change). Returns 0, or SKYNET_EINVAL with a reason in err. From
 * the thread running ctx (its BUDGET command).
 */
int skynet_context_budget(struct skynet_context *ctx, const char *text, char *err, size_t errsz);
/* ctx's budget now. From the thread running ctx. */
void skynet_context_budget_get(struct skynet_context *ctx, struct skynet_budget *out);
/* Read and clear ctx's endless flag (skynet_context_endless). Thread-safe. */
bool skynet_context_take_endless(struct skynet_context *ctx);
/*
 * ctx's message log (skynet_log.h): install f unless one is set (false: one
 * was, f stays the caller's), tell whether one is set, take it away (the
 * caller closes it; NULL when none). Thread-safe.
 */
bool skynet_context_log_on(struct skynet_context *ctx, FILE *f);
bool skynet_context_is_logging(struct skynet_context *ctx);
FILE *skynet_context_log_off(struct skynet_context *ctx);

/* Process-wide setup (thread-local current handle, counters). Call once. */
void skynet_globalinit(void);
void skynet_globalexit(void);
/* Mark the calling thread as a THREAD_xxx (current handle -m). */
void skynet_initthread(int m);
/* Turn per-service CPU accounting on or off for services created later. */
void skynet_profile_enable(int enable);
/*
 * The config's priority_lane: service-name patterns (fnmatch(3) globs,
 * separated by blanks or commas; NULL or "" for none). A service created
 * later whose module name or first parameter word (a Lua service's file
 * name) matches one starts with its priority lane on (skynet_mq.c). Copies
 * patterns. Returns 0, or SKYNET_EINVAL (nothing set) when a pattern is
 * longer than SKYNET_PRIORITY_PATTERN_MAX bytes. Not thread-safe: call
 * before the first service is created.
 */
#define SKYNET_PRIORITY_PATTERN_MAX 63
int skynet_priority_configure(const char *patterns);
/* Budget windows follow the virtual clock (config timer = "virtual"). Before the workers start. */
void skynet_budget_virtual_time(bool on);

#endif
