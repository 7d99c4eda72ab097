/*
 * Service contexts and message dispatch.
 *
 * A context is one running service: its mailbox (handle, queue, session
 * counter, flow state: skynet_post.h; it comes first, so the layer below
 * can post to it and read its handle without calling up here), module
 * instance, callback and statistics. The text commands that read and
 * change contexts are in skynet_command.c. Contexts are reference counted:
 * the handle table holds one reference (dropped when the handle retires);
 * every thread that looks a handle up (skynet_handle_grab) holds one while
 * it uses the context. The last release closes the per-service log, calls
 * the module's release, and marks the queue released so that the next
 * worker to pop it drains the remaining messages with error replies.
 *
 * Retiring: this layer owns both the handle table and the services' timers,
 * so it is the one that ends a service (skynet_context_retire): the table
 * forgets the handle and its names and drops its reference, then the
 * service's pending timers are dropped. KILL, EXIT, ABORT, a failed launch
 * and the node's shutdown all come through it; the table itself never
 * calls the timer.
 *
 * Threads: a context's callback runs on one worker at a time (the queue
 * invariant of skynet_mq.c); CHECK_CALLING asserts it. cb/cb_ud may be
 * replaced by the callback itself, on the thread that runs it. Statistics
 * read by other threads (STAT from the service itself, the monitor's
 * endless flag) are ATOM_* fields.
 *
 * Payloads: after a callback returns 0, and when a message is dropped
 * unread, the payload is freed here, by the release function its type's
 * library installed (skynet_payload_set_release: a multicast delivery drops
 * its package reference, so a subscriber that dies with multicast messages
 * queued leaks nothing) or by skynet_free.
 *
 * Crash tombstones: every dispatched message is noted in the worker's
 * record (skynet_tombstone_enter/leave: a few stores, no lock), with the
 * context's label ("module param", set at launch) that the tombstone shows.
 *
 * Socket flow control (skynet_flow.c has the protocol): the worker that
 * ends a dispatch batch asks skynet_flow_relieve whether the service was
 * marked and has caught up, and then has the socket thread resume its
 * sockets; so does the last release of a marked context.
 *
 * Priority lane: a context whose name matches the config's priority_lane
 * patterns gets its queue's lane turned on before init (the service may
 * change it later through the PRIORITY command); the lane itself is the
 * queue's (skynet_mq.c). The dispatch loop needs nothing else: every pop
 * takes the lane first, so an expiry that arrives during a batch runs at the
 * batch's next message.
 *
 * Budgets (skynet_budget.c has the measures and the decision): each
 * context gets its budget at launch from the config's rules; after each
 * batch the worker copies the heap count the module pointed it at
 * (skynet_context_set_heap) and asks skynet_budget_step what to do; a
 * batch under throttle or kill also stops as soon as the CPU limit of the
 * window is passed.
 * - Throttle defers the queue: the worker keeps the queue out of the
 *   global queue (it stays marked in_global, so pushes do not schedule it)
 *   and sets a wake timer (skynet_timer_wake) for the end of the window;
 *   the wake pushes it back at the tail of the global queue, behind every
 *   queue that waited meanwhile. Fairness: a throttled service gets at most
 *   its budget (plus one message) per window and then waits its turn like
 *   anyone; the others never wait for it. `parked` says who owns the
 *   deferred queue: the wake, or a retire that comes first (it pushes the
 *   queue back so the next pop drains it with errors); the one that
 *   exchanges it from 1 to 0 pushes. A worker parks only while the handle
 *   is alive, checked after it set parked (see park_queue).
 * - Kill retires the service like KILL: queued messages are answered with
 *   errors as the queue drains, and snlua's last will answers the requests
 *   it had begun (lualib-src/kernel/init.c); the launcher is told as it is
 *   of a failed start (tell_launcher), so a launch in progress fails too.
 *
 * Wake-ups: while a worker runs a message, the queues it pushes wake
 * nobody; the worker takes them itself when the message ends, or pays the
 * wake then (dispatch_message_deferred; skynet_start.c gives the rule).
 *
 * Units: cpu_cost and cpu_start are microseconds of CLOCK_MONOTONIC (read
 * through the vDSO, no system call): the time a worker spent inside the
 * service's callback, which equals its CPU time unless the worker thread
 * was preempted.
 */
#include "skynet_server.h"

#include "skynet.h"
#include "skynet_budget.h"
#include "skynet_flow.h"
#include "skynet_handle.h"
#include "skynet_harbor.h"
#include "skynet_log.h"
#include "skynet_module.h"
#include "skynet_monitor.h"
#include "skynet_mq.h"
#include "skynet_post.h"
#include "skynet_socket_internal.h"
#include "skynet_timer.h"
#include "skynet_tombstone.h"
#include "skynet_trace.h"
#include "atomic.h"

