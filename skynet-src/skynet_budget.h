#ifndef SKYNET_BUDGET_H
#define SKYNET_BUDGET_H

/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * Per-service budgets: the limits (CPU time per second, Lua memory, queue
 * length), what happens past them (a policy), the rules of the config key
 * `budget` that give each service its limits at launch, and the decision
 * taken after each dispatch batch (skynet_budget_step). The context layer
 * (skynet_server.c) owns one struct skynet_budget_track per service and
 * carries the decision out: a log line, deferring the service's queue, or
 * retiring the service. docs/operations.md describes them for operators.
 */

#include "skynet.h"
#include "atomic.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What happens to a service past one of its limits. */
enum skynet_budget_policy {
	BUDGET_WARN = 0,     // a log line per period and the overrun counter
	BUDGET_THROTTLE = 1, // CPU: deferred until its window ends; memory, queue: as warn
	BUDGET_KILL = 2,     // retired, with a log line; its callers get errors
};

/* The measures, as bits of the state word and indexes of the counters. */
enum skynet_budget_measure {
	BUDGET_CPU = 0,
	BUDGET_MEMORY = 1,
	BUDGET_QUEUE = 2,
	BUDGET_MEASURES = 3,
};

/* The bits of skynet_budget_track.state (skynet.h's SKYNET_BUDGET_*), which other threads read. */
#define BUDGET_STATE_OVER_CPU     SKYNET_BUDGET_OVER_CPU    // passed in the current window
#define BUDGET_STATE_OVER_MEMORY  SKYNET_BUDGET_OVER_MEMORY // at the last batch end
#define BUDGET_STATE_OVER_QUEUE   SKYNET_BUDGET_OVER_QUEUE  // at the last batch end
#define BUDGET_STATE_WATCHED      SKYNET_BUDGET_WATCHED     // it has a limit at all
#define BUDGET_STATE_POLICY_SHIFT SKYNET_BUDGET_POLICY_SHIFT

/* Length of the window that CPU time is counted over, microseconds. */
#define BUDGET_WINDOW_US 1000000
/* A warn line is logged at most once per this long per service, microseconds. */
#define BUDGET_WARN_PERIOD_US 10000000

/* Limits; 0 means "not watched". */
struct skynet_budget {
	uint32_t cpu_us_per_s; // time in the service's callback per second (skynet_server.c)
	uint32_t queue;        // messages waiting
	uint64_t memory_bytes; // the Lua heap (snlua's allocator)
	int policy;            // enum skynet_budget_policy
};

/*
 * One service's budget and the window its CPU time is counted in. Only the
 * thread running the service touches it, except the ATOM_* fields, which
 * that thread writes and any thread reads (top, metrics).
 */
struct skynet_budget_track {
	struct skynet_budget limit;
	uint64_t warn_next_us; // no warn line before this
	uint32_t overruns;     // windows over a limit since the last warn line
	/*
	 * Written by the thread running the service, read by any (relaxed: a
	 * reader may pair a new start with an old cpu0 for one read, which
	 * skews one rate shown by top, nothing else).
	 */
	ATOM_INT state;       // BUDGET_STATE_* bits
	ATOM_U64 start_us;    // the window began (monotonic us); 0 before the first batch
	ATOM_U64 cpu0_us;     // the service's CPU time when it began
	ATOM_U64 messages0;   // its message count when it began
	ATOM_U32 cpu_rate_us; // CPU us per second over the last complete window
	ATOM_U32 msg_rate;    // messages per second over the last complete window
};

/* A service's figures at the end of a batch, for skynet_budget_step. */
struct skynet_budget_sample {
	uint64_t now_us;
	uint64_t cpu_us;   // its CPU time since launch
	uint64_t messages; // messages dispatched to it since launch
	size_t lua_bytes;  // its Lua heap (0: unknown)
	int mqlen;         // messages waiting
};

enum skynet_budget_verdict {
	VERDICT_NONE = 0,
	VERDICT_LOG,  // log the report, nothing else
	VERDICT_PARK, // log the report if report.log, defer the queue for report.park_us
	VERDICT_KILL, // log the report, retire the service
};

