#ifndef SKYNET_H
#define SKYNET_H

/*
 * The public API. The rule: C services (service-src/, with snlua/) and Lua C
 * modules (lualib-src/, with its folders) include, of skynet-src/, only the
 * public headers on the line below; everything they need from the core is
 * declared there, and each of them opens its top comment with "Public
 * header". Every other skynet-src header is internal (its top comment
 * opens with "Internal") and may change with the core. test/node/test_layers.sh
 * enforces both halves. The public set:
 *   skynet.h         this file: messages, services, timers, statistics
 *   skynet_malloc.h  the allocator (pulled in here)
 *   skynet_socket.h  the network API and the PTYPE_SOCKET payload format
 *                    (the socket thread's side is skynet_socket_internal.h)
 *   socket_codes.h   the event types, socket kinds and limits the socket
 *                    library and skynet_socket.h share (pulled in there)
 *   atomic.h         the ATOM_* operations, the only way C code here
 *                    touches atomics (system headers only)
 *   rwlock.h         the reader-writer lock (pthread only; Lua C modules
 *                    that share data between services, such as skynet.stm)
 *   skynet_cond.h    the mutex + condition variable pair that aborts on
 *                    failure (pthread only; threads of Lua C modules, such
 *                    as skynet.db.sqlite's database threads)
 * The list, one line (test/node/test_layers.sh reads it):
 *
 * Public headers: skynet.h skynet_malloc.h skynet_socket.h socket_codes.h atomic.h rwlock.h skynet_cond.h
 *
 * Threads: every function here is safe to call from any thread unless its
 * comment says otherwise.
 */

#include "skynet_malloc.h"
#include "atomic.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The release, printed by `skynet --version`. */
#define SKYNET_VERSION "0.1.0"

/* Message types: the top 8 bits of a message's size field (skynet's numbers). */
#define PTYPE_TEXT           0
#define PTYPE_RESPONSE       1
#define PTYPE_MULTICAST      2
#define PTYPE_CLIENT         3
#define PTYPE_SYSTEM         4
#define PTYPE_HARBOR         5
#define PTYPE_SOCKET         6
#define PTYPE_ERROR          7
#define PTYPE_RESERVED_QUEUE 8
#define PTYPE_DEBUG          9
#define PTYPE_LUA            10
#define PTYPE_SNAX           11
#define PTYPE_TRACE          12
/* Replies of a database thread (skynet.db.sqlite) to the service that owns the db. */
#define PTYPE_SQLITE 13

/* Flags ORed into the type argument of skynet_send. */
#define PTYPE_TAG_DONTCOPY     0x10000
#define PTYPE_TAG_ALLOCSESSION 0x20000
/* data ends with a trace trailer made by skynet_trace_attach (with DONTCOPY). */
#define PTYPE_TAG_TRACED 0x40000

/* The one error enum. -1 and -2 are also what skynet's skynet_send returns. */
enum skynet_err {
	SKYNET_OK = 0,
	SKYNET_EDEAD = -1,   // no such service, or it has exited
	SKYNET_ETOOBIG = -2, // payload does not fit the 56-bit size field
	SKYNET_EINVAL = -3,  // malformed argument
	SKYNET_ENOENT = -4,  // nothing matches (name, timer, key)
	SKYNET_EIO = -5,     // operating system call failed
	SKYNET_EFULL = -6,   // a fixed-size table is full (socket ids)
	SKYNET_EBUSY = -7,   // already in progress (a profile being taken)
};

struct skynet_context;

/*
 * Log a formatted line through the logger service, on behalf of ctx (source
 * handle 0 when ctx is NULL). Dropped silently before the logger exists.
 */