#include <assert.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * A worker that ran this many messages in a row, each leaving work behind
 * for the next, wakes a sleeper to share the chain (dispatch_message_deferred).
 */
#define OWN_CHAIN_WAKE 8

struct skynet_context {
	struct skynet_mailbox box; // first: handle, queue, sessions, flow state (skynet_post.h)
	void *instance;            // owned by the module
	struct skynet_module *mod; // borrowed: modules live for the process
	void *cb_ud;
	skynet_cb cb;
	ATOM_POINTER logfile;            // FILE *, owned
	ATOM_U64 cpu_cost;               // us spent in the callback
	ATOM_U64 cpu_start;              // us when the running message started, 0 if none
	char result[SKYNET_RESULT_SIZE]; // skynet_command's result buffer
	ATOM_INT ref;
	ATOM_INT message_count;
	bool init;
	ATOM_INT endless;
	bool profile;
	bool reserved;                      // does not count as live (the logger)
	ATOM_INT calling;                   // debug: non-zero while a worker runs the callback
	char label[SKYNET_TOMBSTONE_LABEL]; // "module param", for crash tombstones
	struct skynet_budget_track budget;  // its limits and window (skynet_budget.h)
	const size_t *heap_src;             // borrowed from the module: its heap count, or NULL
	ATOM_SIZET heap_bytes;              // *heap_src as of the last batch end
	ATOM_INT parked;                    // 1: the queue is deferred by the throttle
};

_Static_assert(offsetof(struct skynet_context, box) == 0,
               "a context pointer is a pointer to its mailbox (skynet_post.h)");

struct skynet_node {
	ATOM_INT total;
	ATOM_SIZET released; // contexts freed so far (the monitor's hint to trim the heap)
	int init;
	pthread_key_t handle_key;
	bool profile;            // default on
	bool virtual_time;       // budget windows follow the virtual clock
	char *priority_patterns; // owned; the config's priority_lane, or NULL
};

static struct skynet_node G_NODE;

int
skynet_context_total(void) {
	return ATOM_LOAD(&G_NODE.total);
}

size_t
skynet_context_released(void) {
	return ATOM_LOAD(&G_NODE.released);
}

static void
context_inc(void) {
	ATOM_FINC(&G_NODE.total);
}

static void
context_dec(void) {
	ATOM_FDEC(&G_NODE.total);
}

uint32_t
skynet_current_handle(void) {
	if (G_NODE.init) {
		void *handle = pthread_getspecific(G_NODE.handle_key);
		return (uint32_t)(uintptr_t)handle;
	}
	return 0;
}

static uint64_t
clock_us(void) {
	return skynet_monotonic_ns() / 1000;
}

/* Release functions by message type (skynet_payload_set_release); NULL: skynet_free. */
static ATOM_POINTER RELEASE[256];

int
skynet_payload_set_release(int type, skynet_payload_release_cb cb) {
	if (type < 0 || type > 255 || type == PTYPE_SOCKET || cb == NULL)
		return SKYNET_EINVAL;
	if (ATOM_CAS(&RELEASE[type], NULL, (void *)cb) || ATOM_LOAD(&RELEASE[type]) == (void *)cb)
		return 0;
	return SKYNET_EINVAL;
}

/* Free a message payload once its message is done with, read or not (skynet.h). */
static void
free_payload(int type, void *data, size_t sz) {
	/*
	 * The release function was installed before the first message of its
	 * type was sent, and this message reached us through the queue's lock.
	 */
	skynet_payload_release_cb release = (skynet_payload_release_cb)ATOM_LOAD(&RELEASE[type & 0xff]);
	if (release != NULL)
		release(type, data, sz);
	else
		skynet_free(data);
}

void
skynet_message_discard(struct skynet_message *msg) {
	int type = skynet_message_type(msg->sz);
	if (type == PTYPE_SOCKET)
		skynet_socket_message_free(msg->data); // and the DATA buffer it owns
	else
		free_payload(type, msg->data, msg->sz & MESSAGE_TYPE_MASK);
}

struct drop_t {
	uint32_t handle;
};

static void
drop_message(struct skynet_message *msg, void *ud) {
	struct drop_t *d = ud;
	skynet_message_discard(msg);
	uint32_t source = d->handle;
	assert(source);
	// Tell the sender its message died with the service.
	if (msg->source != 0 && skynet_message_type(msg->sz) != PTYPE_ERROR)
		skynet_send(NULL, source, msg->source, PTYPE_ERROR, msg->session, NULL, 0);
}

