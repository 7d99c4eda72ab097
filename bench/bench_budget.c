/*
 * The budget's cost on the dispatch path, without Lua or other threads:
 * two C services pass one message back and forth (each callback sends an
 * empty message to its peer) on this thread through
 * skynet_context_message_dispatch at weight -1, so every message is a batch
 * of its own and pays the whole per-batch budget check. One pair runs with
 * the default budget (on), the other with none (the rule "off"); the pairs
 * alternate, BENCH_RUNS times each, BENCH_ROUNDS messages a run, timed in
 * the thread's CPU time (the machine is shared). Prints the best run of each
 * as
 *   BENCH name=guard.dispatch_ns_budget_on / _off   (ns per message)
 *   BENCH name=guard.dispatch_overhead_pct          (best on / best off - 1)
 * About 1 s.
 */
#include "fixture.h"

#include "skynet_budget.h"
#include "skynet_monitor.h"

#include <stdio.h>
#include <time.h>

#define BENCH_ROUNDS 1000000
#define BENCH_RUNS   15

static uint32_t PEER[8]; // handle -> the other service of its pair
static long LEFT;        // messages still to pass in this run

static int
pass_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
        const void *msg, size_t sz) {
	if (--LEFT > 0)
		skynet_send(ctx, 0, PEER[skynet_context_handle(ctx)], PTYPE_TEXT, 0, NULL, 0);
	return 0;
}

static int
pass_init(void *inst, struct skynet_context *ctx, const char *parm) {
	skynet_callback(ctx, NULL, pass_cb);
	return 0;
}

/* This thread's CPU time: the time others' threads take the core for is not counted. */
static uint64_t
now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns per message of BENCH_ROUNDS messages between a and b. */
static double
run(struct skynet_monitor *sm, uint32_t a, uint32_t b) {
	LEFT = BENCH_ROUNDS;
	skynet_send(NULL, b, a, PTYPE_TEXT, 0, NULL, 0);
	uint64_t start = now_ns();
	struct message_queue *q = NULL;
	do {
		q = skynet_context_message_dispatch(sm, q, -1);
	} while (q != NULL);
	return (double)(now_ns() - start) / BENCH_ROUNDS;
}

static uint32_t
pair(const char *param, uint32_t *second) {
	uint32_t a = skynet_context_new("pass", param);
	uint32_t b = skynet_context_new("pass", param);
	PEER[a] = b;
	PEER[b] = a;
	*second = b;
	return a;
}

int
main(void) {
	skynet_globalinit();
	const struct skynet_module pass = {.name = "pass", .init = pass_init};
	fixture_setup(0, &pass, 1, true);
	char err[96];
	if (skynet_budget_rules("pass off: off", err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_budget: %s\n", err);
		return 1;
	}
	uint32_t on_b, off_b;
	uint32_t on_a = pair("on", &on_b); // no rule: the default budget
	uint32_t off_a = pair("off", &off_b);
	struct skynet_monitor *sm = skynet_monitor_new();
	double best_on = 1e9, best_off = 1e9;
	for (int r = 0; r < BENCH_RUNS; r++) {
		double on = run(sm, on_a, on_b);
		double off = run(sm, off_a, off_b);
		printf("bench: guard dispatch run %d budget on %.1f ns/msg, off %.1f ns/msg\n", r + 1, on,
		       off);
		if (on < best_on)
			best_on = on;
		if (off < best_off)
			best_off = off;
	}
	printf("BENCH name=guard.dispatch_ns_budget_on value=%.2f unit=ns/msg\n", best_on);
	printf("BENCH name=guard.dispatch_ns_budget_off value=%.2f unit=ns/msg\n", best_off);
	printf("BENCH name=guard.dispatch_overhead_pct value=%.2f unit=pct\n",
	       (best_on / best_off - 1) * 100);
	skynet_monitor_delete(sm);
	skynet_budget_rules_free();
	fixture_teardown();
	return 0;
}