/* What skynet_budget_step decided, for the log line. */
struct skynet_budget_report {
	int measure;       // enum skynet_budget_measure that triggered it
	uint64_t used;     // CPU us this window, bytes, or messages
	uint64_t limit;    // the same unit
	uint64_t park_us;  // VERDICT_PARK: how long the queue is deferred
	uint32_t overruns; // VERDICT_LOG: windows over a limit since the last line
	bool log;          // a line is due
};

/*
 * Parse "key=value ..." (keys cpu_ms_per_s, memory_mb, queue, policy; the
 * word "off" clears every limit) into *b: the keys given change, the others
 * keep their value. On a bad key or value writes a reason to err (errsz
 * bytes), leaves *b untouched and returns SKYNET_EINVAL; else 0. Pure.
 */
int skynet_budget_parse(const char *text, struct skynet_budget *b, char *err, size_t errsz);

/* Write b as "cpu_ms_per_s=... memory_mb=... queue=... policy=..." into buf (sz bytes). */
void skynet_budget_format(const struct skynet_budget *b, char *buf, size_t sz);

/*
 * Install the rules of the config key `budget`: "glob: key=value ...;
 * glob: ..." (first matching glob wins; no match: the default budget).
 * NULL or "" keeps the default for everyone. Returns 0, or SKYNET_EINVAL
 * with a reason in err (the previous rules stay). Main thread, before the
 * workers start.
 */
int skynet_budget_rules(const char *rules, char *err, size_t errsz);
/* Drop the rules (the node stops). */
void skynet_budget_rules_free(void);

/* The budget of a service launched with label ("module param"). Thread-safe once rules are set. */
void skynet_budget_for(const char *label, struct skynet_budget *out);

/* Start tracking with limit b (now: no window yet). Sets the state word. */
void skynet_budget_track_init(struct skynet_budget_track *t, const struct skynet_budget *b);
/* Replace t's limits (the service's own BUDGET command). */
void skynet_budget_track_set(struct skynet_budget_track *t, const struct skynet_budget *b);

/*
 * True when the batch should stop: the CPU limit of the current window is
 * passed and the policy acts on it (throttle, kill; warn lets the batch run).
 */
static inline bool
skynet_budget_cpu_over(const struct skynet_budget_track *t, uint64_t cpu_us) {
	return t->limit.cpu_us_per_s != 0 && t->limit.policy != BUDGET_WARN &&
	       cpu_us - ATOM_LOAD_RELAXED(&t->cpu0_us) > t->limit.cpu_us_per_s;
}

/*
 * After a batch: roll the window when it is over, compare the sample with
 * the limits, and decide. Fills *r when the verdict is not VERDICT_NONE.
 * Counts the overruns, parks and kills in the node's counters. Pure but for
 * those counters and t; the caller passes the clock in s->now_us.
 */
enum skynet_budget_verdict skynet_budget_step(struct skynet_budget_track *t,
                                              const struct skynet_budget_sample *s,
                                              struct skynet_budget_report *r);

/*
 * The rates over the last complete window as seen at now_us, for top and
 * metrics: the window before the one in progress (per second of its
 * length), or the one in progress once it is over and not rolled yet, or 0
 * when the service ran in neither. The figures stay the same between two
 * reads unless the service ran or a window ended. cpu_now_us and
 * messages_now are the service's totals now. Any thread.
 */
void skynet_budget_rates(struct skynet_budget_track *t, uint64_t now_us, uint64_t cpu_now_us,
                         uint64_t messages_now, uint32_t *cpu_rate_us, uint32_t *msg_rate);

_Static_assert(BUDGET_MEASURES == 3, "skynet_budget_stat has three overrun counters");

/* "cpu", "memory", "queue" */
const char *skynet_budget_measure_name(int measure);
/* "warn", "throttle", "kill" */
const char *skynet_budget_policy_name(int policy);

#endif