#define PATTERN_SEP " \t,"

/*
 * True when word (len bytes, not terminated) matches one of the patterns of
 * list (each at most SKYNET_PRIORITY_PATTERN_MAX bytes: checked at
 * configuration). A name too long for the buffer matches no pattern.
 */
static bool
matches_any(const char *list, const char *word, size_t len) {
	char name[128];
	if (len == 0 || len >= sizeof(name))
		return false;
	memcpy(name, word, len);
	name[len] = '\0';
	char pattern[SKYNET_PRIORITY_PATTERN_MAX + 1];
	const char *p = list;
	for (;;) {
		p += strspn(p, PATTERN_SEP);
		size_t n = strcspn(p, PATTERN_SEP);
		if (n == 0)
			return false;
		memcpy(pattern, p, n);
		pattern[n] = '\0';
		if (fnmatch(pattern, name, 0) == 0)
			return true;
		p += n;
	}
}

/* Does the config ask for the priority lane of the service module name + param? */
static bool
wants_priority(const char *name, const char *param) {
	const char *list = G_NODE.priority_patterns;
	if (list == NULL)
		return false;
	if (matches_any(list, name, strlen(name)))
		return true;
	if (param == NULL)
		return false;
	param += strspn(param, " \t");
	return matches_any(list, param, strcspn(param, " \t"));
}

uint32_t
skynet_context_new(const char *name, const char *param) {
	struct skynet_module *mod = skynet_module_query(name);
	if (mod == NULL)
		return 0;
	void *inst = skynet_module_instance_create(mod);
	if (inst == NULL)
		return 0;
	struct skynet_context *ctx = skynet_calloc(1, sizeof(*ctx));
	ctx->mod = mod;
	ctx->instance = inst;
	ATOM_INIT(&ctx->ref, 2); // the handle table's, and ours until we are done with ctx
	ctx->profile = G_NODE.profile;
	snprintf(ctx->label, sizeof(ctx->label), "%s%s%s", name, param ? " " : "", param ? param : "");
	struct skynet_budget budget;
	skynet_budget_for(ctx->label, &budget);
	skynet_budget_track_init(&ctx->budget, &budget);
	uint32_t handle = skynet_handle_reserve();
	ctx->box.handle = handle;
	// Starts marked as scheduled: no worker runs the service before init succeeded.
	struct message_queue *queue = ctx->box.queue = skynet_mq_create(handle);
	if (wants_priority(name, param))
		skynet_mq_set_priority(queue, true);
	context_inc(); // before anyone can retire it: the count never dips to 0 meanwhile
	// Complete now: from here on other threads can grab it, send to it, retire it.
	skynet_handle_publish(handle, ctx);

	int r = skynet_module_instance_init(mod, inst, ctx, param);
	if (r == 0) {
		ctx->init = true;
		skynet_error(ctx, "LAUNCH %s %s", name, param ? param : "");
		/*
		 * Our reference goes last: once dropped, a KILL or ABORT on another
		 * thread may free ctx at any moment. NULL means the service retired
		 * during its own init (its queue waits for us, unscheduled).
		 */
		bool alive = skynet_context_release(ctx) != NULL;
		// From here on a worker may run (and free) the service.
		skynet_globalmq_push(queue);
		return alive ? handle : 0;
	}
	skynet_error(ctx, "error: launch %s FAILED", name);
	skynet_context_release(ctx);
	skynet_context_retire(handle); // and any timer init set
	struct drop_t d = {handle};
	skynet_mq_release(queue, drop_message, &d);
	return 0;
}

void
skynet_context_grab(struct skynet_context *ctx) {
	ATOM_FINC(&ctx->ref);
}

void
skynet_context_reserve(struct skynet_context *ctx) {
	// A reserved context (the logger) does not keep the node alive.
	ctx->reserved = true;
	context_dec();
}

/* End of a dispatch batch: resume the sockets paused for ctx once it caught up. */
static void
flow_check_mark(struct skynet_context *ctx) {
	if (skynet_flow_relieve(ctx))
		skynet_socket_flow_resume(ctx->box.handle);
}

static void
delete_context(struct skynet_context *ctx) {
	if (skynet_flow_is_marked(ctx))
		skynet_socket_flow_resume(ctx->box.handle); // nobody will relieve them any more
	FILE *f = (FILE *)ATOM_LOAD(&ctx->logfile);
	if (f)
		fclose(f);
	skynet_module_instance_release(ctx->mod, ctx->instance);
	skynet_mq_mark_release(ctx->box.queue);
	bool reserved = ctx->reserved;
	skynet_free(ctx);
	ATOM_FINC(&G_NODE.released);
	if (!reserved)
		context_dec();
}

