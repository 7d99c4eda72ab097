/*
 * The crash tombstone's cost on the dispatch path: one
 * skynet_tombstone_enter and one skynet_tombstone_leave per message, as
 * skynet_server.c's dispatch_message makes them, on one thread. Two
 * services alternate (the label is copied whenever the service changes,
 * the worst case of a ping-pong), then one service alone (no copy). Each
 * figure is the best of a few runs of BENCH_ROUNDS messages (the machine
 * is shared). Prints "BENCH name=... value=... unit=..." lines; about 1 s.
 */
#include "skynet_tombstone.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define BENCH_ROUNDS 20000000
#define BENCH_RUNS   5

static uint64_t
now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns per message; mask 1 alternates two services, 0 keeps one. */
static double
run(uint32_t mask) {
	static const char labels[2][SKYNET_TOMBSTONE_LABEL] = {"snlua ping", "snlua pong"};
	double best = 1e9;
	for (int r = 0; r < BENCH_RUNS; r++) {
		uint64_t start = now_ns();
		for (uint32_t i = 0; i < BENCH_ROUNDS; i++) {
			uint32_t svc = i & mask;
			skynet_tombstone_enter(8 + svc, labels[svc], 9 - svc, 10, (int)i, 64);
			skynet_tombstone_leave();
		}
		double ns = (double)(now_ns() - start) / BENCH_ROUNDS;
		if (ns < best)
			best = ns;
	}
	return best;
}

int
main(void) {
	printf("BENCH name=tombstone.record_pingpong_ns value=%.2f unit=ns/msg\n", run(1));
	printf("BENCH name=tombstone.record_same_ns value=%.2f unit=ns/msg\n", run(0));
	return 0;
}
