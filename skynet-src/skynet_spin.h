/*
 * Internal: skynet-src/ (and its tests) only, never service-src/ or lualib-src/.
 *
 * The gate that decides whether an idle worker spins (skynet_start.c's top
 * comment gives the rule and why). One gate per worker, touched only by
 * that worker: no locking.
 *
 * hits is the average outcome of the worker's spins, in 1/SPIN_HIT_ONE (a
 * spin that found work with its core kept counts SPIN_HIT_ONE, any other
 * 0), each new outcome weighted 1/8. The gate is open while hits >=
 * SPIN_HIT_GATE; closed, it still lets every SPIN_PROBE-th idle turn spin.
 */
#ifndef SKYNET_SPIN_H
#define SKYNET_SPIN_H

#include <stdbool.h>

#define SPIN_HIT_ONE  1024
#define SPIN_HIT_GATE (SPIN_HIT_ONE / 2)
#define SPIN_PROBE    8

struct spin_gate {
	int hits;      // 0..SPIN_HIT_ONE
	unsigned idle; // idle turns met with the gate closed
};

static inline void
spin_gate_init(struct spin_gate *g) {
	g->hits = SPIN_HIT_ONE; // spin until the outcomes say otherwise
	g->idle = 0;
}

/* An idle turn: may the worker spin? */
static inline bool
spin_gate_allows(struct spin_gate *g) {
	return g->hits >= SPIN_HIT_GATE || ++g->idle % SPIN_PROBE == 0;
}

/* A spin ended: found work or not, and whether its core was taken away. */
static inline void
spin_gate_record(struct spin_gate *g, bool found, bool away) {
	int outcome = found && !away ? SPIN_HIT_ONE : 0;
	g->hits += (outcome - g->hits) / 8;
}

#endif