struct skynet_context *
skynet_context_release(struct skynet_context *ctx) {
	if (ATOM_FDEC(&ctx->ref) == 1) {
		delete_context(ctx);
		return NULL;
	}
	return ctx;
}

int
skynet_context_retire(uint32_t handle) {
	struct skynet_context *ctx = skynet_handle_grab(handle);
	if (!skynet_handle_retire(handle)) {
		if (ctx)
			skynet_context_release(ctx);
		return 0;
	}
	skynet_timer_remove_service(handle);
	if (ctx != NULL) {
		// A deferred queue goes back now: its wake timer is gone (see the top comment).
		if (ATOM_XCHG(&ctx->parked, 0))
			skynet_globalmq_push(ctx->box.queue);
		skynet_context_release(ctx);
	}
	return 1;
}

/* Wake timer (timer thread): the deferred queue of handle goes back to the global queue. */
static void
budget_wake(uint32_t handle) {
	struct skynet_context *ctx = skynet_handle_grab(handle);
	if (ctx == NULL)
		return; // retired: the retire pushed it
	if (ATOM_XCHG(&ctx->parked, 0))
		skynet_globalmq_push(ctx->box.queue);
	skynet_context_release(ctx);
}

/*
 * Defer q (ctx's queue, held by this worker) for park_us. Returns false when
 * ctx retired meanwhile: then the caller keeps q and the next pop drains it.
 */
static bool
park_queue(struct skynet_context *ctx, uint64_t park_us) {
	uint32_t handle = ctx->box.handle;
	ATOM_STORE(&ctx->parked, 1);
	skynet_timer_wake(handle, (int)((park_us + 9999) / 10000));
	struct skynet_context *alive = skynet_handle_grab(handle);
	if (alive != NULL) {
		skynet_context_release(alive); // ours still holds ctx
		return true;
	}
	// Retired after we set parked: whoever exchanges it pushes the queue.
	return ATOM_XCHG(&ctx->parked, 0) == 0;
}

/* Log a budget decision; shape: "<severity>: budget: <what> key=value". */
static void
budget_log(struct skynet_context *ctx, const char *severity, const char *what,
           const struct skynet_budget_report *r) {
	const char *m = skynet_budget_measure_name(r->measure);
	const char *p = skynet_budget_policy_name(ctx->budget.limit.policy);
	switch (r->measure) {
	case BUDGET_CPU:
		skynet_error(ctx, "%s: budget: %s measure=cpu used_ms=%.1f limit_ms_per_s=%.1f policy=%s",
		             severity, what, r->used / 1000.0, r->limit / 1000.0, p);
		break;
	case BUDGET_MEMORY:
		skynet_error(ctx, "%s: budget: %s measure=memory used_mb=%.2f limit_mb=%.2f policy=%s",
		             severity, what, r->used / 1048576.0, r->limit / 1048576.0, p);
		break;
	default:
		skynet_error(ctx, "%s: budget: %s measure=%s used=%llu limit=%llu policy=%s", severity,
		             what, m, (unsigned long long)r->used, (unsigned long long)r->limit, p);
		break;
	}
}

/*
 * Node time for budget windows, us, never 0 (0: no window yet): the
 * monotonic clock, or the virtual clock (one tick late) in virtual time.
 */
static uint64_t
budget_now_us(void) {
	return G_NODE.virtual_time ? (skynet_now() + 1) * 10000 : clock_us();
}

/*
 * A service killed over budget leaves the launcher's list the way a failed
 * snlua start does: "ERROR <why>" as text from its address. A launch still
 * in progress then fails with that reason instead of waiting for ever.
 */
static void
tell_launcher(struct skynet_context *ctx, const struct skynet_budget_report *r) {
	char text[64];
	int n = snprintf(text, sizeof(text), "ERROR killed over its %s budget",
	                 skynet_budget_measure_name(r->measure));
	skynet_sendname(ctx, ctx->box.handle, ".launcher", PTYPE_TEXT, 0, text, (size_t)n);
}

/*
 * End of a batch: measure ctx against its budget and act. Returns true
 * when q was deferred (the worker no longer holds it).
 */