void skynet_error(struct skynet_context *ctx, const char *msg, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Run a text command (skynet's command set). The result is borrowed: valid until the next
 * command on the same context; NULL means no result. Thread-safe, but a
 * context's result buffer is its own: call it only from the thread running
 * that context (or while no worker can).
 */
const char *skynet_command(struct skynet_context *ctx, const char *cmd, const char *parm);

/* Handle of ":hex" or ".name", or 0 when unknown (global names: 0, logged). */
uint32_t skynet_queryname(struct skynet_context *ctx, const char *name);

/*
 * Send a message from source (0 = ctx itself) to destination. type may carry
 * PTYPE_TAG_DONTCOPY (take ownership of data) and PTYPE_TAG_ALLOCSESSION
 * (session must be 0; allocate one). Without DONTCOPY, sz bytes are copied
 * and data stays the caller's. Returns the session (0 for a plain send), or
 * SKYNET_EDEAD / SKYNET_ETOOBIG; a donated buffer is freed on every failure.
 */
int skynet_send(struct skynet_context *ctx, uint32_t source, uint32_t destination, int type,
                int session, void *data, size_t sz);

/*
 * The trace a message carries from a traced coroutine to the service it
 * calls or sends to, inside one node: the sender's trace tag (tag_len bytes,
 * not NUL-terminated), its trace id (all zero: the receiver derives it from
 * the tag) and its span id (0: none, the receiver's span is a root). A tag
 * NULL is the trace id itself as 32 lower-case hex digits (a trace begun in
 * skywheel): the id travels alone (tag_len is then 0; the id is not zero).
 */
#define SKYNET_TRACE_TAG_MAX 1024
struct skynet_trace {
	const char *tag;
	size_t tag_len;
	uint8_t trace[16];
	uint64_t span;
};

/* The bytes skynet_trace_attach appends for a tag of tag_len bytes (0: a
 * NULL tag): the tag and SKYNET_TRACE_FIXED more (the layout: skynet_trace.c).
 * Inline: a traced coroutine's kernel asks at each resume. */
#define SKYNET_TRACE_FIXED 27
static inline size_t
skynet_trace_size(size_t tag_len) {
	return SKYNET_TRACE_FIXED + tag_len;
}

/*
 * Append t to the payload data (*sz bytes; donated: data is the caller's
 * allocation and is taken over, else copied) and return the buffer, *sz its
 * size: send it with PTYPE_TAG_DONTCOPY | PTYPE_TAG_TRACED. A donated
 * allocation with skynet_trace_size(t->tag_len) bytes to spare past *sz
 * (skynet_malloc_usable) gets the trailer in place and is returned itself;
 * otherwise the payload is copied to a new buffer. The receiver's callback
 * sees the payload alone (and skynet_message_trace). NULL, nothing taken,
 * when the tag is longer than SKYNET_TRACE_TAG_MAX.
 */
void *skynet_trace_attach(void *data, size_t *sz, bool donated, const struct skynet_trace *t);

/*
 * The trailer skynet_trace_attach would append for t, written to out
 * (skynet_trace_size of t's tag: room the caller gives). Returns its size,
 * 0 (nothing written) when the tag is longer than SKYNET_TRACE_TAG_MAX. For
 * a sender that sends many messages with one trace: encode once, then
 * skynet_trace_append to each.
 */
size_t skynet_trace_encode(const struct skynet_trace *t, void *out);

/*
 * skynet_trace_attach of a trailer encoded before (n bytes from
 * skynet_trace_encode), with one more thing known: cap, the bytes a
 * donated data holds (what its owner asked the allocator for), which
 * judges the room with no look at the allocator's header before data.
 * That header shares a cache line with the end of the chunk before it,
 * often a message another worker is reading: on two workers the look cost
 * about 1 % of a traced call's throughput. cap 0: unknown, the allocator
 * says. Never NULL.
 */
void *skynet_trace_append(void *data, size_t *sz, bool donated, size_t cap, const void *trailer,
                          size_t n);

/* Inside a callback: the trace its message carries, or NULL. Valid until
 * the callback returns; its tag points into the message. */
const struct skynet_trace *skynet_message_trace(void);

/* Inside a callback: skynet_monotonic_ns() when its dispatch began, read
 * anyway for the service's CPU time; 0 when the node does not profile
 * (config profile = false) or outside a callback. */
uint64_t skynet_dispatch_ns(void);

/* skynet_send to ":hex", ".name" (unknown: SKYNET_EDEAD) or a global name. */
int skynet_sendname(struct skynet_context *ctx, uint32_t source, const char *destination, int type,
                    int session, void *data, size_t sz);

/* True when handle lives on another node; *harbor (if not NULL) gets its id. */
bool skynet_isremote(struct skynet_context *ctx, uint32_t handle, int *harbor);

/*
 * Message callback. Return 0 and the framework frees msg after the call;
 * return non-zero to keep it (forward mode: free it or pass it on).
 */
typedef int (*skynet_cb)(struct skynet_context *ctx, void *ud, int type, int session,
                         uint32_t source, const void *msg, size_t sz);

/* Install (or replace, even from inside the callback) ctx's callback. */
void skynet_callback(struct skynet_context *ctx, void *ud, skynet_cb cb);

/* Handle of the service the calling worker runs now, or 0 off a worker. */
uint32_t skynet_current_handle(void);

/*
 * Work owed to the node by a thread outside the workers (a Lua C module's
 * thread, such as a skynet.db.sqlite database thread): add +1 for each job
 * whose answer the thread will post, -n once it has posted n answers (post
 * first, then subtract). While the sum is above zero the node does not
 * count as idle, so virtual time does not jump over the job. Thread-safe,
 * never blocks; costs one atomic add.
 */
void skynet_outside_add(int delta);

/* Centiseconds since node start; the virtual clock in virtual time. */
uint64_t skynet_now(void);

/*
 * CLOCK_MONOTONIC in nanoseconds, the one monotonic clock reader of the
 * project (read through the vDSO, no system call; real time even when the
 * node runs on virtual time). Thread-safe.
 */
static inline uint64_t
skynet_monotonic_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Arm a timer for ctx: a PTYPE_RESPONSE (source 0, no data) with the
 * returned new session arrives after time_cs centiseconds. When time_cs <= 0
 * it is queued at once, from ctx itself (source: ctx's handle), as an
 * ordinary message even with ctx's priority lane on. Call from the thread
 * running ctx (it allocates a session).
 */
int skynet_timeout_new(struct skynet_context *ctx, int time_cs);

/*
 * Arm a precise timer for ctx: like skynet_timeout_new, but the response
 * arrives once delay_us microseconds have passed (never earlier), within
 * the timer thread's wake-up latency rather than at a centisecond tick.
 * In virtual time: the whole centiseconds that cover delay_us.
 */
int skynet_timeout_us_new(struct skynet_context *ctx, int64_t delay_us);

/*
 * Cancel the pending timer that will answer ctx with session. Returns 0 when a
 * pending timer was removed (no message will be sent), SKYNET_ENOENT when
 * there is none (it fired already, or never existed). Thread-safe, O(1).
 */
int skynet_timeout_cancel(struct skynet_context *ctx, int session);

/*
 * Payload ownership. A message's payload belongs to whoever holds the
 * message; the core frees it in two places: after the receiving callback
 * returned 0, and when the message is dropped unread (its service retired,
 * or the node stopped). By default that is skynet_free. The library that
 * defines a message type's payload format may install a release function
 * for that type; the core then calls it at both places instead of
 * skynet_free, and it frees the payload and whatever the payload owns
 * (skynet.multicast.core installs PTYPE_MULTICAST's, which drops a
 * delivery's package reference; see lualib-src/lua-multicast.c). A send
 * that fails leaves the payload, with what it owns, to the sender as always.
 * PTYPE_SOCKET payloads follow skynet_socket.h's rule instead.
 */
typedef void (*skynet_payload_release_cb)(int type, void *data, size_t sz);

/*
 * Install cb as the release function of type (0..255; not PTYPE_SOCKET).
 * The first one installed for a type stays for the process: installing the
 * same cb again returns 0, another one SKYNET_EINVAL. Install it before the
 * first message of that type is sent. Thread-safe.
 */
int skynet_payload_set_release(int type, skynet_payload_release_cb cb);

/*
 * Node statistics for monitoring (the metrics service). Cheap to keep: the
 * timer's counters are written by the one thread advancing the wheel, the
 * per-service figures are the ones STAT already reads.
 */
struct skynet_service_stat {
	uint32_t handle;
	int mqlen;          // messages waiting in its queue
	uint64_t messages;  // messages dispatched to it (STAT "message")
	uint64_t cpu_us;    // time spent in its callback (STAT "cpu"), microseconds
	const char *module; // borrowed: its C module's name ("snlua", "logger"), lives for the process
	/* For top (docs/operations.md); rates are over the last complete budget window (1 s). */
	uint64_t heap_bytes;  // its Lua heap as of its last batch (skynet_context_set_heap), 0: none
	uint32_t cpu_rate_us; // callback time per second
	uint32_t msg_rate;    // messages per second
	uint32_t timers;      // its pending timers (skynet_service_stats only; 0 from STAT)
	int budget;           // SKYNET_BUDGET_* bits, policy in bits 8..9
};

/* Bits of skynet_service_stat.budget: the service's budget state (docs/operations.md). */
#define SKYNET_BUDGET_OVER_CPU     0x01
#define SKYNET_BUDGET_OVER_MEMORY  0x02
#define SKYNET_BUDGET_OVER_QUEUE   0x04
#define SKYNET_BUDGET_THROTTLED    0x08
#define SKYNET_BUDGET_WATCHED      0x10
#define SKYNET_BUDGET_POLICY_SHIFT 8 // 0 warn, 1 throttle, 2 kill

/*
 * A module whose service keeps its own heap (snlua: the Lua state's byte
 * count) tells the core where the count is, once, from init. bytes is
 * borrowed: it must stay valid until the module's release; the core reads
 * it only on the thread running the service, after each dispatch batch,
 * for the memory budget and top. Call from the service's own thread.
 */
void skynet_context_set_heap(struct skynet_context *ctx, const size_t *bytes);

/* One worker thread, for top: the service it runs now and for how long. */
struct skynet_worker_stat {
	uint32_t handle;     // 0: idle
	uint64_t running_us; // time in the current message, 0 when idle (or profile is off)
	char label[48];      // the service's "module param", "" when idle
};

/*
 * Fill out[0..cap) with the workers in id order; returns the number of
 * workers (0 before the node runs). Thread-safe; a snapshot, racy by
 * nature (a worker may have moved on).
 */
int skynet_worker_stats(struct skynet_worker_stat *out, int cap);

/* Node-wide budget counters since start (docs/operations.md). Thread-safe. */
struct skynet_budget_stat {
	uint64_t overruns[3]; // windows over a limit: cpu, memory, queue
	uint64_t throttles;   // times a queue was deferred
	uint64_t kills;       // services retired over budget
};
void skynet_budget_stat(struct skynet_budget_stat *out);

/*
 * Fills out[0..cap) with the live services in handle order and returns how
 * many were found (more than cap: only cap were written; call again with a
 * bigger array). Thread-safe; services may come and go during the walk.
 */
int skynet_service_stats(struct skynet_service_stat *out, int cap);

#define SKYNET_TIMER_LATE_BUCKETS 10

/*
 * Timers: pending now, fired since start, and how late they fired: the time
 * from the start of their deadline tick until the timer thread dispatched
 * them, counted per bucket (bucket i holds lateness <= skynet_timer_late_le_us(i),
 * the last one everything above). Thread-safe; the figures are read without a
 * common lock, so fired and the bucket sum may differ by one batch.
 */
struct skynet_timer_stat {
	uint64_t pending;
	uint64_t fired;
	uint64_t late_sum_us;
	uint64_t late[SKYNET_TIMER_LATE_BUCKETS];
	uint64_t last_late_us; // lateness of the most recent batch fired (the timer thread's lag)
};
void skynet_timer_stat(struct skynet_timer_stat *out);

/* Upper bound of lateness bucket i in microseconds (0 for the last, unbounded one). */
uint32_t skynet_timer_late_le_us(int i);

/*
 * Crash tombstones (docs/tombstones.md). A C service that hosts an
 * interpreter (snlua) registers a stack writer once. When a fatal signal
 * hits a thread while it runs a service, the node's signal handler calls
 * the writer on that thread, inside the handler, to add the stack of the
 * code that thread was running. The writer must be async-signal-safe: it
 * only reads memory (never a state another thread may be running), takes
 * no lock, allocates nothing, uses no stdio; it appends its text with
 * skynet_tombstone_puts and skynet_tombstone_putint (both safe there), one
 * line per frame, each indented by four spaces. out is borrowed for the
 * call. Registering replaces the writer; thread-safe.
 */
struct skynet_tombstone_out;
typedef void (*skynet_tombstone_stack_cb)(struct skynet_tombstone_out *out);
void skynet_tombstone_set_stack(skynet_tombstone_stack_cb cb);
void skynet_tombstone_puts(struct skynet_tombstone_out *out, const char *s);
void skynet_tombstone_putint(struct skynet_tombstone_out *out, long long v);

/*
 * The sampling profiler (docs/ref/skynet.profiler.md; the design is at the
 * top of skynet-src/skynet_profiler.c). One profile at a time per node.
 *
 * A C service that hosts an interpreter (snlua) registers a sampler once:
 * while a profile runs, the node interrupts a worker that runs a wanted
 * service with a signal, and calls the sampler on that worker, inside the
 * signal handler. The sampler must be async-signal-safe: it only arranges
 * for the code it runs to record its stack soon (a Lua hook), and checks
 * skynet_profiler_wants first. The stack is recorded later, outside the
 * handler, with skynet_profiler_record. Registering replaces the sampler.
 */
#define SKYNET_PROFILER_HZ_MAX 1000
typedef void (*skynet_profiler_sample_cb)(void);
void skynet_profiler_set_sampler(skynet_profiler_sample_cb cb);

/*
 * While a profile runs and wants samples of handle, its ticket (never 0), which the sampler
 * keeps with the sample it owes; else 0. Async-signal-safe (atomic loads).
 */
uint32_t skynet_profiler_wants(uint32_t handle);

/*
 * Count one sample of stack (len bytes, borrowed; folded: "name :addr;frame;...;frame",
 * root first, no newline), asked for under ticket, which took its worker cost_ns to take
 * (summed in the status, so that the profiler's own cost is known). Dropped unless the profile of that
 * ticket still runs (a sample that comes late, after a stop and a new start, is not the new
 * profile's). Takes a mutex: never from a signal handler.
 */
void skynet_profiler_record(uint32_t ticket, const char *stack, size_t len, uint64_t cost_ns);

/*
 * Start a profile of the service target (0: every service) at hz samples a second
 * (1 to SKYNET_PROFILER_HZ_MAX). Returns 0, SKYNET_EINVAL for a bad hz, SKYNET_EBUSY when a
 * profile runs already, SKYNET_EIO when the signal or the thread cannot be had (logged).
 */
int skynet_profiler_start(uint32_t target, int hz);

/*
 * Stop the running profile, keep it as the last one, and return its folded text (one line
 * "stack count" per stack, most samples first; owned by the caller, skynet_free; *len bytes
 * plus a NUL) and in *samples (may be NULL) the samples taken. NULL when no profile runs.
 */
char *skynet_profiler_stop(size_t *len, uint64_t *samples);

/* A copy of the last stopped profile's text (owned by the caller), as stop; NULL if none. */
char *skynet_profiler_last(size_t *len, uint64_t *samples);

struct skynet_profiler_status {
	bool running;
	uint32_t target; // of the running profile (or the last one started); 0: every service
	int hz;
	uint64_t elapsed_ns; // since start, 0 when not running
	uint64_t ticks;      // sampler wake-ups
	uint64_t signals;    // workers interrupted
	uint64_t samples;    // stacks recorded
	uint64_t cost_ns;    // time the workers spent taking them (the walks and the records)
	size_t stacks;       // distinct stacks so far
	bool has_last;       // a stopped profile is kept
	uint64_t last_samples;
};
void skynet_profiler_status(struct skynet_profiler_status *st);

#endif
