/*
 * ticker: a bench-only C service (footprint_mode "cticks" of bench_footprint)
 * that sleeps a random 1..10 centiseconds in a loop, like
 * bench_footprint_tick but with no Lua: what the runtime alone (timer wheel,
 * queues, workers) costs per wake-up.
 *
 * Text messages: "go" starts the loop, "stop" ends it at the next wake-up,
 * and a request "count" is answered with the wake-ups of every ticker in the
 * process so far (decimal text). Data: struct ticker per service (its random
 * seed and whether it runs), WAKES for the process (relaxed atomic: only a
 * total is read, after the run). Units: centiseconds.
 */
#include "atomic.h"
#include "skynet.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ATOM_SIZET WAKES;

struct ticker {
	unsigned seed;
	bool running;
};

struct ticker *
ticker_create(void) {
	return skynet_calloc(1, sizeof(struct ticker));
}

void
ticker_release(struct ticker *t) {
	skynet_free(t);
}

static void
arm(struct skynet_context *ctx, struct ticker *t) {
	skynet_timeout_new(ctx, 1 + rand_r(&t->seed) % 10);
}

static bool
is_text(const void *msg, size_t sz, const char *word) {
	return sz == strlen(word) && memcmp(msg, word, sz) == 0;
}

static int
ticker_cb(struct skynet_context *ctx, void *ud, int type, int session, uint32_t source,
          const void *msg, size_t sz) {
	struct ticker *t = ud;
	if (type == PTYPE_RESPONSE && source == 0) {
		ATOM_FINC(&WAKES);
		if (t->running)
			arm(ctx, t);
	} else if (type == PTYPE_TEXT && is_text(msg, sz, "go")) {
		t->running = true;
		arm(ctx, t);
	} else if (type == PTYPE_TEXT && is_text(msg, sz, "stop")) {
		t->running = false;
	} else if (type == PTYPE_TEXT && is_text(msg, sz, "count") && session != 0) {
		char text[32];
		int n = snprintf(text, sizeof(text), "%zu", (size_t)ATOM_LOAD(&WAKES));
		skynet_send(ctx, 0, source, PTYPE_RESPONSE, session, text, (size_t)n);
	}
	return 0;
}

int
ticker_init(struct ticker *t, struct skynet_context *ctx, const char *parm) {
	const char *self = skynet_command(ctx, "REG", NULL); // ":%08x": seeds each ticker apart
	t->seed = self ? (unsigned)strtoul(self + 1, NULL, 16) : 1;
	skynet_callback(ctx, t, ticker_cb);
	return 0;
}