static bool
budget_check(struct skynet_context *ctx, struct message_queue *q, uint64_t end_us) {
	if (ctx->heap_src)
		ATOM_STORE_RELAXED(&ctx->heap_bytes, *ctx->heap_src);
	if (!(ATOM_LOAD_RELAXED(&ctx->budget.state) & BUDGET_STATE_WATCHED))
		return false;
	struct skynet_budget_sample s = {
	    .now_us = end_us != 0 && !G_NODE.virtual_time ? end_us : budget_now_us(),
	    .cpu_us = ATOM_LOAD_RELAXED(&ctx->cpu_cost),
	    .messages = (uint32_t)ATOM_LOAD_RELAXED(&ctx->message_count),
	    .lua_bytes = ATOM_LOAD_RELAXED(&ctx->heap_bytes),
	    .mqlen = ctx->budget.limit.queue != 0 ? skynet_mq_length(q) : 0, // it takes the queue lock
	};
	struct skynet_budget_report r;
	switch (skynet_budget_step(&ctx->budget, &s, &r)) {
	case VERDICT_LOG:
		budget_log(ctx, "warn", r.overruns > 1 ? "over budget again" : "over budget", &r);
		return false;
	case VERDICT_PARK:
		if (r.log)
			budget_log(ctx, "warn", "throttled, over budget", &r);
		return park_queue(ctx, r.park_us);
	case VERDICT_KILL:
		budget_log(ctx, "error", "killed, over budget", &r);
		skynet_context_retire(ctx->box.handle);
		tell_launcher(ctx, &r);
		return false;
	default:
		return false;
	}
}

void
skynet_context_retireall(void) {
	// A walk can miss a handle (the table grew, or a service was published
	// behind the cursor): repeat until a whole walk retires nothing.
	int n;
	do {
		n = 0;
		int cursor = 0;
		uint32_t handle;
		while ((handle = skynet_handle_next(&cursor)) != 0)
			n += skynet_context_retire(handle);
	} while (n > 0);
}

void
skynet_context_endless(uint32_t handle) {
	struct skynet_context *ctx = skynet_handle_grab(handle);
	if (ctx == NULL)
		return;
	ATOM_STORE(&ctx->endless, 1);
	skynet_context_release(ctx);
}

void
skynet_context_signal(uint32_t handle, int sig) {
	struct skynet_context *ctx = skynet_handle_grab(handle);
	if (ctx == NULL)
		return;
	skynet_module_instance_signal(ctx->mod, ctx->instance, sig);
	skynet_context_release(ctx);
}

bool
skynet_isremote(struct skynet_context *ctx, uint32_t handle, int *harbor) {
	bool ret = skynet_harbor_isremote(handle);
	if (harbor)
		*harbor = (int)(handle >> HANDLE_REMOTE_SHIFT);
	return ret;
}

/* The trace trailer of the message the calling worker dispatches now (skynet_trace.c). */
static __thread const struct skynet_trace *CURRENT_TRACE;

const struct skynet_trace *
skynet_message_trace(void) {
	return CURRENT_TRACE;
}

/* When the dispatch the calling worker runs now began (profiled only), else 0. */
static __thread uint64_t DISPATCH_NS;

uint64_t
skynet_dispatch_ns(void) {
	return DISPATCH_NS;
}

/* Run msg on ctx. Returns the clock (us) when the callback returned, 0 when not profiled. */
static uint64_t
dispatch_message(struct skynet_context *ctx, struct skynet_message *msg) {
	assert(ctx->init);
	int calling = ATOM_XCHG(&ctx->calling, 1);
	assert(calling == 0); // no service is ever entered by two threads
	(void)calling;
	pthread_setspecific(G_NODE.handle_key, (void *)(uintptr_t)(ctx->box.handle));
	int type = skynet_message_type(msg->sz);
	size_t sz = msg->sz & MESSAGE_TYPE_MASK;
	struct skynet_trace trace;
	if ((msg->sz & MESSAGE_TRACED) && skynet_trace_parse(msg->data, sz, &trace, &sz))
		CURRENT_TRACE = &trace; // the callback sees the payload alone
	skynet_tombstone_enter(ctx->box.handle, ctx->label, msg->source, type, msg->session, sz);
	FILE *f = (FILE *)ATOM_LOAD(&ctx->logfile);
	if (f)
		skynet_log_output(f, msg->source, type, msg->session, msg->data, sz);
	ATOM_FADD_RELAXED(&ctx->message_count, 1); // read only for STAT
	int reserve_msg;
	uint64_t end = 0;
	if (ctx->profile) {
		DISPATCH_NS = skynet_monotonic_ns();
		uint64_t start = DISPATCH_NS / 1000;
		ATOM_STORE_RELAXED(&ctx->cpu_start, start); // STAT time reads it on the same thread
		reserve_msg = ctx->cb(ctx, ctx->cb_ud, type, msg->session, msg->source, msg->data, sz);
		DISPATCH_NS = 0;
		end = clock_us();
		ATOM_FADD_RELAXED(&ctx->cpu_cost, end - start);
		ATOM_STORE_RELAXED(&ctx->cpu_start, 0);
	} else {
		reserve_msg = ctx->cb(ctx, ctx->cb_ud, type, msg->session, msg->source, msg->data, sz);
	}
	CURRENT_TRACE = NULL;
	if (!reserve_msg)
		free_payload(type, msg->data, msg->sz & MESSAGE_TYPE_MASK);
	skynet_tombstone_leave();
	ATOM_STORE(&ctx->calling, 0);
	return end;
}

/*
 * Messages this worker ran since it last found nothing to do (or last paid
 * a wake) that pushed work without waking anyone (dispatch_message_deferred).
 */
static __thread int OWN_CHAIN;

/*
 * dispatch_message for a worker's turn: what the message pushes into the
 * global queue wakes nobody while it runs (skynet_start.c's top comment).
 * The worker pays the wake-up it owes when the message ends: at once if its
 * turn goes on with this service's next message, or if this is the
 * OWN_CHAIN_WAKE-th message since it was idle that left work behind (a long
 * chain: a second worker may share it); otherwise it is about to pop the global
 * queue itself, which wakes another worker if more than one queue waits.
 */
static uint64_t
dispatch_message_deferred(struct skynet_monitor *sm, struct skynet_context *ctx,
                          struct skynet_message *msg, bool turn_goes_on) {
	skynet_mq_defer_wakeup(skynet_monitor_owing(sm));
	uint64_t end_us = dispatch_message(ctx, msg);
	if (skynet_mq_owed_wakeup() && (turn_goes_on || ++OWN_CHAIN >= OWN_CHAIN_WAKE)) {
		OWN_CHAIN = 0;
		skynet_mq_wakeup();
	}
	return end_us;
}

static struct message_queue *worker_turn(struct skynet_monitor *sm, struct message_queue *q,
                                         int weight);

struct message_queue *
skynet_context_message_dispatch(struct skynet_monitor *sm, struct message_queue *q, int weight) {
	struct message_queue *next = worker_turn(sm, q, weight);
	if (next == NULL)
		OWN_CHAIN = 0; // the worker goes idle: the chain ended
	return next;
}

static struct message_queue *
worker_turn(struct skynet_monitor *sm, struct message_queue *q, int weight) {
	if (q == NULL) {
		q = skynet_globalmq_pop();
		if (q == NULL)
			return NULL;
	}
	uint32_t handle = skynet_mq_handle(q);
	struct skynet_context *ctx = skynet_handle_grab(handle);
	if (ctx == NULL) {
		struct drop_t d = {handle};
		skynet_mq_release(q, drop_message, &d);
		return skynet_globalmq_pop();
	}
	int n = 1;
	uint64_t end_us = 0; // when the last message of the batch ended (profiled only)
	struct skynet_message msg;
	for (int i = 0; i < n; i++) {
		if (skynet_mq_pop(q, &msg)) {
			flow_check_mark(ctx);
			skynet_context_release(ctx);
			return skynet_globalmq_pop();
		}
		if (i == 0 && weight >= 0) {
			n = skynet_mq_length(q);
			n >>= weight;
		}
		int overload = skynet_mq_overload(q);
		if (overload)
			skynet_error(ctx, "error: May overload, message queue length = %d", overload);
		skynet_monitor_trigger(sm, msg.source, handle);
		if (ctx->cb == NULL)
			free_payload(skynet_message_type(msg.sz), msg.data, msg.sz & MESSAGE_TYPE_MASK);
		else
			end_us = dispatch_message_deferred(sm, ctx, &msg, i + 1 < n);
		skynet_monitor_trigger(sm, 0, 0);
		if (skynet_budget_cpu_over(&ctx->budget, ATOM_LOAD_RELAXED(&ctx->cpu_cost)))
			break; // over its CPU budget: let budget_check decide now
	}
	assert(q == ctx->box.queue);
	flow_check_mark(ctx);
	if (budget_check(ctx, q, end_us)) {
		skynet_context_release(ctx);
		return skynet_globalmq_pop();
	}
	if (skynet_mq_leave(q)) {
		/*
		 * Drained: let it go rather than hand it back empty, which would
		 * wake a worker only to find nothing in it.
		 */
		skynet_context_release(ctx);
		return skynet_globalmq_pop();
	}
	struct message_queue *nq = skynet_globalmq_pop();
	if (nq) {
		// Others wait: put this queue back and take the next one.
		skynet_globalmq_push(q);
		q = nq;
	}
	skynet_context_release(ctx);
	return q;
}

void
skynet_context_dispatchall(struct skynet_context *ctx) {
	struct skynet_message msg;
	struct message_queue *q = ctx->box.queue;
	/*
	 * Never pop an empty queue here: that would clear in_global while the
	 * queue may still be linked in the global queue.
	 */
	while (skynet_mq_length(q) > 0 && !skynet_mq_pop(q, &msg))
		dispatch_message(ctx, &msg);
	flow_check_mark(ctx);
}

/* ":hex" or ".name" to a handle; 0 (and a log line for global names) otherwise. */
uint32_t
skynet_queryname(struct skynet_context *context, const char *name) {
	switch (name[0]) {
	case ':':
		return (uint32_t)strtoul(name + 1, NULL, 16);
	case '.':
		return skynet_handle_findname(name + 1);
	}
	skynet_error(context, "error: Don't support query global name %s", name);
	return 0;
}

int
skynet_service_stats(struct skynet_service_stat *out, int cap) {
	int cursor = 0;
	int n = 0;
	uint32_t handle;
	while ((handle = skynet_handle_next(&cursor)) != 0) {
		struct skynet_context *ctx = skynet_handle_grab(handle);
		if (ctx == NULL)
			continue; // retired during the walk
		if (n < cap) {
			skynet_context_stat(ctx, &out[n]);
			out[n].timers = (uint32_t)skynet_timer_pending(handle);
		}
		n++;
		skynet_context_release(ctx);
	}
	return n;
}

char *
skynet_context_result(struct skynet_context *ctx) {
	return ctx->result;
}

void
skynet_context_stat(struct skynet_context *ctx, struct skynet_service_stat *st) {
	st->handle = ctx->box.handle;
	st->mqlen = skynet_mq_length(ctx->box.queue);
	st->messages = (uint32_t)ATOM_LOAD_RELAXED(&ctx->message_count);
	st->cpu_us = ATOM_LOAD_RELAXED(&ctx->cpu_cost);
	st->module = ctx->mod->name;
	st->heap_bytes = ATOM_LOAD_RELAXED(&ctx->heap_bytes);
	skynet_budget_rates(&ctx->budget, budget_now_us(), st->cpu_us, st->messages, &st->cpu_rate_us,
	                    &st->msg_rate);
	st->timers = 0;
	st->budget = ATOM_LOAD_RELAXED(&ctx->budget.state) |
	             (ATOM_LOAD(&ctx->parked) ? SKYNET_BUDGET_THROTTLED : 0);
}

void
skynet_context_set_heap(struct skynet_context *ctx, const size_t *bytes) {
	ctx->heap_src = bytes;
}

const char *
skynet_context_label(struct skynet_context *ctx) {
	return ctx->label;
}

int
skynet_context_budget(struct skynet_context *ctx, const char *text, char *err, size_t errsz) {
	struct skynet_budget b = ctx->budget.limit;
	int e = skynet_budget_parse(text, &b, err, errsz);
	if (e == 0)
		skynet_budget_track_set(&ctx->budget, &b);
	return e;
}

void
skynet_context_budget_get(struct skynet_context *ctx, struct skynet_budget *out) {
	*out = ctx->budget.limit;
}

uint64_t
skynet_context_running_us(struct skynet_context *ctx) {
	uint64_t start = ATOM_LOAD_RELAXED(&ctx->cpu_start);
	return ctx->profile && start ? clock_us() - start : 0;
}

bool
skynet_context_priority(struct skynet_context *ctx) {
	return skynet_mq_priority(ctx->box.queue);
}

bool
skynet_context_set_priority(struct skynet_context *ctx, bool on) {
	return skynet_mq_set_priority(ctx->box.queue, on);
}

bool
skynet_context_take_endless(struct skynet_context *ctx) {
	return ATOM_XCHG(&ctx->endless, 0) != 0;
}

bool
skynet_context_log_on(struct skynet_context *ctx, FILE *f) {
	return ATOM_CAS(&ctx->logfile, NULL, (void *)f);
}

bool
skynet_context_is_logging(struct skynet_context *ctx) {
	return ATOM_LOAD(&ctx->logfile) != NULL;
}

FILE *
skynet_context_log_off(struct skynet_context *ctx) {
	return (FILE *)ATOM_XCHG(&ctx->logfile, NULL);
}

/* Allocate a session, copy the payload unless donated, fold the type into sz. */
static void
filter_args(struct skynet_context *context, int type, int *session, void **data, size_t *sz) {
	int needcopy = !(type & PTYPE_TAG_DONTCOPY);
	int allocsession = type & PTYPE_TAG_ALLOCSESSION;
	bool traced = (type & PTYPE_TAG_TRACED) && !needcopy;
	type &= 0xff;
	if (allocsession) {
		assert(*session == 0);
		*session = skynet_context_newsession(context);
	}
	if (needcopy && *data) {
		char *msg = skynet_malloc(*sz + 1);
		memcpy(msg, *data, *sz);
		msg[*sz] = '\0';
		*data = msg;
	}
	*sz = skynet_message_sz(type, *sz) | (traced ? MESSAGE_TRACED : 0);
}

int
skynet_send(struct skynet_context *context, uint32_t source, uint32_t destination, int type,
            int session, void *data, size_t sz) {
	if ((sz & MESSAGE_TYPE_MASK) != sz) {
		skynet_error(context, "error: the message to :%08x is too large", destination);
		if (type & PTYPE_TAG_DONTCOPY)
			skynet_free(data);
		return SKYNET_ETOOBIG;
	}
	filter_args(context, type, &session, &data, &sz);
	if (source == 0)
		source = context->box.handle;
	if (destination == 0) {
		if (data) {
			skynet_error(context, "error: destination address can't be 0");
			skynet_free(data);
			return SKYNET_EDEAD;
		}
		return session;
	}
	if (skynet_harbor_isremote(destination)) {
		// Single-node build: there is no route to another harbor.
		skynet_free(data);
		return SKYNET_EDEAD;
	}
	struct skynet_message smsg = {
	    .source = source,
	    .session = session,
	    .data = data,
	    .sz = sz,
	};
	if (skynet_post(destination, &smsg)) {
		skynet_free(data);
		return SKYNET_EDEAD;
	}
	return session;
}

int
skynet_sendname(struct skynet_context *context, uint32_t source, const char *addr, int type,
                int session, void *data, size_t sz) {
	if (source == 0)
		source = context->box.handle;
	uint32_t des = 0;
	if (addr[0] == ':') {
		des = (uint32_t)strtoul(addr + 1, NULL, 16);
	} else if (addr[0] == '.') {
		des = skynet_handle_findname(addr + 1);
		if (des == 0) {
			if (type & PTYPE_TAG_DONTCOPY)
				skynet_free(data);
			return SKYNET_EDEAD;
		}
	} else {
		if ((sz & MESSAGE_TYPE_MASK) != sz) {
			skynet_error(context, "error: the message to %s is too large", addr);
			if (type & PTYPE_TAG_DONTCOPY)
				skynet_free(data);
			return SKYNET_ETOOBIG;
		}
		filter_args(context, type, &session, &data, &sz);
		struct skynet_message smsg = {
		    .source = source,
		    .session = session,
		    .data = data,
		    .sz = sz,
		};
		if (skynet_harbor_send(addr, &smsg) != 0) {
			skynet_free(data);
			return SKYNET_EDEAD;
		}
		return session;
	}
	return skynet_send(context, source, des, type, session, data, sz);
}

void
skynet_callback(struct skynet_context *context, void *ud, skynet_cb cb) {
	context->cb = cb;
	context->cb_ud = ud;
}

void
skynet_globalinit(void) {
	ATOM_INIT(&G_NODE.total, 0);
	ATOM_INIT(&G_NODE.released, 0);
	G_NODE.profile = true;
	if (pthread_key_create(&G_NODE.handle_key, NULL)) {
		fprintf(stderr, "pthread_key_create failed");
		exit(1);
	}
	G_NODE.init = 1;
	skynet_timer_set_wake(budget_wake);
	// The main thread gets a small negative id, like the other non-worker threads.
	skynet_initthread(THREAD_MAIN);
}

void
skynet_globalexit(void) {
	skynet_free(G_NODE.priority_patterns);
	G_NODE.priority_patterns = NULL;
	pthread_key_delete(G_NODE.handle_key);
	G_NODE.init = 0;
}

void
skynet_initthread(int m) {
	uintptr_t v = (uint32_t)(-m);
	pthread_setspecific(G_NODE.handle_key, (void *)v);
}

void
skynet_profile_enable(int enable) {
	G_NODE.profile = (bool)enable;
}

int
skynet_priority_configure(const char *patterns) {
	bool none = patterns == NULL || patterns[strspn(patterns, PATTERN_SEP)] == '\0';
	for (const char *p = none ? "" : patterns; *p != '\0';) {
		p += strspn(p, PATTERN_SEP);
		size_t n = strcspn(p, PATTERN_SEP);
		if (n > SKYNET_PRIORITY_PATTERN_MAX)
			return SKYNET_EINVAL;
		p += n;
	}
	skynet_free(G_NODE.priority_patterns);
	G_NODE.priority_patterns = none ? NULL : skynet_strdup(patterns);
	return 0;
}

void
skynet_budget_virtual_time(bool on) {
	G_NODE.virtual_time = on;
}
